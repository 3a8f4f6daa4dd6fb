-- craze's sub-agent outcomes (subagent_failure_rate, subject craze:<type>):
-- per (incarnation, id, attempt) its last `finished` roster row by seq, as
-- craze_subagents (0004) reads them: its type (the roster row's subagentType,
-- from the event text: craze_events has no column for it) and status,
-- finished at or after `since_ms`, of rows ingested at or after
-- `since_ingest` (Unix seconds: only recent partitions are read). Replays,
-- sub-agents' own transcripts and malformed rows aside.
-- param: since_ms UInt64 1764547200000
-- param: since_ingest UInt32 1764543600
SELECT subagent_type, status, at_ms
FROM
(
    SELECT session_id, incarnation, subagent_id, subagent_attempt,
           argMax(visitParamExtractString(event, 'subagentType'), seq) AS subagent_type,
           argMax(subagent_status, seq) AS status,
           toUInt64(max(at)) * 1000 AS at_ms
    FROM craze_events FINAL
    WHERE subagent_change = 'finished' AND replayed = 0 AND agent = '' AND verdict != 'malformed'
      AND ingested_at >= toDateTime({since_ingest:UInt32})
    GROUP BY session_id, incarnation, subagent_id, subagent_attempt
)
WHERE at_ms >= {since_ms:UInt64};
