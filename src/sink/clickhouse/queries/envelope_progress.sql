-- The consumer's durable progress in one Kafka partition: the offset after the
-- last record whose row is in ClickHouse (0 when there is none). Read after a
-- restart or a rebalance: records below it were processed already.
-- param: topic String 'agent.envelopes'
-- param: partition UInt32 0
SELECT toString(max(kafka_offset) + 1) AS next_offset, count() AS n
FROM envelopes
WHERE kafka_topic = {topic:String} AND kafka_partition = {partition:UInt32};
