-- loop_spawn_links.sql for the children the loops {loop_ids} spawned: the
-- rules of view loop_spawns (0009) written out, `loop_id IN {loop_ids}`
-- inside each `envelopes FINAL` so the primary key finds the spawners'
-- ranges (as runtime_loop_rows_of.sql): fragments/counted_spawns.sql.
-- param: loop_ids Array(String) ['loop-a', 'loop-b']
SELECT child_loop_id AS child, any(loop_id) AS spawned_by
FROM
include(counted_spawns)
GROUP BY child_loop_id
ORDER BY child;
