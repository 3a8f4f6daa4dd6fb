-- Roots whose trees hold a loop with disagreeing ledgers, for the page (GET
-- /api/reconciliation): root_reconciliation_rollup's columns, most loops
-- disagreeing first, money as Decimal128 in two pieces.
-- param: limit UInt64 50
WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT root_loop_id, loops, loops_disagreeing,
       if(abs(tree_model_cost_pico) < e18, toString(tree_model_cost_pico - intDiv(tree_model_cost_pico, e18) * e18),
          concat(toString(intDiv(tree_model_cost_pico, e18)), substring(toString(abs(tree_model_cost_pico - intDiv(tree_model_cost_pico, e18) * e18) + e18), 2))) AS tree_model_cost_text,
       if(abs(tree_model_budget_pico) < e18, toString(tree_model_budget_pico - intDiv(tree_model_budget_pico, e18) * e18),
          concat(toString(intDiv(tree_model_budget_pico, e18)), substring(toString(abs(tree_model_budget_pico - intDiv(tree_model_budget_pico, e18) * e18) + e18), 2))) AS tree_model_budget_text,
       if(abs(tree_budget_pico) < e18, toString(tree_budget_pico - intDiv(tree_budget_pico, e18) * e18),
          concat(toString(intDiv(tree_budget_pico, e18)), substring(toString(abs(tree_budget_pico - intDiv(tree_budget_pico, e18) * e18) + e18), 2))) AS tree_budget_text
FROM
(
    SELECT root_loop_id, loops, loops_disagreeing, tree_model_cost_pico, tree_model_budget_pico, tree_budget_pico
    FROM root_reconciliation_rollup
    WHERE loops_disagreeing > 0
    ORDER BY loops_disagreeing DESC
    LIMIT {limit:UInt64}
) AS roots;
