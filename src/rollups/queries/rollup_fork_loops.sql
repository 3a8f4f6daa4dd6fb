-- Loops with a ForkedFrom ingested at or after `since` (Unix seconds): their
-- replayed calls leave the fork's spend, in whichever hours they fell.
-- param: since UInt32 1764504000
SELECT DISTINCT loop_id
FROM envelopes
WHERE ingested_at >= toDateTime({since:UInt32}) AND kind_class = 'ForkedFrom';
