-- The hours (Unix seconds of their start) holding rollup candidates
-- ingested at or after `since` (Unix seconds): ModelCalled, ToolCalled,
-- ConvergenceWarning and SubAgentCompleted envelopes, and craze usage reports. The rollup sweep recomputes these.
-- param: since UInt32 1764504000
SELECT DISTINCT toUInt32(toStartOfHour(time)) AS h
FROM envelopes
WHERE ingested_at >= toDateTime({since:UInt32}) AND kind_class IN ('ModelCalled', 'ToolCalled', 'ConvergenceWarning', 'SubAgentCompleted')
UNION ALL
SELECT DISTINCT toUInt32(toStartOfHour(at)) AS h
FROM craze_events
WHERE ingested_at >= toDateTime({since:UInt32}) AND report = 1;
