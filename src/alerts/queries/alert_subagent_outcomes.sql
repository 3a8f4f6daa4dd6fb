-- The loop runtime's sub-agent outcomes (SubAgentCompleted: definition and
-- outcome_kind) timed at or after `since_ms`, of rows ingested at or after
-- `since_ingest` (Unix seconds: the window's start less the late allowance,
-- so only recent partitions are read). A fork's replayed reports aside.
-- param: since_ms UInt64 1764547200000
-- param: since_ingest UInt32 1764543600
SELECT definition, outcome, toUInt64(time) * 1000 AS at_ms
FROM
(
    SELECT loop_id, seq, time, definition, outcome
    FROM envelopes FINAL
    WHERE kind_class = 'SubAgentCompleted' AND verdict NOT IN ('malformed', 'fork')
      AND ingested_at >= toDateTime({since_ingest:UInt32})
      AND toUInt64(time) * 1000 >= {since_ms:UInt64}
) AS completed
ANY LEFT JOIN
(
    SELECT loop_id, max(fork_at_seq) AS replayed_to
    FROM envelopes FINAL
    WHERE kind_class = 'ForkedFrom' AND verdict NOT IN ('malformed', 'fork')
      AND loop_id IN (SELECT loop_id FROM envelopes WHERE kind_class = 'SubAgentCompleted' AND ingested_at >= toDateTime({since_ingest:UInt32}))
    GROUP BY loop_id
) AS forks USING loop_id
WHERE seq > replayed_to;
