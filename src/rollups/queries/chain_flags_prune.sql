-- Drops the chain_flags rows (0021) below their loop's committed version
-- (loops and versions as chain_flags_obsolete.sql reads them; other loops
-- untouched): never read again, since readers take each loop's committed
-- version only. The loops and versions are literals, not a subquery, so the
-- mutation is the same on every replica. A mutation: needs the migrator's
-- rights (ALTER), and runs in the background.
-- param: loop_ids Array(String) ['loop-a', 'loop-b']
-- param: tops Array(UInt64) [7, 9]
ALTER TABLE chain_flags DELETE WHERE version < transform(loop_id, CAST({loop_ids:Array(String)} AS Array(String)), CAST({tops:Array(UInt64)} AS Array(UInt64)), toUInt64(0));
