-- The children these loops reported Stuck (SubAgentCompleted.outcome_kind),
-- a fork's replayed reports aside (they are its source's).
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
SELECT DISTINCT child_loop_id AS child
FROM
(
    SELECT loop_id, seq, child_loop_id
    FROM envelopes FINAL
    WHERE loop_id IN {loop_ids:Array(String)}
      AND kind_class = 'SubAgentCompleted' AND outcome = 'Stuck' AND child_loop_id != '' AND verdict NOT IN ('malformed', 'fork')
) AS reports
include(replayed_to_join)
WHERE seq > replayed_to;
