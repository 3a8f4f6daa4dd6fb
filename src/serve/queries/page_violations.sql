-- Chain violations with their evidence for the page (GET /api/violations):
-- the rows of chain_violations_now (migration 0021: as chain_violations has
-- them, each key as FINAL keeps it; kept by the rollup sweep for loops not
-- changed since, the 0019 logic by primary key for the others) ingested at
-- or after {since} (Unix seconds), the newest ingested first. carried_hash
-- is the envelope's own hash, expected_hash the one recomputed ('' for a
-- gap); for a fork, evidence is the stored first version (JSON: hash, time,
-- kind, payload) and payload the second's.
-- param: since UInt32 1762041600
-- param: limit UInt64 50
SELECT loop_id, seq, verdict AS verdict_text, detail AS detail_text, kind AS kind_text, time_text AS time_of,
       carried_hash, expected_hash, payload AS payload_text, evidence AS evidence_text,
       toString(ingested_at) AS ingested_text
FROM chain_violations_now
WHERE ingested_at >= toDateTime({since:UInt32})
ORDER BY ingested_at DESC, loop_id, seq, kafka_topic, kafka_partition, kafka_offset
LIMIT {limit:UInt64};
