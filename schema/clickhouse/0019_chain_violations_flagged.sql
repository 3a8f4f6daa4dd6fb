-- chain_violations (0005) without FINAL over every envelope: same rows, read
-- from the flagged envelopes first.
--
-- Why: on 18.16 FINAL merges every row of the table, single-threaded, before
-- any filter, so each read of the 0005 view cost a merge of all envelopes
-- (docs/benchmarks.md, "Where the time goes") for the few rows not 'ok'.
--
-- What FINAL gives, and how this view gives the same:
-- - the copies of one key (loop_id, seq, kafka_topic, kafka_partition,
--   kafka_offset) are one Kafka record stored twice (a retried or a zombie's
--   insert), possibly judged differently; FINAL keeps one copy per key, the
--   one it merges last, and a violation is a key whose kept copy is not 'ok';
-- - which copy FINAL keeps (no version column): the one of the last part in
--   the order ClickHouse keeps parts in, partition id first, then the first
--   block number of the part (`_part` is `<partition id>_<min block>_<max
--   block>_<level>`). FINAL merges across partitions (18.16, and current
--   ClickHouse by default), so a copy ingested in a later month wins over an
--   earlier one even when it was inserted first; within a partition, a later
--   insert has a higher block number. Both copies of a key never share a part:
--   one insert holds each record once, and a merge keeps one copy.
--   test/integration/chain-reads.test.ts checks this against FINAL with two
--   copies inserted in both orders, merges stopped.
-- - so: the flagged copies (PREWHERE verdict != 'ok', every column), and the
--   'ok' copies of the same records (PREWHERE on their kafka_offset, which
--   every copy of a key shares: only the small columns; their other columns
--   are never shown, since a key whose kept copy is 'ok' is dropped), then per
--   key the columns of the copy FINAL keeps (argMax by that order).
-- Each column is aggregated on its own, so a read of a few columns (a count,
-- a Grafana panel) reads only those. The inner aliases differ from the
-- envelopes columns: 18.16 resolves an alias inside an aggregate.
DROP TABLE IF EXISTS chain_violations;

CREATE VIEW IF NOT EXISTS chain_violations AS
SELECT loop_id, seq, chosen_verdict AS verdict, chosen_detail AS detail, chosen_kind AS kind, chosen_time AS time,
       chosen_time_text AS time_text, chosen_hash AS carried_hash, chosen_computed AS expected_hash,
       chosen_payload AS payload, chosen_evidence AS evidence,
       kafka_topic, kafka_partition, kafka_offset, chosen_ingested AS ingested_at
FROM
(
    SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset,
           argMax(verdict, stored_order) AS chosen_verdict, argMax(detail, stored_order) AS chosen_detail,
           argMax(kind, stored_order) AS chosen_kind, argMax(time, stored_order) AS chosen_time,
           argMax(time_text, stored_order) AS chosen_time_text, argMax(hash, stored_order) AS chosen_hash,
           argMax(computed_hash, stored_order) AS chosen_computed, argMax(payload, stored_order) AS chosen_payload,
           argMax(evidence, stored_order) AS chosen_evidence, argMax(ingested_at, stored_order) AS chosen_ingested
    FROM
    (
        SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset, verdict, detail, kind, time, time_text,
               hash, computed_hash, payload, evidence, ingested_at,
               (splitByChar('_', _part)[1], toUInt64(splitByChar('_', _part)[2])) AS stored_order
        FROM envelopes
        PREWHERE verdict != 'ok'
        UNION ALL
        SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset, verdict, '' AS detail, '' AS kind,
               toDateTime(0, 'UTC') AS time, '' AS time_text, '' AS hash, '' AS computed_hash, '' AS payload,
               '' AS evidence, toDateTime(0, 'UTC') AS ingested_at,
               (splitByChar('_', _part)[1], toUInt64(splitByChar('_', _part)[2])) AS stored_order
        FROM envelopes
        PREWHERE kafka_offset IN (SELECT kafka_offset FROM envelopes PREWHERE verdict != 'ok')
        WHERE verdict = 'ok'
    ) AS copies
    GROUP BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset
) AS kept
WHERE chosen_verdict != 'ok';
