-- Records a finished sweep: every row ingested up to `seen_through` (Unix
-- seconds) is in the rollups.
-- param: version UInt64 7
-- param: seen_through UInt32 1764504000
-- param: hours UInt64 3
INSERT INTO rollup_sweeps (version, seen_through, hours, finished_at)
VALUES ({version:UInt64}, toDateTime({seen_through:UInt32}), {hours:UInt64}, now());
