-- The loops the alert sweep looks at: every loop with a row ingested since
-- `since_age` (Unix seconds: now less AGENTLEDGER_ALERT_MAX_AGE_MS) and an
-- envelope timed since then too (a backfill of older traffic does not page),
-- that is new since the last sweep (`since_new`), not finished (it may stall
-- or wait on a human), or has a gap (its grace may run out).
-- param: since_age UInt32 1764460800
-- param: since_new UInt32 1764547200
SELECT loop_id
FROM envelopes
WHERE ingested_at >= toDateTime({since_age:UInt32})
GROUP BY loop_id
HAVING max(time) >= toDateTime({since_age:UInt32})
   AND (max(ingested_at) >= toDateTime({since_new:UInt32})
        OR countIf(kind_class = 'LoopFinished') = 0
        OR countIf(verdict = 'gap') > 0);
