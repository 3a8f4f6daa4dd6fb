-- What `loops` reads first: the newest ingest stamp the finished rollup
-- sweeps saw and how many there are (0: loop_roots cannot be trusted to hold
-- the tree), and the same of the loop-summary steps (0020; 0: loop_summaries
-- holds no row to trust). Unix seconds.
SELECT
    (SELECT toUInt32(max(seen_through)) FROM rollup_sweeps) AS swept_through,
    (SELECT count() FROM rollup_sweeps) AS sweeps,
    (SELECT toUInt32(max(seen_through)) FROM loop_summary_marks FINAL) AS summarized_through,
    (SELECT count() FROM loop_summary_marks FINAL) AS summary_marks;
