-- The page's headline counts (GET /api/overview): firing alerts, firing
-- stuck-loop alerts (alerts_current), and active loops: loops with an
-- envelope timed at or after {active_since} (Unix seconds) and no
-- LoopFinished. Chain violations are counted in page_chain_totals.sql.
-- param: active_since UInt32 1764586800
SELECT
    (SELECT count() FROM alerts_current WHERE state = 'firing') AS firing_alerts,
    (SELECT count() FROM alerts_current WHERE state = 'firing' AND rule = 'stuck_loop') AS stuck_loops,
    (SELECT countIf(finished = 0) FROM
        (SELECT loop_id, max(kind_class = 'LoopFinished') AS finished
         FROM envelopes
         WHERE loop_id IN (SELECT loop_id FROM envelopes WHERE time >= toDateTime({active_since:UInt32}))
         GROUP BY loop_id)) AS active_loops;
