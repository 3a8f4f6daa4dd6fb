-- The last finished loop-summary step (0020): its version and the newest
-- ingest stamp it saw (Unix seconds); marks 0 when none has finished.
SELECT toUInt32(max(seen_through)) AS seen_through, max(version) AS version, count() AS marks
FROM loop_summary_marks FINAL;
