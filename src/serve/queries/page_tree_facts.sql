-- What the loop tree shows of each loop of root {root} beside its money
-- (GET /api/tree): its envelopes per verdict, and from the counted ones
-- (second versions and malformed rows aside, as runtime_loops) its
-- LoopFinished outcome and its convergence warnings. Read by primary key for
-- the loops loop_roots places under the root.
-- param: root String 'loop-root'
SELECT loop_id, verdict, count() AS envelopes,
       argMaxIf(outcome, seq, kind_class = 'LoopFinished' AND verdict NOT IN ('malformed', 'fork')) AS finished_outcome,
       countIf(kind_class = 'ConvergenceWarning' AND verdict NOT IN ('malformed', 'fork')) AS warnings
FROM envelopes FINAL
WHERE loop_id IN (SELECT loop_id FROM loop_roots FINAL WHERE root_loop_id = {root:String})
GROUP BY loop_id, verdict
ORDER BY loop_id, verdict;
