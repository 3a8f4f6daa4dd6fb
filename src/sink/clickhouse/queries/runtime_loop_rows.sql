-- Every loop of the loop runtime with its own facts (view runtime_loops) and
-- its own spend (view runtime_spend: verified and not replayed; unverified
-- model cost apart), money and tokens summed as Decimal128 and read as text,
-- rendered in two pieces (hi, lo) because 18.16's toString garbles 21 digits
-- and more (migrations 0012 and 0017 say how).
-- The tree (parent from either side, root, subtree cost) is folded by the
-- caller from these rows and loop_spawns. A loop with no spend row gets
-- zeros ('' for the text sums: ANY LEFT JOIN fills defaults).
SELECT loop_id, name, started_parent, started_depth, started, finished_outcome, finished_error,
       iterations, subagents_spawned, subagents_completed, subagents_failed, forked_from, forked_at_seq,
       toString(first_time) AS first_time_text, toString(last_time) AS last_time_text,
       model_calls, input_tokens_sum, output_tokens_sum, model_cost, budget_cost, unverified_model_cost
FROM
(
    SELECT loop_id, name, started_parent, started_depth, started, finished_outcome, finished_error,
           iterations, subagents_spawned, subagents_completed, subagents_failed, forked_from, forked_at_seq,
           first_time, last_time
    FROM runtime_loops
) AS loops
ANY LEFT JOIN
(
    SELECT loop_id, model_calls,
        decimal_text(input_total) AS input_tokens_sum,
        decimal_text(output_total) AS output_tokens_sum,
        decimal_text(model_total) AS model_cost,
        decimal_text(budget_total) AS budget_cost,
        decimal_text(unverified_total) AS unverified_model_cost
    FROM
    (
        SELECT
            loop_id,
            countIf(kind_class = 'ModelCalled' AND verified AND NOT replayed) AS model_calls,
            sumIf(toDecimal128(input_tokens, 0), kind_class = 'ModelCalled' AND verified AND NOT replayed) AS input_total,
            sumIf(toDecimal128(output_tokens, 0), kind_class = 'ModelCalled' AND verified AND NOT replayed) AS output_total,
            sumIf(toDecimal128(cost_pico, 0), kind_class = 'ModelCalled' AND verified AND NOT replayed) AS model_total,
            sumIf(toDecimal128(budget_pico, 0), kind_class = 'BudgetCharged' AND verified AND NOT replayed) AS budget_total,
            sumIf(toDecimal128(cost_pico, 0), kind_class = 'ModelCalled' AND NOT verified AND NOT replayed) AS unverified_total
        FROM runtime_spend
        GROUP BY loop_id
    ) AS sums
) AS spend USING loop_id
ORDER BY loop_id;
