-- The head of every loop, small enough that reading heads back after a
-- restart or a rebalance costs the same at 20M envelopes as at 20 (a lookup
-- of scattered loop ids in envelopes reads a granule per loop and part).
--
-- Written by the consumer itself after each envelopes insert, before the
-- offset commit (never by a materialized view: DESIGN.md §4), and
-- idempotently: ReplacingMergeTree(seq) keeps each loop's highest seq, so a
-- write repeated by a retry or a zombie changes nothing. It may lag behind
-- envelopes (a crash between the two writes); readers take the union with
-- the envelopes rows inserted since the last offset commit, which the commit
-- metadata dates (src/sink/clickhouse/queries/envelope_heads.sql).
CREATE TABLE IF NOT EXISTS loop_heads
(
    loop_id         String,
    seq             UInt64,
    hash            String,
    computed_hash   String,
    time_text       String,
    verdict         String,
    kafka_topic     String,
    kafka_partition UInt32,
    kafka_offset    UInt64,
    ingested_at     DateTime('UTC')
)
ENGINE = ReplacingMergeTree(seq)
ORDER BY loop_id;

-- The heads of what is stored already. Running it again only adds rows that
-- collapse (same loop, same seq), so it is idempotent like the rest.
INSERT INTO loop_heads
SELECT loop_id, seq, hash, computed_hash, time_text, verdict, kafka_topic, kafka_partition, kafka_offset, ingested_at
FROM envelopes
WHERE verdict IN ('ok', 'mismatch', 'gap', 'time_regression');
