-- Per stored part of envelopes and Kafka partition number, the first and last
-- Kafka offset it holds. Two copies of one key share (kafka_topic,
-- kafka_partition, kafka_offset) and are in two parts, so parts whose ranges
-- do not overlap hold no key twice (reads.ts partsMayDuplicate). The topic is
-- left out: reading it costs a third more, and two topics' overlapping ranges
-- only send the caller to the FINAL read (envelopes come from one topic).
-- Parts never change: a name read here describes the same rows later.
SELECT _part AS part, kafka_partition, min(kafka_offset) AS first_offset, max(kafka_offset) AS last_offset
FROM envelopes
GROUP BY _part, kafka_partition;
