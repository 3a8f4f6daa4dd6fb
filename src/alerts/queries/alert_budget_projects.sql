-- The `spend_budget` rule's project scope (src/alerts/budgets.ts): per craze
-- project (scope_key: a session's cwd, as craze_sessions takes it), the
-- counted spend of its sessions in the committed rollup hours [since, until]
-- (Unix seconds: UTC midnight and `now`). Spend per session (its own root)
-- from spend_rollup_root_hour; the cwd only of the sessions with spend in
-- those hours, found by craze_events' primary key (no FINAL: a repeated row
-- has the same cwd). Projects without spend return no row. Decimal128 sums
-- as their exact text, decimal_text().
-- param: keys Array(String) ('/home/dev/src/shop', '/home/dev/src/infra')
-- param: since UInt32 1764547200
-- param: until UInt32 1764590400
SELECT scope_key, decimal_text(cost) AS cost_text
FROM
(
    SELECT scope_key, sum(session_cost) AS cost
    FROM
    (
        SELECT root_loop_id AS session_id, sum(cost_pico) AS session_cost
        FROM spend_rollup_root_hour
        WHERE source = 'craze'
          AND hour >= toDateTime({since:UInt32}) AND hour <= toDateTime({until:UInt32})
          AND include(committed_hours_through)
        GROUP BY session_id
    ) AS spent
    ANY INNER JOIN
    (
        SELECT session_id, anyIf(cwd, cwd != '') AS scope_key
        FROM craze_events
        WHERE verdict != 'malformed'
          AND session_id IN
          (
              SELECT root_loop_id
              FROM spend_rollup_root_hour
              WHERE source = 'craze' AND hour >= toDateTime({since:UInt32}) AND hour <= toDateTime({until:UInt32})
          )
        GROUP BY session_id
        HAVING scope_key IN {keys:Array(String)}
    ) AS sessions USING session_id
    GROUP BY scope_key
);
