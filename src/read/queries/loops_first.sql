-- The first {n} loop ids (by id, as runtime_loop_rows.sql orders them) that
-- start with {prefix} and have a row that is not malformed or a second
-- version, without FINAL: a superset of runtime_loops' ids (FINAL only drops
-- rows), so the caller checks them against the exact read.
-- param: prefix String 'loop-'
-- param: n UInt64 100
SELECT loop_id
FROM envelopes
WHERE startsWith(loop_id, {prefix:String}) AND verdict NOT IN ('malformed', 'fork')
GROUP BY loop_id
ORDER BY loop_id
LIMIT {n:UInt64};
