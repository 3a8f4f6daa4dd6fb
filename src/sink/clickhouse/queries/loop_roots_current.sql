-- The loop roots and names the rollup job last wrote.
SELECT loop_id, root_loop_id, loop_name
FROM loop_roots FINAL;
