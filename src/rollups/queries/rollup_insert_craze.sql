-- Writes craze's counted spend in these hours (Unix seconds of their start)
-- into spend_rollup_hour under `version`: usage reports as craze_spend counts
-- them, under their session's provider (as spend_calls reads it), each
-- session its own root, with no loop name and no loop.
-- param: hours Array(UInt32) (1764504000, 1764507600)
-- param: version UInt64 7
INSERT INTO spend_rollup_hour (hour, version, source, provider, model, loop_name, root_loop_id, loop_id, calls, input_tokens, output_tokens, cost_pico, unpriced_calls)
SELECT bucket, {version:UInt64}, 'craze', provider, model, '', session_id, '',
       count(), sum(toDecimal128(input_tokens, 0)), sum(toDecimal128(output_tokens, 0)), sum(toDecimal128(cost_pico, 0)), countIf(unpriced = 1)
FROM
(
    SELECT session_id, toStartOfHour(at) AS bucket, model, input_tokens, output_tokens, cost_pico, unpriced
    FROM craze_spend
    WHERE toUInt32(toStartOfHour(at)) IN {hours:Array(UInt32)}
) AS reports
ANY LEFT JOIN (SELECT session_id, provider FROM craze_sessions) AS sessions USING session_id
GROUP BY bucket, provider, model, session_id;
