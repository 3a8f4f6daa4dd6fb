-- Records a finished alert sweep: every row ingested up to `seen_through`
-- (Unix seconds) has been evaluated.
-- param: seen_through UInt32 1764504000
-- param: evaluated UInt64 12
-- param: transitions UInt64 3
INSERT INTO alert_sweeps (seen_through, evaluated, transitions, finished_at)
VALUES (toDateTime({seen_through:UInt32}), {evaluated:UInt64}, {transitions:UInt64}, now());
