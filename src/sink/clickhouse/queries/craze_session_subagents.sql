-- Sub-agents per craze session by final status: per (incarnation, id, attempt)
-- the last `finished` change by seq wins; spawned and never finished is
-- abandoned. Replayed events and sub-agent transcripts excluded.
SELECT
    session_id,
    countIf(finished > 0 AND status = 'completed') AS completed,
    countIf(finished > 0 AND status = 'failed') AS failed,
    countIf(finished > 0 AND status = 'cancelled') AS cancelled,
    countIf(finished = 0) AS abandoned
FROM
(
    SELECT
        session_id, incarnation, subagent_id, subagent_attempt,
        countIf(subagent_change = 'finished') AS finished,
        argMaxIf(subagent_status, seq, subagent_change = 'finished') AS status
    FROM craze_events FINAL
    WHERE subagent_id != '' AND replayed = 0 AND agent = '' AND verdict != 'malformed'
    GROUP BY session_id, incarnation, subagent_id, subagent_attempt
)
GROUP BY session_id;
