-- The children each of the loops {loop_ids} spawned, by the rule of view
-- loop_spawns (0009): SubAgentSpawned rows neither malformed nor a second
-- version, a fork's replays (seq <= its ForkedFrom's at_seq) aside; the rows
-- of fragments/counted_spawns.sql, as loop_spawn_links_of.sql reads them. The
-- parent's side of the tree, per spawner, as loop_summaries keeps it (0020).
-- Its whole-table form is this text without its loop_ids conditions
-- (everyLoopSql() in src/rollups/statements.ts).
-- param: loop_ids Array(String) ['loop-a', 'loop-b']
SELECT loop_id, groupUniqArray(child_loop_id) AS children
FROM
include(counted_spawns)
GROUP BY loop_id
ORDER BY loop_id;
