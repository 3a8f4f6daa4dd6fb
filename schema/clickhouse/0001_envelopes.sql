-- Every loop-runtime Envelope agentledger has processed, once.
--
-- One row per Kafka record that was not dropped as a duplicate: verified links
-- (verdict 'ok') and the evidence of every violation ('mismatch', 'gap',
-- 'regression', 'time_regression', 'fork': the second version of a (loop, seq),
-- 'malformed': a record that could not be decoded, stored with its raw text).
-- (loop_id, seq) is unique among rows whose verdict is not 'fork' or 'malformed'.
--
-- Exactly-once: a batch of records is written by ONE insert, so its rows land
-- together or not at all (partitioned by ingested_at, which one insert shares,
-- so an insert is never split into parts of several partitions that could land
-- one without the other), and max(kafka_offset) per (kafka_topic,
-- kafka_partition) is the consumer's durable progress, read back after a
-- restart or a rebalance. ReplacingMergeTree on a key that includes the Kafka
-- offset is the last line of defence: a record inserted twice by a consumer
-- that lost its partition mid-insert collapses on merge (and under FINAL).
--
-- Runs on ClickHouse 18.16 and current ClickHouse: no DateTime64, no
-- LowCardinality, hashes as lowercase hex text.
CREATE TABLE IF NOT EXISTS envelopes
(
    loop_id         String,
    seq             UInt64,
    -- The envelope's Time, second precision, UTC: for partitioning and ranges.
    time            DateTime('UTC'),
    -- The Time text exactly as it arrived (RFC 3339 with nanoseconds): it is
    -- what was hashed, and JavaScript dates would lose the nanoseconds.
    time_text       String,
    kind            String,
    -- kind classified by agentledger ('' when the kind is unknown).
    kind_class      String,
    hash            String,
    -- The hash agentledger recomputed ('' where it could not: gap, malformed).
    computed_hash   String,
    payload         String,
    verdict         String,
    detail          String,
    -- What the verdict was judged against, as JSON text ('' for ok): for a
    -- fork, the stored version of the same seq (hash, time, kind, payload).
    evidence        String,
    kafka_topic     String,
    kafka_partition UInt32,
    kafka_offset    UInt64,
    ingested_at     DateTime('UTC')
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ingested_at)
ORDER BY (loop_id, seq, kafka_topic, kafka_partition, kafka_offset);
