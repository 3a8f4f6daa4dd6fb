-- The most recent chain violations with their detail, from the
-- chain_violations_now view (migration 0021: the rows the rollup sweep keeps
-- for loops not changed since, the 0019 logic by primary key for the others;
-- each key as FINAL keeps it); the rest of the key orders the copies of one
-- (loop, seq), malformed rows among them.
-- param: limit UInt64 20
SELECT loop_id, seq, verdict, detail, time_text
FROM chain_violations_now
ORDER BY ingested_at DESC, loop_id, seq, kafka_topic, kafka_partition, kafka_offset
LIMIT {limit:UInt64};
