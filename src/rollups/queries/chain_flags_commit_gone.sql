-- Commits, under `version` (0021), no flag for every loop chain_flag_loops
-- holds that has no envelope any more (a dropped partition): the step that
-- recomputes every loop writes it after chain_flags_commit.sql.
-- param: version UInt64 7
INSERT INTO chain_flag_loops (loop_id, version, keys)
SELECT loop_id, {version:UInt64}, 0
FROM chain_flag_current
WHERE loop_id NOT IN (SELECT loop_id FROM envelopes);
