-- Loops whose ledgers disagree, for the page (GET /api/reconciliation): the
-- columns of loop_reconciliation_rollup (money as Decimal128, rendered in two
-- pieces) with each loop's root (loop_roots), the largest model difference
-- first. On 18.16 a top list is sorted by its Decimal128 alone (docs/spend.md
-- "Rollups").
-- param: limit UInt64 50
WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT loop_id, root_loop_id, has_total_spend, has_child_spend,
       model_disagrees, total_spend_disagrees, child_spend_disagrees,
       if(abs(model_cost_pico) < e18, toString(model_cost_pico - intDiv(model_cost_pico, e18) * e18),
          concat(toString(intDiv(model_cost_pico, e18)), substring(toString(abs(model_cost_pico - intDiv(model_cost_pico, e18) * e18) + e18), 2))) AS model_cost_text,
       if(abs(model_budget_pico) < e18, toString(model_budget_pico - intDiv(model_budget_pico, e18) * e18),
          concat(toString(intDiv(model_budget_pico, e18)), substring(toString(abs(model_budget_pico - intDiv(model_budget_pico, e18) * e18) + e18), 2))) AS model_budget_text,
       if(abs(budget_pico) < e18, toString(budget_pico - intDiv(budget_pico, e18) * e18),
          concat(toString(intDiv(budget_pico, e18)), substring(toString(abs(budget_pico - intDiv(budget_pico, e18) * e18) + e18), 2))) AS budget_text,
       if(abs(total_spend_pico) < e18, toString(total_spend_pico - intDiv(total_spend_pico, e18) * e18),
          concat(toString(intDiv(total_spend_pico, e18)), substring(toString(abs(total_spend_pico - intDiv(total_spend_pico, e18) * e18) + e18), 2))) AS total_spend_text,
       if(abs(child_spend_pico) < e18, toString(child_spend_pico - intDiv(child_spend_pico, e18) * e18),
          concat(toString(intDiv(child_spend_pico, e18)), substring(toString(abs(child_spend_pico - intDiv(child_spend_pico, e18) * e18) + e18), 2))) AS child_spend_text,
       if(abs(model_minus_model_budget_pico) < e18, toString(model_minus_model_budget_pico - intDiv(model_minus_model_budget_pico, e18) * e18),
          concat(toString(intDiv(model_minus_model_budget_pico, e18)), substring(toString(abs(model_minus_model_budget_pico - intDiv(model_minus_model_budget_pico, e18) * e18) + e18), 2))) AS model_minus_model_budget_text,
       if(abs(budget_minus_total_spend_pico) < e18, toString(budget_minus_total_spend_pico - intDiv(budget_minus_total_spend_pico, e18) * e18),
          concat(toString(intDiv(budget_minus_total_spend_pico, e18)), substring(toString(abs(budget_minus_total_spend_pico - intDiv(budget_minus_total_spend_pico, e18) * e18) + e18), 2))) AS budget_minus_total_spend_text,
       if(abs(budget_minus_child_spend_pico) < e18, toString(budget_minus_child_spend_pico - intDiv(budget_minus_child_spend_pico, e18) * e18),
          concat(toString(intDiv(budget_minus_child_spend_pico, e18)), substring(toString(abs(budget_minus_child_spend_pico - intDiv(budget_minus_child_spend_pico, e18) * e18) + e18), 2))) AS budget_minus_child_spend_text
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
