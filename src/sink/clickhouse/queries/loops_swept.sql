-- The newest ingest stamp the finished rollup sweeps saw (Unix seconds) and
-- how many sweep records there are (0: no sweep has finished, loop_roots
-- cannot be trusted to hold the tree).
SELECT toUInt32(max(seen_through)) AS swept_through, count() AS sweeps
FROM rollup_sweeps;
