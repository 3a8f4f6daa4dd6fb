-- Drops a rollup table's rows below their hour's highest committed version
-- (hours and versions as rollup_obsolete.sql reads them; other hours
-- untouched). Rows of a recompute still running (a version above it) stay.
-- `rollup_table` is one of the tables recompute.ts names. A mutation: needs
-- the migrator's rights (ALTER), and runs in the background.
-- param: rollup_table Identifier spend_rollup_hour
-- param: hours Array(UInt32) [1764504000, 1764507600]
-- param: tops Array(UInt64) [7, 9]
ALTER TABLE {rollup_table:Identifier} DELETE WHERE version < transform(toUInt32(hour), CAST({hours:Array(UInt32)} AS Array(UInt32)), CAST({tops:Array(UInt64)} AS Array(UInt64)), toUInt64(0));
