-- Reconciliation of each loop's ledgers (issue 10): the same money as three
-- parties saw it, side by side, exactly, with the differences.
--
-- - the loop's own envelopes, verified only: its ModelCalled costs against
--   its BudgetCharged of action_type 'model' (a fork's replayed events left
--   out: a replay may stop between a call and its charge, and the source
--   reconciles them), and all its BudgetCharged usd against the two reports
--   (a fork's replayed charges included: its runtime rebuilt its ledger from
--   them, so the totals it reports include them);
-- - LoopFinished.total_spend: what the loop's runtime says it spent;
-- - the parent's SubAgentCompleted.child_spend: what the parent's ledger was
--   charged for this child.
--
-- Known numeric members of the spend summaries are read exactly (spend_pico,
-- migration 0008); the runtime sums them as float64, so a disagreement is
-- flagged only beyond a tolerance: one microdollar (10^6 picodollars), or a
-- billionth of the amount when larger. The differences themselves are exact.
-- A flag is a judgement, not money: it is computed in Float64.
CREATE VIEW IF NOT EXISTS loop_reconciliation AS
SELECT
    loop_id,
    toString(model_cost) AS model_cost_pico,
    toString(model_budget) AS model_budget_pico,
    toString(budget) AS budget_pico,
    has_total_spend,
    toString(total_spend) AS total_spend_pico,
    has_child_spend,
    toString(child_spend) AS child_spend_pico,
    toString(model_cost - model_budget) AS model_minus_model_budget_pico,
    toString(budget - total_spend) AS budget_minus_total_spend_pico,
    toString(budget - child_spend) AS budget_minus_child_spend_pico,
    abs(toFloat64(model_cost - model_budget)) > greatest(1e6, abs(toFloat64(model_budget)) * 1e-9) AS model_disagrees,
    has_total_spend AND abs(toFloat64(budget - total_spend)) > greatest(1e6, abs(toFloat64(total_spend)) * 1e-9) AS total_spend_disagrees,
    has_child_spend AND abs(toFloat64(budget - child_spend)) > greatest(1e6, abs(toFloat64(child_spend)) * 1e-9) AS child_spend_disagrees,
    model_disagrees OR total_spend_disagrees OR child_spend_disagrees AS disagrees
FROM
(
    SELECT loop_id, model_cost, model_budget, budget, has_total_spend, total_spend, has_child_spend, toDecimal128(child_spend_reported, 0) AS child_spend
    FROM
    (
        SELECT
            loop_id,
            sumIf(toDecimal128(cost_pico, 0), kind_class = 'ModelCalled' AND verified AND seq > replayed_to) AS model_cost,
            sumIf(toDecimal128(budget_pico, 0), kind_class = 'BudgetCharged' AND verified AND action_type = 'model' AND seq > replayed_to) AS model_budget,
            sumIf(toDecimal128(budget_pico, 0), kind_class = 'BudgetCharged' AND verified) AS budget,
            countIf(kind_class = 'LoopFinished' AND spend_raw != '') > 0 AS has_total_spend,
            toDecimal128(argMaxIf(spend_pico, seq, kind_class = 'LoopFinished'), 0) AS total_spend
        FROM
        (
            SELECT loop_id, seq, kind_class, cost_pico, budget_pico, action_type, spend_raw, spend_pico,
                   verdict IN ('ok', 'gap', 'time_regression') AS verified
            FROM envelopes FINAL
            WHERE kind_class IN ('ModelCalled', 'BudgetCharged', 'LoopFinished') AND verdict NOT IN ('malformed', 'fork')
        ) AS ledger_rows
        ANY LEFT JOIN (SELECT loop_id, replayed_to FROM loop_forks) AS forks USING loop_id
        GROUP BY loop_id
    ) AS own
    ANY LEFT JOIN
    (
        -- The parent's report, by child (a fork's replayed report names its source's child: left out).
        SELECT child_loop_id AS loop_id, argMax(spend_pico, seq) AS child_spend_reported, 1 AS has_child_spend
        FROM
        (
            SELECT loop_id AS reporter, seq, child_loop_id, spend_pico
            FROM envelopes FINAL
            WHERE kind_class = 'SubAgentCompleted' AND child_loop_id != '' AND spend_raw != '' AND verdict NOT IN ('malformed', 'fork')
        ) AS reports
        ANY LEFT JOIN (SELECT loop_id AS reporter, replayed_to FROM loop_forks) AS forks USING reporter
        WHERE seq > replayed_to
        GROUP BY child_loop_id
    ) AS reported USING loop_id
) AS sides;
