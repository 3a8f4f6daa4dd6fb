-- Writes these loops' counted model spend in these hours (Unix seconds of
-- their start) into spend_rollup_hour under `version`, per hour, provider,
-- model and loop, with the loop's name and root (loop_roots; a loop not there
-- is its own root).
-- Counted as runtime_spend and spend_calls count (0009, 0010): verified links
-- (ok, gap, time_regression) of deduplicated rows, a fork's replayed calls
-- (seq <= its ForkedFrom's at_seq) left to its source. Spelled out here, not
-- read from those views, so the loop and hour filters reach the FINAL read on
-- 18.16 (which pushes no predicate into a view); the rollups test checks the
-- two agree.
-- Its whole-table form (a rebuild, a sweep of many loops) is this text
-- without its loop_ids conditions: everyLoopSql() in src/rollups/statements.ts.
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
-- param: hours Array(UInt32) (1764504000, 1764507600)
-- param: version UInt64 7
INSERT INTO spend_rollup_hour (hour, version, source, provider, model, loop_name, root_loop_id, loop_id, calls, input_tokens, output_tokens, cost_pico, unpriced_calls)
SELECT bucket, {version:UInt64}, 'runtime', provider, model, rolled_name, if(rolled_root = '', loop_id, rolled_root) AS root, loop_id,
       count(), sum(toDecimal128(input_tokens, 0)), sum(toDecimal128(output_tokens, 0)), sum(toDecimal128(cost_pico, 0)), 0
FROM
(
    SELECT loop_id, toStartOfHour(time) AS bucket, provider, model, input_tokens, output_tokens, cost_pico
    FROM
    (
        SELECT loop_id, seq, time, model_provider AS provider, model_name AS model, input_tokens, output_tokens, cost_pico
        FROM envelopes FINAL
        WHERE loop_id IN {loop_ids:Array(String)}
          AND kind_class = 'ModelCalled'
          AND verdict IN ('ok', 'gap', 'time_regression')
          AND toUInt32(toStartOfHour(time)) IN {hours:Array(UInt32)}
    ) AS calls
    include(replayed_to_join)
    WHERE seq > replayed_to
) AS counted
ANY LEFT JOIN
(
    SELECT loop_id, root_loop_id AS rolled_root, loop_name AS rolled_name
    FROM loop_roots FINAL
    WHERE loop_id IN {loop_ids:Array(String)}
) AS roots USING loop_id
GROUP BY bucket, provider, model, rolled_name, root, loop_id;
