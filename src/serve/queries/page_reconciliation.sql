-- Loops whose ledgers disagree, for the page (GET /api/reconciliation): the
-- columns of loop_reconciliation_rollup (money as Decimal128, rendered in two
-- pieces) with each loop's root (loop_roots), the largest model difference
-- first. On 18.16 a top list is sorted by its Decimal128 alone (docs/spend.md
-- "Rollups").
-- param: limit UInt64 50
SELECT loop_id, root_loop_id, has_total_spend, has_child_spend,
       model_disagrees, total_spend_disagrees, child_spend_disagrees,
       decimal_text(model_cost_pico) AS model_cost_text,
       decimal_text(model_budget_pico) AS model_budget_text,
       decimal_text(budget_pico) AS budget_text,
       decimal_text(total_spend_pico) AS total_spend_text,
       decimal_text(child_spend_pico) AS child_spend_text,
       decimal_text(model_minus_model_budget_pico) AS model_minus_model_budget_text,
       decimal_text(budget_minus_total_spend_pico) AS budget_minus_total_spend_text,
       decimal_text(budget_minus_child_spend_pico) AS budget_minus_child_spend_text
FROM
(
    SELECT loop_id, has_total_spend, has_child_spend, model_disagrees, total_spend_disagrees, child_spend_disagrees,
           model_cost_pico, model_budget_pico, budget_pico, total_spend_pico, child_spend_pico,
           model_minus_model_budget_pico, budget_minus_total_spend_pico, budget_minus_child_spend_pico,
           abs(model_minus_model_budget_pico) AS model_gap
    FROM loop_reconciliation_rollup
    WHERE disagrees
    ORDER BY model_gap DESC
    LIMIT {limit:UInt64}
) AS loops
ANY LEFT JOIN (SELECT loop_id, root_loop_id FROM loop_roots FINAL) AS roots USING loop_id;
