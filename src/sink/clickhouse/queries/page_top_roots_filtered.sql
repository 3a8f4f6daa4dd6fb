-- Top roots for the page (GET /api/roots) when a model or loop name filter
-- is set: the roots' counted spend of those calls only, from the per-loop
-- committed rollup rows (spend_rollup_hour: it keeps model, loop name and
-- root) in hours [{since}, {until}); page_top_roots.sql reads the coarser
-- per-root table when no such filter is set. Costliest first, sorted by the
-- Decimal128 alone (docs/spend.md "Rollups"); cost in two pieces.
-- param: since UInt32 1764028800
-- param: until UInt32 1764633600
-- param: source String ''
-- param: model String 'gpt-4.1'
-- param: name String ''
-- param: limit UInt64 20
SELECT source, root_loop_id, loop_name, toString(calls) AS calls_text, decimal_text(cost) AS cost_text,
       toString(first_hour) AS first_hour_text, toString(last_hour) AS last_hour_text
FROM
(
    SELECT source, root_loop_id, calls, cost, first_hour, last_hour
    FROM
    (
        SELECT source, root_loop_id, sum(calls) AS calls, sum(cost_pico) AS cost, min(hour) AS first_hour, max(hour) AS last_hour
        FROM spend_rollup_hour
        WHERE hour >= toDateTime({since:UInt32}) AND hour < toDateTime({until:UInt32})
          AND ({source:String} = '' OR source = {source:String})
          AND ({model:String} = '' OR model = {model:String})
          AND ({name:String} = '' OR loop_name = {name:String})
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
