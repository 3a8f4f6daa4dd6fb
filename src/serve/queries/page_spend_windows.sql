-- The page's headline money (GET /api/overview): counted spend of every
-- source (spend_hourly_now: committed hour rollups, open hours live) in three
-- windows of whole UTC days ending today: today, the last 7 days and the last
-- 30 days, each from a UTC midnight ({today}, {week}, {month}: Unix seconds),
-- so each equals `spend --since <that date>` when the rollups are current.
-- The verified runtime part is the runtime rows (only verified calls are
-- counted). Filters: '' for all. Sums are Decimal128 rendered in two pieces
-- (docs/spend.md "Exact money text").
-- param: today UInt32 1764547200
-- param: week UInt32 1764028800
-- param: month UInt32 1762041600
-- param: source String 'runtime'
-- param: model String ''
-- param: name String ''
SELECT toString(today_calls) AS today_calls_text, toString(week_calls) AS week_calls_text, toString(month_calls) AS month_calls_text,
       toString(runtime_calls) AS runtime_calls_text,
       decimal_text(today_cost) AS today_cost,
       decimal_text(week_cost) AS week_cost,
       decimal_text(month_cost) AS month_cost,
       decimal_text(runtime_cost) AS runtime_cost
FROM
(
    SELECT sumIf(calls_sum, hour >= toDateTime({today:UInt32})) AS today_calls,
           sumIf(calls_sum, hour >= toDateTime({week:UInt32})) AS week_calls,
           sum(calls_sum) AS month_calls,
           sumIf(calls_sum, source = 'runtime') AS runtime_calls,
           sumIf(cost_pico_sum, hour >= toDateTime({today:UInt32})) AS today_cost,
           sumIf(cost_pico_sum, hour >= toDateTime({week:UInt32})) AS week_cost,
           sum(cost_pico_sum) AS month_cost,
           sumIf(cost_pico_sum, source = 'runtime') AS runtime_cost
    FROM spend_hourly_now
    WHERE hour >= toDateTime({month:UInt32})
      AND ({source:String} = '' OR source = {source:String})
      AND ({model:String} = '' OR model = {model:String})
      AND ({name:String} = '' OR loop_name = {name:String})
) AS sums;
