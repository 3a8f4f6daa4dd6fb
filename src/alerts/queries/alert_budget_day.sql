-- The `spend_budget` rule's daily scope (src/alerts/budgets.ts): counted
-- spend of every source in the committed rollup hours [since, until] (Unix
-- seconds: a UTC midnight and `now`, or the day's last second), from
-- spend_rollup_model_hour filtered here rather than through its view (18.16
-- pushes no predicate into a view). The sum is Decimal128, returned as its
-- exact text, decimal_text() (docs/spend.md "Exact money text").
-- param: since UInt32 1764547200
-- param: until UInt32 1764590400
SELECT decimal_text(cost) AS cost_text
FROM
(
    SELECT sum(cost_pico) AS cost
    FROM spend_rollup_model_hour
    WHERE hour >= toDateTime({since:UInt32}) AND hour <= toDateTime({until:UInt32})
      AND include(committed_hours_through)
);
