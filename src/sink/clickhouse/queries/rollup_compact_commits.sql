-- Drops the commits below their hour's highest committed version (see rollup_compact_rows.sql).
-- param: hours Array(UInt32) [1764504000, 1764507600]
-- param: tops Array(UInt64) [7, 9]
ALTER TABLE rollup_commits DELETE WHERE version < transform(toUInt32(hour), CAST({hours:Array(UInt32)} AS Array(UInt32)), CAST({tops:Array(UInt64)} AS Array(UInt64)), toUInt64(0));
