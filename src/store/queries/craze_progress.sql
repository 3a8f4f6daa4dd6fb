-- The consumer's durable progress in one partition of the craze topic (see
-- envelope_progress.sql).
-- param: topic String 'craze.events'
-- param: partition UInt32 0
-- param: since UInt32 1764504000
SELECT toString(max(kafka_offset) + 1) AS next_offset, count() AS n
FROM craze_events
WHERE ingested_at >= toDateTime({since:UInt32})
  AND kafka_topic = {topic:String} AND kafka_partition = {partition:UInt32};
