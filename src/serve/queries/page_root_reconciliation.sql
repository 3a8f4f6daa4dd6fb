-- Roots whose trees hold a loop with disagreeing ledgers, for the page (GET
-- /api/reconciliation): root_reconciliation_rollup's columns, most loops
-- disagreeing first, money as Decimal128 in two pieces.
-- param: limit UInt64 50
SELECT root_loop_id, loops, loops_disagreeing,
       decimal_text(tree_model_cost_pico) AS tree_model_cost_text,
       decimal_text(tree_model_budget_pico) AS tree_model_budget_text,
       decimal_text(tree_budget_pico) AS tree_budget_text
FROM
(
    SELECT root_loop_id, loops, loops_disagreeing, tree_model_cost_pico, tree_model_budget_pico, tree_budget_pico
    FROM root_reconciliation_rollup
    WHERE loops_disagreeing > 0
    ORDER BY loops_disagreeing DESC
    LIMIT {limit:UInt64}
) AS roots;
