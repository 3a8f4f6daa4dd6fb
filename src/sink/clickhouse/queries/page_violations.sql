-- Chain violations with their evidence for the page (GET /api/violations):
-- the envelopes whose verdict is not ok (the chain_violations view's rows),
-- ingested at or after {since} (Unix seconds: partitions by ingest month
-- before it are not read), the newest ingested first. The {limit} newest
-- (loop, seq) are found from the small columns alone (PREWHERE on the
-- verdict), then only their rows are read, by primary key, and deduplicated
-- by the table's key as FINAL would: the payloads of every envelope are never
-- scanned. carried_hash is the envelope's own hash, expected_hash the one
-- recomputed ('' for a gap); for a fork, evidence is the stored first version
-- (JSON: hash, time, kind, payload) and payload the second's.
-- param: since UInt32 1762041600
-- param: limit UInt64 50
SELECT loop_id, seq, any(verdict) AS verdict_text, any(detail) AS detail_text, any(kind) AS kind_text, any(time_text) AS time_of,
       any(hash) AS carried_hash, any(computed_hash) AS expected_hash, any(payload) AS payload_text, any(evidence) AS evidence_text,
       max(ingested_at) AS ingested_max, toString(ingested_max) AS ingested_text
FROM envelopes
WHERE (loop_id, seq) IN
(
    SELECT loop_id, seq
    FROM envelopes
    PREWHERE verdict != 'ok'
    WHERE ingested_at >= toDateTime({since:UInt32})
    GROUP BY loop_id, seq
    ORDER BY max(ingested_at) DESC, loop_id, seq
    LIMIT {limit:UInt64}
)
  AND verdict != 'ok' AND ingested_at >= toDateTime({since:UInt32})
GROUP BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset
ORDER BY ingested_max DESC, loop_id, seq;
