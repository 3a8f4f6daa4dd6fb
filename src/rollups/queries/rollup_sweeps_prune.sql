-- Drops the records of rollup sweeps finished before `before` (Unix
-- seconds), except the one of the highest version and the one that saw
-- furthest (the next sweep starts from them; spend_hourly_now reads the
-- latter). A mutation: needs the migrator's rights (ALTER).
-- param: before UInt32 1764460800
-- param: top_version UInt64 7
-- param: top_through UInt32 1764504000
ALTER TABLE rollup_sweeps DELETE WHERE finished_at < toDateTime({before:UInt32}) AND version < {top_version:UInt64} AND seen_through < toDateTime({top_through:UInt32});
