-- The per-root half of rollup_insert_model_hour.sql (one INSERT per file):
-- the rows of `version` in these hours of spend_rollup_hour summed per hour,
-- source and root into spend_rollup_root_hour (0015).
-- param: hours Array(UInt32) (1764504000, 1764507600)
-- param: version UInt64 7
INSERT INTO spend_rollup_root_hour (hour, version, source, root_loop_id, calls, input_tokens, output_tokens, cost_pico)
SELECT hour, version, source, root_loop_id, sum(calls), sum(input_tokens), sum(output_tokens), sum(cost_pico)
FROM spend_rollup_hour
WHERE version = {version:UInt64} AND toUInt32(hour) IN {hours:Array(UInt32)}
GROUP BY hour, version, source, root_loop_id;
