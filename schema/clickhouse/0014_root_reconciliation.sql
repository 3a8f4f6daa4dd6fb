-- Reconciliation per root (issue 10): a task's loops, summed from
-- loop_reconciliation (0011, 0012) and placed by loop_roots (0013; a loop it
-- does not hold is a root of its own): the tree's verified model cost and its
-- budget charges, as Decimal128, and how many of its loops' ledgers disagree.
-- Which loop disagrees, and by how much: loop_reconciliation.
CREATE VIEW IF NOT EXISTS root_reconciliation AS
SELECT root AS root_loop_id,
       count() AS loops,
       sum(toDecimal128(model_cost_pico, 0)) AS tree_model_cost_pico,
       sum(toDecimal128(model_budget_pico, 0)) AS tree_model_budget_pico,
       sum(toDecimal128(budget_pico, 0)) AS tree_budget_pico,
       countIf(disagrees) AS loops_disagreeing
FROM
(
    SELECT loop_id, if(placed_root = '', loop_id, placed_root) AS root, model_cost_pico, model_budget_pico, budget_pico, disagrees
    FROM
    (
        SELECT loop_id, model_cost_pico, model_budget_pico, budget_pico, disagrees
        FROM loop_reconciliation
    ) AS ledgers
    ANY LEFT JOIN (SELECT loop_id, root_loop_id AS placed_root FROM loop_roots FINAL) AS placed USING loop_id
) AS rooted
GROUP BY root;
