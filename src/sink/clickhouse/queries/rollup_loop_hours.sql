-- The hours (Unix seconds of their start) in which these loops made model calls.
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
SELECT DISTINCT toUInt32(toStartOfHour(time)) AS h
FROM envelopes
WHERE loop_id IN {loop_ids:Array(String)} AND kind_class = 'ModelCalled';
