-- Turns per craze session by outcome (view craze_turns: each turn once, by its last ending).
SELECT
    session_id,
    countIf(outcome = 'done') AS done,
    countIf(outcome = 'failed') AS failed,
    countIf(outcome = 'cancelled') AS cancelled
FROM craze_turns
GROUP BY session_id;
