-- Per stored part of envelopes and Kafka partition, the first and last Kafka
-- offset it holds. Two copies of one key share (kafka_topic, kafka_partition,
-- kafka_offset) and are in two parts, so parts whose ranges do not overlap hold
-- no key twice (reads.ts partsMayDuplicate). Parts never change: a name read
-- here describes the same rows later.
SELECT _part AS part, kafka_topic, kafka_partition, min(kafka_offset) AS first_offset, max(kafka_offset) AS last_offset
FROM envelopes
GROUP BY _part, kafka_topic, kafka_partition;
