-- The `spend_budget` rule's name scope (src/alerts/budgets.ts): per loop name
-- (scope_key: LoopStarted.name as the rollups' loop tree holds it), the
-- runtime's counted spend in the committed rollup hours [since, until] (Unix
-- seconds: UTC midnight and `now`), from spend_rollup_model_hour filtered
-- here (18.16 pushes no predicate into a view). Names without spend return
-- no row. Decimal128 sums as their exact text, decimal_text().
-- param: keys Array(String) ('triage', 'fix-tests')
-- param: since UInt32 1764547200
-- param: until UInt32 1764590400
SELECT scope_key, decimal_text(cost) AS cost_text
FROM
(
    SELECT loop_name AS scope_key, sum(cost_pico) AS cost
    FROM spend_rollup_model_hour
    WHERE source = 'runtime' AND loop_name IN {keys:Array(String)}
      AND hour >= toDateTime({since:UInt32}) AND hour <= toDateTime({until:UInt32})
      AND include(committed_hours_through)
    GROUP BY scope_key
);
