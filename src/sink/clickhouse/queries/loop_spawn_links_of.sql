-- loop_spawn_links.sql for the children the loops {loop_ids} spawned: the
-- rules of view loop_spawns (0009) written out, `loop_id IN {loop_ids}`
-- inside each `envelopes FINAL` so the primary key finds the spawners'
-- ranges (as runtime_loop_rows_of.sql).
-- param: loop_ids Array(String) ['loop-a', 'loop-b']
SELECT child_loop_id AS child, any(loop_id) AS spawned_by
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
GROUP BY child_loop_id
ORDER BY child;
