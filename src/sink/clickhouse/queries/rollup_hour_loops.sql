-- The loops that made model calls in these hours (Unix seconds of their start).
-- param: hours Array(UInt32) (1764504000, 1764507600)
SELECT DISTINCT loop_id
FROM envelopes
WHERE kind_class = 'ModelCalled' AND toUInt32(toStartOfHour(time)) IN {hours:Array(UInt32)};
