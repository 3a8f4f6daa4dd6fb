-- Whether loop_heads has lost the heads of one partition's rows: envelopes
-- holds head-moving rows of it (verdicts as in envelope_heads.sql) while
-- loop_heads holds none (emptied by TRUNCATE, or envelopes restored from a
-- backup without it). Heads are read from loop_heads alone, so such a
-- partition's heads are written again from every stored row before any is
-- read (loop_heads_rederive.sql from offset 0). Each side stops at its
-- first row: cheap whatever the size of either table. Each selects a
-- column, not a constant: read through remote() (the ingest on a cluster,
-- replicas.ts), 18.16 loses the WHERE columns of `SELECT 1` (code 10).
-- param: topic String 'agent.envelopes'
-- param: partition UInt32 0
SELECT
    (SELECT count() FROM (SELECT kafka_offset FROM envelopes
        WHERE kafka_topic = {topic:String} AND kafka_partition = {partition:UInt32}
          AND verdict IN ('ok', 'mismatch', 'gap', 'time_regression')
        LIMIT 1)) AS stored,
    (SELECT count() FROM (SELECT kafka_offset FROM loop_heads
        WHERE kafka_topic = {topic:String} AND kafka_partition = {partition:UInt32}
        LIMIT 1)) AS heads;
