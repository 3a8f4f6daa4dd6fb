-- Spend over time for the page (GET /api/series): counted spend of every
-- source per bucket (an hour, or a UTC day: {day} 1) and key (the column
-- {by}: model, provider, source or loop_name) from spend_hourly_now
-- (committed hour rollups, open hours live), the hours starting in
-- [{since}, {until}) (Unix seconds). A day's sum is what `spend --by day`
-- says of it when the rollups are current. Filters: '' for all. Sums are
-- Decimal128 rendered in two pieces (docs/spend.md "Exact money text").
-- param: day UInt8 1
-- param: by Identifier model
-- param: since UInt32 1764028800
-- param: until UInt32 1764633600
-- param: source String ''
-- param: model String ''
-- param: name String ''
SELECT toUInt32(bucket) AS bucket_s, key, toString(calls) AS calls_text, decimal_text(cost) AS cost_text
FROM
(
    SELECT if({day:UInt8} = 1, toStartOfDay(hour), hour) AS bucket, {by:Identifier} AS key,
           sum(calls_sum) AS calls, sum(cost_pico_sum) AS cost
    FROM spend_hourly_now
    WHERE hour >= toDateTime({since:UInt32}) AND hour < toDateTime({until:UInt32})
      AND ({source:String} = '' OR source = {source:String})
      AND ({model:String} = '' OR model = {model:String})
      AND ({name:String} = '' OR loop_name = {name:String})
    GROUP BY bucket, key
) AS sums
ORDER BY bucket_s, key;
