-- Per craze session, costliest first: incarnations, exact spend and tokens as
-- text, unpriced reports, journal facts, models, first/last seen (views
-- craze_sessions, craze_turns, craze_subagents), with its turns by outcome
-- and its sub-agents by final status. A session without turns or sub-agents
-- gets zeros (ANY LEFT JOIN fills defaults). One JOIN per SELECT, nested,
-- because 18.16 takes no more; current versions want every joined subquery
-- aliased; the right-hand columns are prefixed so no name is on both sides.
-- `since` is Unix seconds, so no time zone is involved. Spend sorts as
-- Decimal128 (exact); ties by session id, byte order.
-- param: since UInt32 1740787200
-- param: limit UInt64 20
SELECT session_id, incarnations, cost_pico, input_tokens, output_tokens, reasoning_tokens,
       cache_read_tokens, cache_creation_tokens, unpriced_reports, models, provider, cwd,
       toString(first_seen) AS first_seen_text, toString(last_seen) AS last_seen_text,
       turns_done, turns_failed, turns_cancelled,
       subagents_completed, subagents_failed, subagents_cancelled, subagents_abandoned
FROM
(
    SELECT *
    FROM
    (
        SELECT session_id, incarnations, cost_pico, input_tokens, output_tokens, reasoning_tokens,
               cache_read_tokens, cache_creation_tokens, unpriced_reports, models, provider, cwd,
               first_seen, last_seen
        FROM craze_sessions
        WHERE last_seen >= toDateTime({since:UInt32})
    ) AS sessions
    ANY LEFT JOIN
    (
        SELECT
            session_id,
            countIf(outcome = 'done') AS turns_done,
            countIf(outcome = 'failed') AS turns_failed,
            countIf(outcome = 'cancelled') AS turns_cancelled
        FROM craze_turns
        GROUP BY session_id
    ) AS turns USING session_id
) AS with_turns
ANY LEFT JOIN
(
    SELECT
        session_id,
        countIf(outcome = 'completed') AS subagents_completed,
        countIf(outcome = 'failed') AS subagents_failed,
        countIf(outcome = 'cancelled') AS subagents_cancelled,
        countIf(outcome = 'abandoned') AS subagents_abandoned
    FROM craze_subagents
    GROUP BY session_id
) AS subagents USING session_id
ORDER BY toDecimal128(cost_pico, 0) DESC, session_id
LIMIT {limit:UInt64};
