-- Commits these loops' kept chain flags under `version` (0021), once their
-- chain_flags rows are written: one row per loop, with its number of keys
-- (distinct Kafka records stored). Readers take per loop only the highest
-- version here, so a loop with no flag any more drops its old ones.
-- Its whole-table form is this text without its loop_ids condition
-- (everyLoopSql() in src/rollups/statements.ts).
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
-- param: version UInt64 7
INSERT INTO chain_flag_loops (loop_id, version, keys)
SELECT loop_id, {version:UInt64}, uniqExact(seq, kafka_topic, kafka_partition, kafka_offset)
FROM
(
    SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset
    FROM envelopes
    WHERE loop_id IN {loop_ids:Array(String)}
) AS stored
GROUP BY loop_id;
