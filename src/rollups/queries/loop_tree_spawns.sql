-- The loop tree's parent side, for the rollup job's fold: which loop's
-- SubAgentSpawned names each child, by the rules of loop_spawns (0009) without
-- FINAL (as loop_tree_links.sql). A fork's replayed SubAgentSpawned names its
-- source's child and is left out.
SELECT child, any(parent) AS spawned_by
FROM
(
    SELECT loop_id, seq, child_loop_id AS child, loop_id AS parent
    FROM envelopes
    WHERE kind_class = 'SubAgentSpawned' AND child_loop_id != '' AND verdict NOT IN ('malformed', 'fork')
) AS spawns
ANY LEFT JOIN
(
    SELECT loop_id, max(fork_at_seq) AS replayed_to
    FROM envelopes
    WHERE kind_class = 'ForkedFrom' AND verdict NOT IN ('malformed', 'fork')
    GROUP BY loop_id
) AS forks USING loop_id
WHERE seq > replayed_to
GROUP BY child;
