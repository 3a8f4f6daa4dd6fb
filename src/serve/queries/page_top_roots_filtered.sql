-- Top roots for the page (GET /api/roots) when a model or loop name filter
-- is set: the roots' counted spend of those calls only, from the per-loop
-- committed rollup rows (spend_rollup_hour: it keeps model, loop name and
-- root) in hours [{since}, {until}); page_top_roots.sql reads the coarser
-- per-root table when no such filter is set. Costliest first, sorted by the
-- Decimal128 alone (docs/spend.md "Rollups"); the columns, sums and hours
-- condition are the fragments page_top_roots.sql includes.
-- param: since UInt32 1764028800
-- param: until UInt32 1764633600
-- param: source String ''
-- param: model String 'gpt-4.1'
-- param: name String ''
-- param: limit UInt64 20
SELECT include(top_roots_columns)
FROM
(
    SELECT include(root_sums)
    FROM spend_rollup_hour
    WHERE ({model:String} = '' OR model = {model:String})
      AND ({name:String} = '' OR loop_name = {name:String})
      AND include(committed_hours_of_source)
    GROUP BY source, root_loop_id
    ORDER BY cost DESC
    LIMIT {limit:UInt64}
) AS tops
ANY LEFT JOIN (SELECT loop_id AS root_loop_id, loop_name FROM loop_roots FINAL) AS names USING root_loop_id;
