-- What loop_roots (the rollup sweep's fold of the tree) links to the loops
-- {loop_ids}: their own rows, the rows of loops whose root or parent is one
-- of them. Stale versions too, should a condition be read before FINAL: a
-- candidate more, never one less.
-- param: loop_ids Array(String) ['loop-a', 'loop-b']
SELECT loop_id, root_loop_id, parent_loop_id
FROM loop_roots FINAL
WHERE loop_id IN {loop_ids:Array(String)} OR root_loop_id IN {loop_ids:Array(String)} OR parent_loop_id IN {loop_ids:Array(String)};
