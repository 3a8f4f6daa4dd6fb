-- The verified head of each loop: its row in loop_heads with the highest seq
-- (ReplacingMergeTree(seq) keeps one per loop once merged; until then, the
-- highest wins). loop_heads is complete for every envelopes row a reader
-- needs: its writer adds a flush's heads before it commits the flush's
-- offsets and before its own cache or pending state lets go of them, and
-- the next owner of a partition whose writer died in between writes them
-- again before reading any (loop_heads_rederive.sql). Rows that moved a
-- loop's chain forward are ok, mismatch, gap and time_regression; a fork, a
-- regression or a malformed record never moves it.
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
SELECT loop_id, seq, hash, computed_hash, time_text, verdict, kafka_partition
FROM loop_heads
WHERE loop_id IN {loop_ids:Array(String)}
ORDER BY loop_id, seq DESC
LIMIT 1 BY loop_id;
