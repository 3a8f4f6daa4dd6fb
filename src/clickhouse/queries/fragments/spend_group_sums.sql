-- The sums of one output row of spend_rollup_groups.sql and
-- spend_rollup_root_groups.sql over the hourly rows of its group (committed
-- rollup rows and the open hours' live ones, columns calls_sum,
-- input_tokens_sum, output_tokens_sum, cost_pico_sum, unpriced_calls_sum):
-- calls, tokens and cost as Decimal128, unpriced calls.
sum(calls_sum) AS calls,
sum(toDecimal128(input_tokens_sum, 0)) AS input_total,
sum(toDecimal128(output_tokens_sum, 0)) AS output_total,
sum(toDecimal128(cost_pico_sum, 0)) AS cost_total,
sum(unpriced_calls_sum) AS unpriced_calls
