-- The most recent chain violations with their detail, from the
-- chain_violations view (migration 0019: the flagged envelopes first, each key
-- as FINAL keeps it, never FINAL over every envelope); the rest of the key
-- orders the copies of one (loop, seq), malformed rows among them.
-- param: limit UInt64 20
SELECT loop_id, seq, verdict, detail, time_text
FROM chain_violations
ORDER BY ingested_at DESC, loop_id, seq, kafka_topic, kafka_partition, kafka_offset
LIMIT {limit:UInt64};
