-- Writes these loops' own ledger sums into loop_ledgers under `version`
-- (0015), as loop_reconciliation sums them (0011, 0012): deduplicated rows
-- neither malformed nor a second version; model cost and model budget from
-- verified links, a fork's replays (seq <= its ForkedFrom's at_seq) aside;
-- every budget charge; the last LoopFinished's total_spend. Spelled out so
-- the loop filter reaches the FINAL read on 18.16; the rollups test checks
-- the two agree.
-- Its whole-table form (a rebuild, a sweep of many loops) is this text
-- without its loop_ids conditions: everyLoopSql() in src/rollups/statements.ts.
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
-- param: version UInt64 7
INSERT INTO loop_ledgers (loop_id, version, model_cost, model_budget, budget, has_total_spend, total_spend)
SELECT loop_id, {version:UInt64},
       sumIf(toDecimal128(cost_pico, 0), kind_class = 'ModelCalled' AND verified AND seq > replayed_to),
       sumIf(toDecimal128(budget_pico, 0), kind_class = 'BudgetCharged' AND verified AND action_type = 'model' AND seq > replayed_to),
       sumIf(toDecimal128(budget_pico, 0), kind_class = 'BudgetCharged' AND verified),
       countIf(kind_class = 'LoopFinished' AND spend_raw != '') > 0,
       toDecimal128(argMaxIf(spend_pico, seq, kind_class = 'LoopFinished'), 0)
FROM
(
    SELECT loop_id, seq, kind_class, cost_pico, budget_pico, action_type, spend_raw, spend_pico,
           verdict IN ('ok', 'gap', 'time_regression') AS verified
    FROM envelopes FINAL
    WHERE loop_id IN {loop_ids:Array(String)}
      AND kind_class IN ('ModelCalled', 'BudgetCharged', 'LoopFinished') AND verdict NOT IN ('malformed', 'fork')
) AS ledger_rows
include(replayed_to_join)
GROUP BY loop_id;
