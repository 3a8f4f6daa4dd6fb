-- The loops with a row ingested at or after `since` (Unix seconds): the ones
-- whose loop_summaries row (0020) a summary step recomputes. Pruned by
-- partition (envelopes are partitioned by the month of ingested_at).
-- param: since UInt32 1764504000
SELECT DISTINCT loop_id
FROM envelopes
WHERE ingested_at >= toDateTime({since:UInt32});
