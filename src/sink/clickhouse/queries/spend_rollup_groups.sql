-- Counted spend from the hour rollups (view spend_hourly_now, migration 0015:
-- committed hours, plus the open hours computed live), per source, provider,
-- model, UTC day and loop name, for the hours in [since, until) (Unix
-- seconds, rounded down to the hour). What `spend --rollups` and the
-- dashboards read: thousands of rows at any size, where the raw read
-- (runtime_spend_groups.sql) scans every envelope. A row stored after the
-- last sweep with a time in a closed hour waits for the next sweep. Sums are
-- Decimal128, rendered as text in two pieces (hi, lo) because 18.16's
-- toString garbles 21 digits and more (migrations 0012 and 0017 say how).
-- param: since UInt32 0
-- param: until UInt32 4102444800
WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT source, provider, model, day, loop_name, calls,
       if(abs(input_total) < e18, toString(input_total - intDiv(input_total, e18) * e18),
          concat(toString(intDiv(input_total, e18)), substring(toString(abs(input_total - intDiv(input_total, e18) * e18) + e18), 2))) AS input_tokens_sum,
       if(abs(output_total) < e18, toString(output_total - intDiv(output_total, e18) * e18),
          concat(toString(intDiv(output_total, e18)), substring(toString(abs(output_total - intDiv(output_total, e18) * e18) + e18), 2))) AS output_tokens_sum,
       if(abs(cost_total) < e18, toString(cost_total - intDiv(cost_total, e18) * e18),
          concat(toString(intDiv(cost_total, e18)), substring(toString(abs(cost_total - intDiv(cost_total, e18) * e18) + e18), 2))) AS cost,
       unpriced_calls
FROM
(
    SELECT source, provider, model, toString(toDate(hour)) AS day, loop_name,
           sum(calls_sum) AS calls,
           sum(toDecimal128(input_tokens_sum, 0)) AS input_total,
           sum(toDecimal128(output_tokens_sum, 0)) AS output_total,
           sum(toDecimal128(cost_pico_sum, 0)) AS cost_total,
           sum(unpriced_calls_sum) AS unpriced_calls
    FROM spend_hourly_now
    WHERE hour >= toStartOfHour(toDateTime({since:UInt32})) AND hour < toDateTime({until:UInt32})
    GROUP BY source, provider, model, day, loop_name
) AS spend
ORDER BY source, provider, model, day, loop_name;
