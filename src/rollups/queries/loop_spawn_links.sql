-- The parent's side of the loop tree: which loop spawned which child.
SELECT child, spawned_by
FROM loop_spawns
ORDER BY child;
