-- Top roots for the page (GET /api/roots): counted spend per source and root
-- (spend_rollup_root_hour, committed hours) in hours [{since}, {until}),
-- costliest first, with each runtime root's loop name (loop_roots). Filtered
-- here, not through the top_roots view (18.16 pushes no predicate into a
-- view); sorted by the Decimal128 alone (docs/spend.md "Rollups"). Cost in two pieces.
-- param: since UInt32 1764028800
-- param: until UInt32 1764633600
-- param: source String ''
-- param: limit UInt64 20
SELECT source, root_loop_id, loop_name, toString(calls) AS calls_text, decimal_text(cost) AS cost_text,
       toString(first_hour) AS first_hour_text, toString(last_hour) AS last_hour_text
FROM
(
    SELECT source, root_loop_id, calls, cost, first_hour, last_hour
    FROM
    (
        SELECT source, root_loop_id, sum(calls) AS calls, sum(cost_pico) AS cost, min(hour) AS first_hour, max(hour) AS last_hour
        FROM spend_rollup_root_hour
        WHERE hour >= toDateTime({since:UInt32}) AND hour < toDateTime({until:UInt32})
          AND ({source:String} = '' OR source = {source:String})
          AND (hour, version) IN
          (
              SELECT hour, max(version) FROM rollup_commits
              WHERE hour >= toDateTime({since:UInt32}) AND hour < toDateTime({until:UInt32})
              GROUP BY hour
          )
        GROUP BY source, root_loop_id
    ) AS sums
    ORDER BY cost DESC
    LIMIT {limit:UInt64}
) AS tops
ANY LEFT JOIN (SELECT loop_id AS root_loop_id, loop_name FROM loop_roots FINAL) AS names USING root_loop_id;
