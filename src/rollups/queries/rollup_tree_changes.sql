-- Rows ingested at or after `since` (Unix seconds) that can move a loop in
-- the tree or rename it: when there are none, a sweep skips the fold.
-- param: since UInt32 1764504000
SELECT count() AS n
FROM envelopes
WHERE ingested_at >= toDateTime({since:UInt32}) AND kind_class IN ('LoopStarted', 'SubAgentSpawned', 'ForkedFrom');
