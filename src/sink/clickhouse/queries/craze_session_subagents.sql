-- Sub-agents per craze session by final status (view craze_subagents).
SELECT
    session_id,
    countIf(outcome = 'completed') AS completed,
    countIf(outcome = 'failed') AS failed,
    countIf(outcome = 'cancelled') AS cancelled,
    countIf(outcome = 'abandoned') AS abandoned
FROM craze_subagents
GROUP BY session_id;
