-- Every craze codec event agentledger has processed, once per
-- (session_id, incarnation, seq), with what agentledger derived from it:
-- the spend of a usage report, a turn's or a sub-agent's outcome, a tool
-- call, an ask, a compaction, an error.
--
-- Exactly-once as for envelopes (0001): one insert per flush, partitioned by
-- ingested_at so an insert is one part, max(kafka_offset) per partition is the
-- consumer's durable progress, and a key that includes the Kafka offset lets
-- a row repeated by a consumer that lost its partition collapse.
--
-- verdict: 'ok'; 'gap' (seq skipped ahead of the last one stored: the events
-- between are missing); 'late' (a seq below the last one stored that was never
-- seen: stored, not used for spend); 'malformed' (the record could not be
-- decoded: raw text in event, base64, reason in detail). Duplicates are dropped.
--
-- Money is Int64 picodollars; sums widen to Decimal128 in the queries.
CREATE TABLE IF NOT EXISTS craze_events
(
    session_id            String,
    incarnation           String,
    seq                   UInt64,
    event_type            String,
    -- The event's own time (at), else the time it was ingested; at_text is verbatim.
    at                    DateTime('UTC'),
    at_text               String,
    -- The sub-agent whose transcript the event belongs to ('' for the session's own).
    agent                 String,
    replayed              UInt8,
    -- The codec event verbatim (JSON text).
    event                 String,
    verdict               String,
    detail                String,
    -- From the journal header when the record came through `craze push`.
    cwd                   String,
    provider              String,
    craze_version         String,
    -- The model in force (the latest state.model of the incarnation).
    model                 String,
    -- A counted usage report (session-level meta with state.usage, not replayed),
    -- and its spend: max(session growth, turn growth, 0) per field.
    report                UInt8,
    cost_pico             Int64,
    input_tokens          Int64,
    output_tokens         Int64,
    reasoning_tokens      Int64,
    cache_read_tokens     Int64,
    cache_creation_tokens Int64,
    unpriced              UInt8,
    -- Turn endings: done, failed or cancelled; synthetic when craze wrote it itself.
    turn_id               String,
    turn_outcome          String,
    turn_synthetic        UInt8,
    err_class             String,
    -- Sub-agent roster changes: spawned, progress, finished; status on finish.
    subagent_id           String,
    subagent_attempt      String,
    subagent_change       String,
    subagent_status       String,
    tool_name             String,
    tool_kind             String,
    tool_status           String,
    tool_exit_code        Int64,
    ask_kind              String,
    ask_outcome           String,
    ask_by                String,
    compaction_phase      String,
    compaction_reason     String,
    tokens_before         Int64,
    tokens_after          Int64,
    error_class           String,
    error_code            Int64,
    -- The incarnation's accounting state after this event (JSON), read back
    -- after a restart or a rebalance to go on exactly where it was.
    account_state         String,
    kafka_topic           String,
    kafka_partition       UInt32,
    kafka_offset          UInt64,
    ingested_at           DateTime('UTC')
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ingested_at)
ORDER BY (session_id, incarnation, seq, kafka_topic, kafka_partition, kafka_offset);
