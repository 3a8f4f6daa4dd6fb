-- Sums the rows of `version` in these hours of spend_rollup_hour into the
-- coarser rollups (0015): per hour, source, provider, model and loop name,
-- then per hour, source and root. Run after every spend_rollup_hour row of
-- the step is written and before its commit.
-- param: hours Array(UInt32) (1764504000, 1764507600)
-- param: version UInt64 7
INSERT INTO spend_rollup_model_hour (hour, version, source, provider, model, loop_name, calls, input_tokens, output_tokens, cost_pico, unpriced_calls)
SELECT hour, version, source, provider, model, loop_name, sum(calls), sum(input_tokens), sum(output_tokens), sum(cost_pico), sum(unpriced_calls)
FROM spend_rollup_hour
WHERE version = {version:UInt64} AND toUInt32(hour) IN {hours:Array(UInt32)}
GROUP BY hour, version, source, provider, model, loop_name;
