-- The `spend_budget` rule's name scope (src/alerts/budgets.ts): per loop name
-- (scope_key: LoopStarted.name as the rollups' loop tree holds it), the
-- runtime's counted spend in the committed rollup hours [since, until] (Unix
-- seconds: UTC midnight and `now`), from spend_rollup_model_hour filtered
-- here (18.16 pushes no predicate into a view). Names without spend return
-- no row. Decimal128 sums as two integers below 10^20 (cost = cost_hi *
-- 10^18 + cost_lo): 18.16 prints 10^21 and up wrongly.
-- param: keys Array(String) ('triage', 'fix-tests')
-- param: since UInt32 1764547200
-- param: until UInt32 1764590400
WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT scope_key, toString(intDiv(cost, e18)) AS cost_hi, toString(cost - intDiv(cost, e18) * e18) AS cost_lo
FROM
(
    SELECT loop_name AS scope_key, sum(cost_pico) AS cost
    FROM spend_rollup_model_hour
    WHERE source = 'runtime' AND loop_name IN {keys:Array(String)}
      AND hour >= toDateTime({since:UInt32}) AND hour <= toDateTime({until:UInt32})
      AND (hour, version) IN
      (
          SELECT hour, max(version)
          FROM rollup_commits
          WHERE hour >= toDateTime({since:UInt32}) AND hour <= toDateTime({until:UInt32})
          GROUP BY hour
      )
    GROUP BY scope_key
);
