-- Every seq stored for these loops (malformed rows and second versions
-- aside): whether a gap has been filled since.
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
SELECT DISTINCT loop_id, seq
FROM envelopes
WHERE loop_id IN {loop_ids:Array(String)} AND verdict NOT IN ('malformed', 'fork');
