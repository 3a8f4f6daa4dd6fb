-- Every chain violation with its evidence, for alerting and dashboards: the
-- rows of envelopes whose verdict is not 'ok' (duplicates are never stored).
-- For a mismatch, expected_hash is the recomputed hash; for a fork, evidence
-- holds the stored version of the same seq, so both versions are here.
--
-- Fed by a materialized view: it fires on each envelopes insert, the same
-- single insert that makes the rows durable, so a violation is recorded with
-- its envelope and never on its own. The key includes the Kafka offset, so a
-- row repeated by a consumer that lost its partition collapses like its
-- envelope does.
CREATE TABLE IF NOT EXISTS chain_violations
(
    loop_id         String,
    seq             UInt64,
    verdict         String,
    detail          String,
    kind            String,
    time            DateTime('UTC'),
    time_text       String,
    carried_hash    String,
    expected_hash   String,
    payload         String,
    evidence        String,
    kafka_topic     String,
    kafka_partition UInt32,
    kafka_offset    UInt64,
    ingested_at     DateTime('UTC')
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ingested_at)
ORDER BY (loop_id, seq, verdict, kafka_topic, kafka_partition, kafka_offset);

CREATE MATERIALIZED VIEW IF NOT EXISTS chain_violations_mv TO chain_violations AS
SELECT
    loop_id, seq, verdict, detail, kind, time, time_text,
    hash AS carried_hash,
    computed_hash AS expected_hash,
    payload, evidence, kafka_topic, kafka_partition, kafka_offset, ingested_at
FROM envelopes
WHERE verdict != 'ok';
