-- Turns per craze session by outcome: each (incarnation, turn id) counts once,
-- by its last ending; replayed events and sub-agent transcripts excluded.
SELECT
    session_id,
    countIf(outcome = 'done') AS done,
    countIf(outcome = 'failed') AS failed,
    countIf(outcome = 'cancelled') AS cancelled
FROM
(
    SELECT session_id, incarnation, turn_id, argMax(turn_outcome, seq) AS outcome
    FROM craze_events FINAL
    WHERE turn_outcome != '' AND replayed = 0 AND agent = '' AND verdict != 'malformed'
    GROUP BY session_id, incarnation, turn_id
)
GROUP BY session_id;
