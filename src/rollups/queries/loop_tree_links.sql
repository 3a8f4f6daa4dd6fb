-- The loop tree's child side, for the rollup job's fold (account/loop-tree.ts):
-- each loop's LoopStarted parent, depth and name, by the rules of
-- runtime_loops (0009) but without FINAL (a row stored twice is the same row,
-- and argMax agrees on copies): this runs on every sweep that saw a new loop.
SELECT loop_id,
       argMax(parent_loop_id, seq) AS started_parent,
       argMax(depth, seq) AS started_depth,
       argMax(loop_name, seq) AS name
FROM envelopes
WHERE kind_class = 'LoopStarted' AND verdict NOT IN ('malformed', 'fork')
GROUP BY loop_id;
