-- A loop's counted spend by the rules of view runtime_spend (0009): its
-- verified, not replayed ModelCalled calls, tokens and cost and BudgetCharged
-- charges, and its unverified model cost apart, summed as Decimal128. Over
-- rows with runtime_spend's columns (kind_class, verified, replayed, ...) from
-- the includer's FROM, which groups by loop_id.
SELECT
    loop_id,
    countIf(kind_class = 'ModelCalled' AND verified AND NOT replayed) AS model_calls,
    sumIf(toDecimal128(input_tokens, 0), kind_class = 'ModelCalled' AND verified AND NOT replayed) AS input_total,
    sumIf(toDecimal128(output_tokens, 0), kind_class = 'ModelCalled' AND verified AND NOT replayed) AS output_total,
    sumIf(toDecimal128(cost_pico, 0), kind_class = 'ModelCalled' AND verified AND NOT replayed) AS model_total,
    sumIf(toDecimal128(budget_pico, 0), kind_class = 'BudgetCharged' AND verified AND NOT replayed) AS budget_total,
    sumIf(toDecimal128(cost_pico, 0), kind_class = 'ModelCalled' AND NOT verified AND NOT replayed) AS unverified_total
