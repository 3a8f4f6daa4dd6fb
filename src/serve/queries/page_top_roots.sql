-- Top roots for the page (GET /api/roots): counted spend per source and root
-- (spend_rollup_root_hour, committed hours) in hours [{since}, {until}),
-- costliest first, with each runtime root's loop name (loop_roots). Filtered
-- here, not through the top_roots view (18.16 pushes no predicate into a
-- view); sorted by the Decimal128 alone (docs/spend.md "Rollups"). Its columns,
-- sums and hours condition are fragments page_top_roots_filtered.sql shares.
-- param: since UInt32 1764028800
-- param: until UInt32 1764633600
-- param: source String ''
-- param: limit UInt64 20
SELECT include(top_roots_columns)
FROM
(
    SELECT include(root_sums)
    FROM spend_rollup_root_hour
    WHERE include(committed_hours_of_source)
    GROUP BY source, root_loop_id
    ORDER BY cost DESC
    LIMIT {limit:UInt64}
) AS tops
ANY LEFT JOIN (SELECT loop_id AS root_loop_id, loop_name FROM loop_roots FINAL) AS names USING root_loop_id;
