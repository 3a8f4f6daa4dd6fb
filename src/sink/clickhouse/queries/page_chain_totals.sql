-- The page's chain cards (GET /api/overview), from one read of the envelopes
-- whose verdict is not ok (PREWHERE: only the verdict column is read for
-- every envelope), deduplicated by the table's key as FINAL would:
-- - violations: all of them, as the chain_violations view has them;
-- - the unverified model cost: ModelCalled among them whose own link did not
--   verify (mismatch, fork: a second version, regression), timed at or after
--   {since} (Unix seconds), a fork's replays aside (ForkedFrom found by a
--   PREWHERE on the kind), as unverified_spend counts them; filtered by model
--   and loop name (loop_roots), '' for all.
-- One JOIN per level (18.16 has one per SELECT); the aggregates are named
-- apart from the columns, or 18.16 reads its PREWHERE on the aggregate. Cost is Decimal128 in two
-- pieces (docs/spend.md "Exact money text").
-- param: since UInt32 1762041600
-- param: model String ''
-- param: name String ''
SELECT toString(violations) AS violations_text, toString(unverified_calls) AS calls_text,
       decimal_text(cost) AS cost_text
FROM
(
    SELECT count() AS violations, countIf(counted) AS unverified_calls, sumIf(toDecimal128(flag_cost, 0), counted) AS cost
    FROM
    (
        SELECT flag_cost,
               flag_verdict IN ('mismatch', 'fork', 'regression') AND flag_kind = 'ModelCalled' AND flag_time >= toDateTime({since:UInt32})
                 AND seq > replayed_to
                 AND ({model:String} = '' OR model = {model:String})
                 AND ({name:String} = '' OR loop_name = {name:String}) AS counted
        FROM
        (
            SELECT loop_id, seq, flag_verdict, flag_kind, flag_cost, model, flag_time, replayed_to
            FROM
            (
                SELECT loop_id, seq, any(verdict) AS flag_verdict, any(kind_class) AS flag_kind, any(cost_pico) AS flag_cost,
                       any(model_name) AS model, any(time) AS flag_time
                FROM envelopes
                PREWHERE verdict != 'ok'
                GROUP BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset
            ) AS flagged
            ANY LEFT JOIN
            (
                SELECT loop_id, max(fork_at_seq) AS replayed_to
                FROM envelopes
                PREWHERE kind_class = 'ForkedFrom'
                WHERE verdict NOT IN ('malformed', 'fork')
                GROUP BY loop_id
            ) AS forks USING loop_id
        ) AS forked
        ANY LEFT JOIN (SELECT loop_id, loop_name FROM loop_roots FINAL) AS roots USING loop_id
    ) AS judged
) AS sums;
