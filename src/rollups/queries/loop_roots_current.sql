-- The loop places and names the rollup job last wrote.
SELECT loop_id, root_loop_id, loop_name, parent_loop_id, ancestors
FROM loop_roots FINAL;
