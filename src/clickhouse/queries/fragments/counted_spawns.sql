-- The SubAgentSpawned rows of the loops {loop_ids} that count, by the rule
-- of view loop_spawns (0009): neither malformed nor a second version, with a
-- child named, a fork's replays (seq <= its ForkedFrom's at_seq) left to its
-- source; rows (loop_id, seq, child_loop_id) for the includer's FROM, the
-- loops' condition inside each `envelopes FINAL` so the primary key finds
-- them (an everyLoopSql() form drops it).
(
    SELECT loop_id, seq, child_loop_id
    FROM envelopes FINAL
    WHERE loop_id IN {loop_ids:Array(String)} AND kind_class = 'SubAgentSpawned' AND child_loop_id != '' AND verdict NOT IN ('malformed', 'fork')
) AS spawns
include(replayed_to_join)
WHERE seq > replayed_to
