-- A loop's spend as runtime_loop_rows.sql and runtime_loop_rows_of.sql return
-- it: the calls and the Decimal128 sums of fragments/loop_spend_sums.sql, read
-- from the includer's FROM, each sum as its exact text (decimal_text()).
SELECT loop_id, model_calls,
    decimal_text(input_total) AS input_tokens_sum,
    decimal_text(output_total) AS output_tokens_sum,
    decimal_text(model_total) AS model_cost,
    decimal_text(budget_total) AS budget_cost,
    decimal_text(unverified_total) AS unverified_model_cost
