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
WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT toString(today_calls) AS today_calls_text, toString(week_calls) AS week_calls_text, toString(month_calls) AS month_calls_text,
       toString(runtime_calls) AS runtime_calls_text,
       if(abs(today_cost) < e18, toString(today_cost - intDiv(today_cost, e18) * e18),
          concat(toString(intDiv(today_cost, e18)), substring(toString(abs(today_cost - intDiv(today_cost, e18) * e18) + e18), 2))) AS today_cost,
       if(abs(week_cost) < e18, toString(week_cost - intDiv(week_cost, e18) * e18),
          concat(toString(intDiv(week_cost, e18)), substring(toString(abs(week_cost - intDiv(week_cost, e18) * e18) + e18), 2))) AS week_cost,
       if(abs(month_cost) < e18, toString(month_cost - intDiv(month_cost, e18) * e18),
          concat(toString(intDiv(month_cost, e18)), substring(toString(abs(month_cost - intDiv(month_cost, e18) * e18) + e18), 2))) AS month_cost,
       if(abs(runtime_cost) < e18, toString(runtime_cost - intDiv(runtime_cost, e18) * e18),
          concat(toString(intDiv(runtime_cost, e18)), substring(toString(abs(runtime_cost - intDiv(runtime_cost, e18) * e18) + e18), 2))) AS runtime_cost
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
