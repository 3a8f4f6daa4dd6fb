-- These loops' chain violations and gaps (chain_integrity): the verdict, its
-- seq and detail, and when the row was ingested (ms; a gap's grace runs from
-- there).
-- param: loop_ids Array(String) ('loop-a', 'loop-b')
SELECT loop_id, seq, verdict, toUInt64(ingested_at) * 1000 AS found_ms, detail
FROM envelopes FINAL
WHERE loop_id IN {loop_ids:Array(String)} AND verdict IN ('mismatch', 'fork', 'regression', 'time_regression', 'gap');
