-- The time (ms) of each of these loops' newest envelope, whatever its kind:
-- when it was last heard from.
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
SELECT loop_id, toUInt64(max(time)) * 1000 AS last_ms
FROM envelopes
WHERE loop_id IN {loop_ids:Array(String)} AND verdict NOT IN ('malformed', 'fork')
GROUP BY loop_id;
