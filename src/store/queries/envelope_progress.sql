-- The consumer's durable progress in one Kafka partition: the offset after the
-- last record whose row is in ClickHouse (0 when there is none). Read after a
-- restart or a rebalance: records below it were processed already. Only rows
-- inserted since `since` (Unix seconds) are read: every row of a later offset
-- than the last commit was inserted after it, and each part carries the
-- min/max of its ingested_at, so older parts are skipped unread.
-- param: topic String 'agent.envelopes'
-- param: partition UInt32 0
-- param: since UInt32 1764504000
SELECT toString(max(kafka_offset) + 1) AS next_offset, count() AS n
FROM envelopes
WHERE ingested_at >= toDateTime({since:UInt32})
  AND kafka_topic = {topic:String} AND kafka_partition = {partition:UInt32};
