-- The children each of the loops {loop_ids} spawned, by the rule of view
-- loop_spawns (0009): SubAgentSpawned rows neither malformed nor a second
-- version, a fork's replays (seq <= its ForkedFrom's at_seq) aside; written
-- out as loop_spawn_links_of.sql is, so the primary key finds the loops. The
-- parent's side of the tree, per spawner, as loop_summaries keeps it (0020).
-- Its whole-table form is this text without its loop_ids conditions
-- (everyLoopSql() in src/rollups/rollups.ts).
-- param: loop_ids Array(String) ['loop-a', 'loop-b']
SELECT loop_id, groupUniqArray(child_loop_id) AS children
FROM
(
    SELECT loop_id, seq, child_loop_id
    FROM envelopes FINAL
    WHERE loop_id IN {loop_ids:Array(String)} AND kind_class = 'SubAgentSpawned' AND child_loop_id != '' AND verdict NOT IN ('malformed', 'fork')
) AS spawns
ANY LEFT JOIN
(
    SELECT loop_id, max(fork_at_seq) AS replayed_to
    FROM envelopes FINAL
    WHERE loop_id IN {loop_ids:Array(String)} AND kind_class = 'ForkedFrom' AND verdict NOT IN ('malformed', 'fork')
    GROUP BY loop_id
) AS forks USING loop_id
WHERE seq > replayed_to
GROUP BY loop_id
ORDER BY loop_id;
