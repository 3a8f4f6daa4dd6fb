-- Drops the records of alert sweeps finished before `before` (Unix
-- seconds), except the one that saw furthest (the next sweep starts from
-- it). A mutation: needs the migrator's rights (ALTER).
-- param: before UInt32 1764460800
-- param: top_through UInt32 1764504000
ALTER TABLE alert_sweeps DELETE WHERE finished_at < toDateTime({before:UInt32}) AND seen_through < toDateTime({top_through:UInt32});
