-- The `spend_budget` rule's root scope (src/alerts/budgets.ts): per root
-- (scope_key: a root loop id, or a craze session id, its own root), the
-- counted spend of its whole tree over all time, from the committed rows of
-- spend_rollup_root_hour (each call once: a fork's replays are its source's,
-- a parent's child_spend is never added). Roots without spend return no row.
-- Decimal128 sums as their exact text, decimal_text().
-- param: keys Array(String) ('root-a', 'root-b')
SELECT scope_key, decimal_text(cost) AS cost_text
FROM
(
    SELECT root_loop_id AS scope_key, sum(cost_pico) AS cost
    FROM spend_rollup_root_hour
    WHERE root_loop_id IN {keys:Array(String)}
      AND (hour, version) IN (SELECT hour, max(version) FROM rollup_commits GROUP BY hour)
    GROUP BY scope_key
);
