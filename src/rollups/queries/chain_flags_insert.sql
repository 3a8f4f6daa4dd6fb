-- Writes these loops' chain violations into chain_flags under `version`
-- (0021): the rows of chain_violations (0019) with kind_class, cost_pico and
-- model_name, each key as FINAL keeps it (the copy of the last part, by
-- partition id then first block; 0019 says why), keys kept 'ok' dropped.
-- The 'ok' copies are found by kafka_offset among these loops' flagged rows.
-- Its whole-table form (a first recompute, many loops) is this text without
-- its loop_ids conditions: everyLoopSql() in src/rollups/statements.ts.
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
-- param: version UInt64 7
INSERT INTO chain_flags (loop_id, version, seq, verdict, detail, kind, time, time_text, carried_hash, expected_hash, payload,
                         evidence, kafka_topic, kafka_partition, kafka_offset, ingested_at, kind_class, cost_pico, model_name)
SELECT loop_id, {version:UInt64}, seq, chosen_verdict, chosen_detail, chosen_kind, chosen_time, chosen_time_text, chosen_hash,
       chosen_computed, chosen_payload, chosen_evidence, kafka_topic, kafka_partition, kafka_offset, chosen_ingested,
       chosen_class, chosen_cost, chosen_model
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
        SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset, verdict, '' AS detail, '' AS kind,
               toDateTime(0, 'UTC') AS time, '' AS time_text, '' AS hash, '' AS computed_hash, '' AS payload,
               '' AS evidence, toDateTime(0, 'UTC') AS ingested_at, '' AS kind_class, toInt64(0) AS cost_pico,
               '' AS model_name,
               (splitByChar('_', _part)[1], toUInt64(splitByChar('_', _part)[2])) AS stored_order
        FROM envelopes
        PREWHERE kafka_offset IN (SELECT kafka_offset FROM envelopes PREWHERE verdict != 'ok' WHERE loop_id IN {loop_ids:Array(String)})
        WHERE loop_id IN {loop_ids:Array(String)} AND verdict = 'ok'
        UNION ALL
        SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset, verdict, detail, kind, time, time_text,
               hash, computed_hash, payload, evidence, ingested_at, kind_class, cost_pico, model_name,
               (splitByChar('_', _part)[1], toUInt64(splitByChar('_', _part)[2])) AS stored_order
        FROM envelopes
        PREWHERE verdict != 'ok'
        WHERE loop_id IN {loop_ids:Array(String)}
    ) AS copies
    GROUP BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset
) AS kept
WHERE chosen_verdict != 'ok';
