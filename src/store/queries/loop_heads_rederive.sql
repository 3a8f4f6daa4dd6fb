-- loop_heads for the rows of one partition stored at or past offset `from`
-- (inserted at or after `since`, Unix seconds): what a consumer that died
-- between its envelopes insert and its loop_heads insert left out. Every
-- head-moving row goes in (verdicts as in envelope_heads.sql);
-- ReplacingMergeTree(seq) keeps each loop's highest, and readers take the
-- highest seq per loop, so running it twice changes nothing.
-- param: topic String 'agent.envelopes'
-- param: partition UInt32 0
-- param: from UInt64 1200
-- param: since UInt32 1764504000
INSERT INTO loop_heads (loop_id, seq, hash, computed_hash, time_text, verdict, kafka_topic, kafka_partition, kafka_offset, ingested_at)
SELECT loop_id, seq, hash, computed_hash, time_text, verdict, kafka_topic, kafka_partition, kafka_offset, ingested_at
FROM envelopes
WHERE ingested_at >= toDateTime({since:UInt32})
  AND kafka_topic = {topic:String}
  AND kafka_partition = {partition:UInt32}
  AND kafka_offset >= {from:UInt64}
  AND verdict IN ('ok', 'mismatch', 'gap', 'time_regression');
