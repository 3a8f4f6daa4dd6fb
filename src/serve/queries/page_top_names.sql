-- Top loop names for the page (GET /api/names): the runtime's counted spend
-- per loop name in hours [{since}, {until}) from spend_hourly_now, costliest
-- first (sorted by the Decimal128 alone). Filters: model, '' for all.
-- param: since UInt32 1764028800
-- param: until UInt32 1764633600
-- param: model String ''
-- param: limit UInt64 20
SELECT loop_name, toString(calls) AS calls_text, decimal_text(cost) AS cost_text
FROM
(
    SELECT loop_name, sum(calls_sum) AS calls, sum(cost_pico_sum) AS cost
    FROM spend_hourly_now
    WHERE source = 'runtime' AND hour >= toDateTime({since:UInt32}) AND hour < toDateTime({until:UInt32})
      AND ({model:String} = '' OR model = {model:String})
    GROUP BY loop_name
    ORDER BY cost DESC
    LIMIT {limit:UInt64}
) AS tops;
