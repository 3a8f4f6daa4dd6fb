-- The verified head of each loop: the row with the highest seq among those that
-- moved the chain forward (ok, mismatch, gap, time_regression; a fork, a
-- regression or a malformed record never moves it).
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
SELECT loop_id, seq, hash, computed_hash, time_text, verdict
FROM envelopes
WHERE loop_id IN {loop_ids:Array(String)}
  AND verdict IN ('ok', 'mismatch', 'gap', 'time_regression')
ORDER BY loop_id, seq DESC
LIMIT 1 BY loop_id;
