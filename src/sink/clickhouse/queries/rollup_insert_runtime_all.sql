-- rollup_insert_runtime.sql for every loop at once: one read of the whole
-- table instead of one per chunk of loops, for steps with many loops (a
-- rebuild, a first sweep). Keep the two in step; the rollups test runs both.
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
        WHERE kind_class = 'ModelCalled'
          AND verdict IN ('ok', 'gap', 'time_regression')
          AND toUInt32(toStartOfHour(time)) IN {hours:Array(UInt32)}
    ) AS calls
    ANY LEFT JOIN
    (
        SELECT loop_id, max(fork_at_seq) AS replayed_to
        FROM envelopes FINAL
        WHERE kind_class = 'ForkedFrom' AND verdict NOT IN ('malformed', 'fork')
        GROUP BY loop_id
    ) AS forks USING loop_id
    WHERE seq > replayed_to
) AS counted
ANY LEFT JOIN
(
    SELECT loop_id, root_loop_id AS rolled_root, loop_name AS rolled_name
    FROM loop_roots FINAL
) AS roots USING loop_id
GROUP BY bucket, provider, model, rolled_name, root, loop_id;
