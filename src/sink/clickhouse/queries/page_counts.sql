-- The page's headline counts (GET /api/overview): firing alerts, firing
-- stuck-loop alerts (alerts_current), chain violations (every stored envelope
-- whose verdict is not ok, as the chain_violations view has them, deduplicated
-- by the table's key after a PREWHERE on the verdict rather than with FINAL
-- over every envelope), and active loops: loops with an envelope timed at or after
-- {active_since} (Unix seconds) and no LoopFinished.
-- param: active_since UInt32 1764586800
SELECT
    (SELECT count() FROM alerts_current WHERE state = 'firing') AS firing_alerts,
    (SELECT count() FROM alerts_current WHERE state = 'firing' AND rule = 'stuck_loop') AS stuck_loops,
    (SELECT count() FROM (SELECT loop_id FROM envelopes PREWHERE verdict != 'ok' GROUP BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset)) AS chain_violations,
    (SELECT countIf(finished = 0) FROM
        (SELECT loop_id, max(kind_class = 'LoopFinished') AS finished
         FROM envelopes
         WHERE loop_id IN (SELECT loop_id FROM envelopes WHERE time >= toDateTime({active_since:UInt32}))
         GROUP BY loop_id)) AS active_loops;
