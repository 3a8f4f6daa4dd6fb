-- Drops the rollup rows below their hour's highest committed version (hours
-- and versions as rollup_obsolete.sql reads them; other hours untouched).
-- Rows of a recompute still running (a version above it) stay. A mutation:
-- needs the migrator's rights (ALTER), and runs in the background.
-- param: hours Array(UInt32) [1764504000, 1764507600]
-- param: tops Array(UInt64) [7, 9]
ALTER TABLE spend_rollup_hour DELETE WHERE version < transform(toUInt32(hour), CAST({hours:Array(UInt32)} AS Array(UInt32)), CAST({tops:Array(UInt64)} AS Array(UInt64)), toUInt64(0));
