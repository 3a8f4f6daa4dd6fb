-- chain_violations_now (0021) within memory on a big database (issue 40,
-- item 7): the same rows and columns, its changed loops' part grouped over
-- the flagged records only.
--
-- Why: for the loops changed since the chain-flag mark (every loop before the
-- first mark, after `rollups rebuild` until its sweep, or while a backfill is
-- stored), 0021 grouped every key of those loops, with an argMax state per
-- column per key, to drop the keys kept 'ok': memory grew with the envelopes,
-- not with the violations. Grafana's "Latest chain violations" (six columns)
-- hit the 4 GB max_memory_usage at 3.5M envelopes (626 MiB at 0.5M;
-- docs/benchmarks.md, "Dashboard memory").
--
-- Now the 'ok' copies grouped are only those of records that have a flagged
-- copy: a key with no flagged copy is kept 'ok' whatever FINAL keeps, so it
-- was dropped anyway. They are found by the whole key (a tuple IN over the
-- flagged keys of the changed loops: a set as small as the violations), as
-- 0019 found them by kafka_offset, so the GROUP BY holds the flagged keys and
-- their 'ok' copies only. The copies of one key share it, so the kept copy
-- is still chosen among all of them (0019's argMax by stored order). Reading
-- costs one more read of the changed loops' flagged rows' key columns.
--
-- And the changed loops are read as the set of the changed loops with a flag
-- (chain_flagged_loops_changed, below): 0021 built the set of every changed
-- loop (a DISTINCT, then an IN set, three times: ~200 MiB each at 1M loops);
-- only the changed loops with a flagged envelope or a kept flag matter (the
-- others have no flagged row to read and no kept row to drop), so the sets
-- are as small as the violations. #19 at 19.6M envelopes over 1M loops, no
-- mark: 738 MiB with the whole-loop sets, 49 MiB with these.
--
-- 18.16 has no CREATE OR REPLACE VIEW: dropped and created, as 0019 did; the
-- views reading it (unverified_spend_now) name it and read the new one.

-- chain_loops_changed (0021) restricted to the loops with a flagged envelope
-- or a kept flag: a DISTINCT over those loops' rows only (by primary key).
CREATE VIEW IF NOT EXISTS chain_flagged_loops_changed AS
SELECT DISTINCT loop_id
FROM envelopes
PREWHERE loop_id IN (SELECT loop_id FROM envelopes PREWHERE verdict != 'ok' UNION ALL SELECT loop_id FROM chain_flags)
WHERE ingested_at >= toDateTime((SELECT toUInt32(greatest(max(toInt64(toUInt32(seen_through)) - late_s), 0)) FROM chain_flag_marks FINAL));

DROP TABLE IF EXISTS chain_violations_now;

CREATE VIEW IF NOT EXISTS chain_violations_now AS
SELECT loop_id, seq, verdict, detail, kind, time, time_text, carried_hash, expected_hash, payload, evidence,
       kafka_topic, kafka_partition, kafka_offset, ingested_at, kind_class, cost_pico, model_name
FROM chain_flags
WHERE (loop_id, version) IN
      (SELECT loop_id, max(version) FROM chain_flag_loops WHERE loop_id IN (SELECT loop_id FROM chain_flags) GROUP BY loop_id)
  AND loop_id NOT IN (SELECT loop_id FROM chain_flagged_loops_changed)
UNION ALL
SELECT loop_id, seq, chosen_verdict AS verdict, chosen_detail AS detail, chosen_kind AS kind, chosen_time AS time,
       chosen_time_text AS time_text, chosen_hash AS carried_hash, chosen_computed AS expected_hash,
       chosen_payload AS payload, chosen_evidence AS evidence,
       kafka_topic, kafka_partition, kafka_offset, chosen_ingested AS ingested_at,
       chosen_class AS kind_class, chosen_cost AS cost_pico, chosen_model AS model_name
FROM
(
    SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset,
           argMax(verdict, stored_order) AS chosen_verdict, argMax(detail, stored_order) AS chosen_detail,
           argMax(kind, stored_order) AS chosen_kind, argMax(time, stored_order) AS chosen_time,
           argMax(time_text, stored_order) AS chosen_time_text, argMax(hash, stored_order) AS chosen_hash,
           argMax(computed_hash, stored_order) AS chosen_computed, argMax(payload, stored_order) AS chosen_payload,
           argMax(evidence, stored_order) AS chosen_evidence, argMax(ingested_at, stored_order) AS chosen_ingested,
           argMax(kind_class, stored_order) AS chosen_class, argMax(cost_pico, stored_order) AS chosen_cost,
           argMax(model_name, stored_order) AS chosen_model
    FROM
    (
        SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset, verdict, detail, kind, time, time_text,
               hash, computed_hash, payload, evidence, ingested_at, kind_class, cost_pico, model_name,
               (splitByChar('_', _part)[1], toUInt64(splitByChar('_', _part)[2])) AS stored_order
        FROM envelopes
        PREWHERE verdict != 'ok' AND loop_id IN (SELECT loop_id FROM chain_flagged_loops_changed)
        UNION ALL
        SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset, verdict, '' AS detail, '' AS kind,
               toDateTime(0, 'UTC') AS time, '' AS time_text, '' AS hash, '' AS computed_hash, '' AS payload,
               '' AS evidence, toDateTime(0, 'UTC') AS ingested_at, '' AS kind_class, toInt64(0) AS cost_pico,
               '' AS model_name,
               (splitByChar('_', _part)[1], toUInt64(splitByChar('_', _part)[2])) AS stored_order
        FROM envelopes
        PREWHERE (loop_id, seq, kafka_topic, kafka_partition, kafka_offset) IN
                 (SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset
                  FROM envelopes
                  PREWHERE verdict != 'ok' AND loop_id IN (SELECT loop_id FROM chain_flagged_loops_changed))
        WHERE verdict = 'ok'
    ) AS copies
    GROUP BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset
) AS kept
WHERE chosen_verdict != 'ok';
