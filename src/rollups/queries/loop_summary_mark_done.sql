-- Records a finished loop-summary step (0020): every loop with no row
-- ingested at or after `seen_through` (Unix seconds) less the late margin
-- has its exact row in loop_summaries.
-- param: version UInt64 7
-- param: seen_through UInt32 1764504000
INSERT INTO loop_summary_marks (mark, version, seen_through, finished_at)
VALUES (0, {version:UInt64}, toDateTime({seen_through:UInt32}), now());
