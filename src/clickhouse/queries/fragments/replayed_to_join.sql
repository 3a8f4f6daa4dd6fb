-- Joins each row of the loops {loop_ids} to its loop's replayed_to, the seq
-- up to which a fork loop's events replay its source's (0: not a fork), by
-- the rule of view loop_forks (0009): the ForkedFrom rows neither malformed
-- nor a second version. `loop_id IN {loop_ids}` stands inside the
-- `envelopes FINAL` read so the primary key finds the loops (18.16 pushes no
-- predicate into a view); an everyLoopSql() form drops it. The includer
-- declares loop_ids and keeps its rows with `seq > replayed_to` (or flags
-- `seq <= replayed_to`).
ANY LEFT JOIN
(
    SELECT loop_id, max(fork_at_seq) AS replayed_to
    FROM envelopes FINAL
    WHERE loop_id IN {loop_ids:Array(String)} AND kind_class = 'ForkedFrom' AND verdict NOT IN ('malformed', 'fork')
    GROUP BY loop_id
) AS forks USING loop_id
