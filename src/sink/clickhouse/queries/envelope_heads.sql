-- The verified head of each loop: the row with the highest seq among those that
-- moved the chain forward (ok, mismatch, gap, time_regression; a fork, a
-- regression or a malformed record never moves it). Read from loop_heads (one
-- row per loop), united with the envelopes inserted since `since` (Unix
-- seconds): the rows loop_heads may not have caught up with. Pass since = 0 to
-- read every envelope (no commit to date the lag from).
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
-- param: since UInt32 1764504000
SELECT loop_id, seq, hash, computed_hash, time_text, verdict, kafka_partition
FROM
(
    SELECT loop_id, seq, hash, computed_hash, time_text, verdict, kafka_partition
    FROM loop_heads
    WHERE loop_id IN {loop_ids:Array(String)}
    UNION ALL
    SELECT loop_id, seq, hash, computed_hash, time_text, verdict, kafka_partition
    FROM envelopes
    WHERE ingested_at >= toDateTime({since:UInt32})
      AND loop_id IN {loop_ids:Array(String)}
      AND verdict IN ('ok', 'mismatch', 'gap', 'time_regression')
)
ORDER BY loop_id, seq DESC
LIMIT 1 BY loop_id;
