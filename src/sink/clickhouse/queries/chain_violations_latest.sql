-- The most recent chain violations with their detail.
-- param: limit UInt64 20
SELECT loop_id, seq, verdict, detail, time_text
FROM chain_violations
ORDER BY ingested_at DESC, loop_id, seq
LIMIT {limit:UInt64};
