-- Counted spend from the hour rollups (view spend_hourly_now, migration 0015:
-- committed hours, plus the open hours computed live), grouped here by the
-- `by` key of `spend --rollups` (model: provider and model; day: the UTC
-- day; name: the loop name; source: nothing more) and the source, so the
-- answer is one row per output row whatever the size (the columns not in the
-- key are ''). Every hour the window [since, until) (Unix seconds) overlaps
-- is counted whole: since is rounded down to its hour, an hour that starts
-- before until is in. A row stored after the last sweep with a time in a
-- closed hour waits for the next sweep. Sums are Decimal128, rendered as text
-- in two pieces (hi, lo) because 18.16's toString garbles 21 digits and more
-- (migrations 0012 and 0017 say how). --by root: spend_rollup_root_groups.sql.
-- param: since UInt32 0
-- param: until UInt32 4102444800
-- param: by String 'model'
-- param: sources Array(String) ['runtime', 'craze']
WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT source, key_provider AS provider, key_model AS model, key_day AS day, key_name AS loop_name, calls,
       if(abs(input_total) < e18, toString(input_total - intDiv(input_total, e18) * e18),
          concat(toString(intDiv(input_total, e18)), substring(toString(abs(input_total - intDiv(input_total, e18) * e18) + e18), 2))) AS input_tokens_sum,
       if(abs(output_total) < e18, toString(output_total - intDiv(output_total, e18) * e18),
          concat(toString(intDiv(output_total, e18)), substring(toString(abs(output_total - intDiv(output_total, e18) * e18) + e18), 2))) AS output_tokens_sum,
       if(abs(cost_total) < e18, toString(cost_total - intDiv(cost_total, e18) * e18),
          concat(toString(intDiv(cost_total, e18)), substring(toString(abs(cost_total - intDiv(cost_total, e18) * e18) + e18), 2))) AS cost,
       unpriced_calls
FROM
(
    SELECT source,
           if({by:String} = 'model', provider, '') AS key_provider,
           if({by:String} = 'model', model, '') AS key_model,
           if({by:String} = 'day', toString(toDate(hour)), '') AS key_day,
           if({by:String} = 'name', loop_name, '') AS key_name,
           sum(calls_sum) AS calls,
           sum(toDecimal128(input_tokens_sum, 0)) AS input_total,
           sum(toDecimal128(output_tokens_sum, 0)) AS output_total,
           sum(toDecimal128(cost_pico_sum, 0)) AS cost_total,
           sum(unpriced_calls_sum) AS unpriced_calls
    FROM spend_hourly_now
    WHERE hour >= toStartOfHour(toDateTime({since:UInt32})) AND hour < toDateTime({until:UInt32})
      AND has({sources:Array(String)}, source)
    GROUP BY source, key_provider, key_model, key_day, key_name
) AS spend
ORDER BY source, key_provider, key_model, key_day, key_name;
