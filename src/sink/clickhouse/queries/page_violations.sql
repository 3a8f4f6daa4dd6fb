-- Chain violations with their evidence for the page (GET /api/violations):
-- the envelopes whose verdict is not ok (the chain_violations view's rows),
-- the newest ingested first, deduplicated by the table's key after filtering
-- (not FINAL over every envelope). carried_hash is the envelope's own hash,
-- expected_hash the one recomputed ('' for a gap); for a fork, evidence is the
-- stored first version (JSON: hash, time, kind, payload) and payload the
-- second's.
-- param: limit UInt64 50
SELECT loop_id, seq, any(verdict) AS verdict_text, any(detail) AS detail_text, any(kind) AS kind_text, any(time_text) AS time_of,
       any(hash) AS carried_hash, any(computed_hash) AS expected_hash, any(payload) AS payload_text, any(evidence) AS evidence_text,
       max(ingested_at) AS ingested_max, toString(ingested_max) AS ingested_text
FROM envelopes
WHERE verdict != 'ok'
GROUP BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset
ORDER BY ingested_max DESC, loop_id, seq
LIMIT {limit:UInt64};
