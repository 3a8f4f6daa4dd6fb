-- The envelopes of these loops the loop rules read (src/alerts/evaluate.ts):
-- starts and finishes, interruptions, convergence warnings (with their reason
-- and count from the payload), human requests and answers (their action_id),
-- each with its time in ms and the newest time of the loop. Deduplicated,
-- malformed rows and second versions aside; a fork's replayed envelopes are
-- its source's, except LoopStarted (the fork is started as well).
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
SELECT loop_id, seq, kind_class, toUInt64(time) * 1000 AS at_ms, outcome, detector,
       visitParamExtractString(payload, 'reason') AS warning_reason,
       visitParamExtractInt(payload, 'count') AS warning_count,
       visitParamExtractString(payload, 'action_id') AS human_action
FROM
(
    SELECT loop_id, seq, kind_class, time, outcome, detector, payload
    FROM envelopes FINAL
    WHERE loop_id IN {loop_ids:Array(String)}
      AND kind_class IN ('LoopStarted', 'LoopFinished', 'Interrupted', 'Resumed', 'ConvergenceWarning', 'HumanRequested', 'HumanResponded')
      AND verdict NOT IN ('malformed', 'fork')
) AS events
include(replayed_to_join)
WHERE seq > replayed_to OR kind_class = 'LoopStarted';
