-- The schema the migrations in schema/clickhouse/ build, one statement per
-- table and view, in name order, as ClickHouse 18.16 states them (a current
-- server words a few differently). Generated: do not edit; run
-- `npm run docs:schema` after adding a migration (a test compares).

CREATE TABLE alert_sweeps (
    seen_through DateTime('UTC'),
    evaluated UInt64,
    transitions UInt64,
    finished_at DateTime('UTC')
)
ENGINE = MergeTree
ORDER BY finished_at
SETTINGS index_granularity = 8192;

CREATE TABLE alerts (
    rule String,
    subject String,
    transition_key String,
    notification String,
    state String,
    severity String,
    fired_at_ms UInt64,
    resolved_at_ms UInt64,
    at_ms UInt64,
    notifications UInt32,
    detail String,
    recorded_at DateTime('UTC')
)
ENGINE = ReplacingMergeTree
ORDER BY (rule, subject, transition_key)
SETTINGS index_granularity = 8192;

CREATE VIEW alerts_current (
    rule String,
    subject String,
    state String,
    severity String,
    fired_at_ms UInt64,
    resolved_at_ms UInt64,
    last_notified_at_ms UInt64,
    notifications UInt32,
    detail String,
    transitions UInt64
)
AS SELECT rule, subject, last_state AS state, last_severity AS severity, last_fired_at_ms AS fired_at_ms, last_resolved_at_ms AS resolved_at_ms, last_at_ms AS last_notified_at_ms, last_notifications AS notifications, last_detail AS detail, transitions
FROM (
    SELECT rule, subject, argMax(state, at_ms) AS last_state, argMax(severity, at_ms) AS last_severity, argMax(fired_at_ms, at_ms) AS last_fired_at_ms, argMax(resolved_at_ms, at_ms) AS last_resolved_at_ms, max(at_ms) AS last_at_ms, argMax(notifications, at_ms) AS last_notifications, argMax(detail, at_ms) AS last_detail, count() AS transitions
    FROM alerts FINAL
    GROUP BY rule, subject) AS latest;

CREATE VIEW chain_flag_current (
    loop_id String,
    current_version UInt64,
    current_keys UInt64
)
AS SELECT loop_id, version AS current_version, keys AS current_keys
FROM chain_flag_loops FINAL;

CREATE TABLE chain_flag_loops (
    loop_id String,
    version UInt64,
    keys UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY loop_id
SETTINGS index_granularity = 8192;

CREATE TABLE chain_flag_marks (
    mark UInt8,
    version UInt64,
    seen_through DateTime('UTC'),
    late_s UInt32,
    finished_at DateTime('UTC')
)
ENGINE = ReplacingMergeTree(version)
ORDER BY mark
SETTINGS index_granularity = 8192;

CREATE VIEW chain_flagged_loops_changed (
    loop_id String
)
AS SELECT DISTINCT loop_id
FROM envelopes
PREWHERE loop_id IN (
    SELECT loop_id
    FROM envelopes
    PREWHERE verdict != 'ok'
    UNION ALL
    SELECT loop_id
    FROM chain_flags )
WHERE ingested_at >= toDateTime((
        SELECT toUInt32(greatest(max(toInt64(toUInt32(seen_through)) - late_s), 0))
        FROM chain_flag_marks FINAL ));

CREATE TABLE chain_flags (
    loop_id String,
    version UInt64,
    seq UInt64,
    verdict String,
    detail String,
    kind String,
    time DateTime('UTC'),
    time_text String,
    carried_hash String,
    expected_hash String,
    payload String,
    evidence String,
    kafka_topic String,
    kafka_partition UInt32,
    kafka_offset UInt64,
    ingested_at DateTime('UTC'),
    kind_class String,
    cost_pico Int64,
    model_name String
)
ENGINE = MergeTree
ORDER BY (loop_id, version, seq, kafka_topic, kafka_partition, kafka_offset)
SETTINGS index_granularity = 8192;

CREATE VIEW chain_loop_keys_now (
    loop_id String,
    keys UInt64
)
AS SELECT loop_id, current_keys AS keys
FROM chain_flag_current
WHERE loop_id NOT IN (
    SELECT loop_id
    FROM chain_loops_changed )
UNION ALL
SELECT loop_id, uniqExact(seq, kafka_topic, kafka_partition, kafka_offset) AS keys
FROM envelopes
WHERE loop_id IN (
    SELECT loop_id
    FROM chain_loops_changed )
GROUP BY loop_id;

CREATE VIEW chain_loops_changed (
    loop_id String
)
AS SELECT DISTINCT loop_id
FROM envelopes
WHERE ingested_at >= toDateTime((
        SELECT toUInt32(greatest(max(toInt64(toUInt32(seen_through)) - late_s), 0))
        FROM chain_flag_marks FINAL ));

CREATE VIEW chain_violations (
    loop_id String,
    seq UInt64,
    verdict String,
    detail String,
    kind String,
    time DateTime('UTC'),
    time_text String,
    carried_hash String,
    expected_hash String,
    payload String,
    evidence String,
    kafka_topic String,
    kafka_partition UInt32,
    kafka_offset UInt64,
    ingested_at DateTime('UTC')
)
AS SELECT loop_id, seq, chosen_verdict AS verdict, chosen_detail AS detail, chosen_kind AS kind, chosen_time AS time, chosen_time_text AS time_text, chosen_hash AS carried_hash, chosen_computed AS expected_hash, chosen_payload AS payload, chosen_evidence AS evidence, kafka_topic, kafka_partition, kafka_offset, chosen_ingested AS ingested_at
FROM (
    SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset, argMax(verdict, stored_order) AS chosen_verdict, argMax(detail, stored_order) AS chosen_detail, argMax(kind, stored_order) AS chosen_kind, argMax(time, stored_order) AS chosen_time, argMax(time_text, stored_order) AS chosen_time_text, argMax(hash, stored_order) AS chosen_hash, argMax(computed_hash, stored_order) AS chosen_computed, argMax(payload, stored_order) AS chosen_payload, argMax(evidence, stored_order) AS chosen_evidence, argMax(ingested_at, stored_order) AS chosen_ingested
    FROM (
        SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset, verdict, detail, kind, time, time_text, hash, computed_hash, payload, evidence, ingested_at, (splitByChar('_', _part)[1], toUInt64(splitByChar('_', _part)[2])) AS stored_order
        FROM envelopes
        PREWHERE verdict != 'ok'
        UNION ALL
        SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset, verdict, '' AS detail, '' AS kind, toDateTime(0, 'UTC') AS time, '' AS time_text, '' AS hash, '' AS computed_hash, '' AS payload, '' AS evidence, toDateTime(0, 'UTC') AS ingested_at, (splitByChar('_', _part)[1], toUInt64(splitByChar('_', _part)[2])) AS stored_order
        FROM envelopes
        PREWHERE kafka_offset IN (
            SELECT kafka_offset
            FROM envelopes
            PREWHERE verdict != 'ok')
        WHERE verdict = 'ok') AS copies
    GROUP BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset) AS kept
WHERE chosen_verdict != 'ok';

CREATE VIEW chain_violations_now (
    loop_id String,
    seq UInt64,
    verdict String,
    detail String,
    kind String,
    time DateTime('UTC'),
    time_text String,
    carried_hash String,
    expected_hash String,
    payload String,
    evidence String,
    kafka_topic String,
    kafka_partition UInt32,
    kafka_offset UInt64,
    ingested_at DateTime('UTC'),
    kind_class String,
    cost_pico Int64,
    model_name String
)
AS SELECT loop_id, seq, verdict, detail, kind, time, time_text, carried_hash, expected_hash, payload, evidence, kafka_topic, kafka_partition, kafka_offset, ingested_at, kind_class, cost_pico, model_name
FROM chain_flags
WHERE ((loop_id, version) IN (
        SELECT loop_id, max(version)
        FROM chain_flag_loops
        WHERE loop_id IN (
            SELECT loop_id
            FROM chain_flags )
        GROUP BY loop_id)) AND (loop_id NOT IN (
        SELECT loop_id
        FROM chain_flagged_loops_changed ))
UNION ALL
SELECT loop_id, seq, chosen_verdict AS verdict, chosen_detail AS detail, chosen_kind AS kind, chosen_time AS time, chosen_time_text AS time_text, chosen_hash AS carried_hash, chosen_computed AS expected_hash, chosen_payload AS payload, chosen_evidence AS evidence, kafka_topic, kafka_partition, kafka_offset, chosen_ingested AS ingested_at, chosen_class AS kind_class, chosen_cost AS cost_pico, chosen_model AS model_name
FROM (
    SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset, argMax(verdict, stored_order) AS chosen_verdict, argMax(detail, stored_order) AS chosen_detail, argMax(kind, stored_order) AS chosen_kind, argMax(time, stored_order) AS chosen_time, argMax(time_text, stored_order) AS chosen_time_text, argMax(hash, stored_order) AS chosen_hash, argMax(computed_hash, stored_order) AS chosen_computed, argMax(payload, stored_order) AS chosen_payload, argMax(evidence, stored_order) AS chosen_evidence, argMax(ingested_at, stored_order) AS chosen_ingested, argMax(kind_class, stored_order) AS chosen_class, argMax(cost_pico, stored_order) AS chosen_cost, argMax(model_name, stored_order) AS chosen_model
    FROM (
        SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset, verdict, detail, kind, time, time_text, hash, computed_hash, payload, evidence, ingested_at, kind_class, cost_pico, model_name, (splitByChar('_', _part)[1], toUInt64(splitByChar('_', _part)[2])) AS stored_order
        FROM envelopes
        PREWHERE (verdict != 'ok') AND (loop_id IN (
                SELECT loop_id
                FROM chain_flagged_loops_changed ))
        UNION ALL
        SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset, verdict, '' AS detail, '' AS kind, toDateTime(0, 'UTC') AS time, '' AS time_text, '' AS hash, '' AS computed_hash, '' AS payload, '' AS evidence, toDateTime(0, 'UTC') AS ingested_at, '' AS kind_class, toInt64(0) AS cost_pico, '' AS model_name, (splitByChar('_', _part)[1], toUInt64(splitByChar('_', _part)[2])) AS stored_order
        FROM envelopes
        PREWHERE (loop_id, seq, kafka_topic, kafka_partition, kafka_offset) IN (
            SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset
            FROM envelopes
            PREWHERE (verdict != 'ok') AND (loop_id IN (
                    SELECT loop_id
                    FROM chain_flagged_loops_changed )))
        WHERE verdict = 'ok') AS copies
    GROUP BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset) AS kept
WHERE chosen_verdict != 'ok';

CREATE VIEW convergence_warnings (
    detector String,
    day Date,
    warnings UInt64,
    loops UInt64
)
AS SELECT detector, toDate(time) AS day, count() AS warnings, uniqExact(loop_id) AS loops
FROM (
    SELECT loop_id, seq, time, detector
    FROM envelopes FINAL
    WHERE (kind_class = 'ConvergenceWarning') AND (verdict NOT IN ('malformed', 'fork'))) AS warned
ANY LEFT JOIN (
    SELECT loop_id, replayed_to
    FROM loop_forks ) AS forks
USING (loop_id)
WHERE seq > replayed_to
GROUP BY detector, day;

CREATE VIEW convergence_warnings_daily (
    detector String,
    day Date,
    warnings UInt64,
    loops UInt64
)
AS SELECT event_label AS detector, toDate(hour) AS day, sum(event_count) AS warnings, uniqExact(event_loop) AS loops
FROM event_rollup_committed
WHERE event_kind = 'ConvergenceWarning'
GROUP BY detector, day;

CREATE TABLE craze_events (
    session_id String,
    incarnation String,
    seq UInt64,
    event_type String,
    at DateTime('UTC'),
    at_text String,
    agent String,
    replayed UInt8,
    event String,
    verdict String,
    detail String,
    cwd String,
    provider String,
    craze_version String,
    model String,
    report UInt8,
    cost_pico Int64,
    input_tokens Int64,
    output_tokens Int64,
    reasoning_tokens Int64,
    cache_read_tokens Int64,
    cache_creation_tokens Int64,
    unpriced UInt8,
    turn_id String,
    turn_outcome String,
    turn_synthetic UInt8,
    err_class String,
    subagent_id String,
    subagent_attempt String,
    subagent_change String,
    subagent_status String,
    tool_name String,
    tool_kind String,
    tool_status String,
    tool_exit_code Int64,
    ask_kind String,
    ask_outcome String,
    ask_by String,
    compaction_phase String,
    compaction_reason String,
    tokens_before Int64,
    tokens_after Int64,
    error_class String,
    error_code Int64,
    account_state String,
    kafka_topic String,
    kafka_partition UInt32,
    kafka_offset UInt64,
    ingested_at DateTime('UTC')
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ingested_at)
ORDER BY (session_id, incarnation, seq, kafka_topic, kafka_partition, kafka_offset)
SETTINGS index_granularity = 8192;

CREATE TABLE craze_events_probe (
    session_id String,
    incarnation String,
    seq UInt64,
    event_type String,
    at DateTime('UTC'),
    at_text String,
    agent String,
    replayed UInt8,
    event String,
    verdict String,
    detail String,
    cwd String,
    provider String,
    craze_version String,
    model String,
    report UInt8,
    cost_pico Int64,
    input_tokens Int64,
    output_tokens Int64,
    reasoning_tokens Int64,
    cache_read_tokens Int64,
    cache_creation_tokens Int64,
    unpriced UInt8,
    turn_id String,
    turn_outcome String,
    turn_synthetic UInt8,
    err_class String,
    subagent_id String,
    subagent_attempt String,
    subagent_change String,
    subagent_status String,
    tool_name String,
    tool_kind String,
    tool_status String,
    tool_exit_code Int64,
    ask_kind String,
    ask_outcome String,
    ask_by String,
    compaction_phase String,
    compaction_reason String,
    tokens_before Int64,
    tokens_after Int64,
    error_class String,
    error_code Int64,
    account_state String,
    kafka_topic String,
    kafka_partition UInt32,
    kafka_offset UInt64,
    ingested_at DateTime('UTC')
)
ENGINE = Null;

CREATE VIEW craze_sessions (
    session_id String,
    incarnations UInt64,
    cost_pico String,
    input_tokens String,
    output_tokens String,
    reasoning_tokens String,
    cache_read_tokens String,
    cache_creation_tokens String,
    unpriced_reports UInt64,
    models Array(String),
    provider String,
    cwd String,
    first_seen DateTime('UTC'),
    last_seen DateTime('UTC')
) AS WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT session_id, incarnations, if(abs(cost_total) < e18, toString(cost_total - (intDiv(cost_total, e18) * e18)), concat(toString(intDiv(cost_total, e18)), substring(toString(abs(cost_total - (intDiv(cost_total, e18) * e18)) + e18), 2))) AS cost_pico, if(abs(input_total) < e18, toString(input_total - (intDiv(input_total, e18) * e18)), concat(toString(intDiv(input_total, e18)), substring(toString(abs(input_total - (intDiv(input_total, e18) * e18)) + e18), 2))) AS input_tokens, if(abs(output_total) < e18, toString(output_total - (intDiv(output_total, e18) * e18)), concat(toString(intDiv(output_total, e18)), substring(toString(abs(output_total - (intDiv(output_total, e18) * e18)) + e18), 2))) AS output_tokens, if(abs(reasoning_total) < e18, toString(reasoning_total - (intDiv(reasoning_total, e18) * e18)), concat(toString(intDiv(reasoning_total, e18)), substring(toString(abs(reasoning_total - (intDiv(reasoning_total, e18) * e18)) + e18), 2))) AS reasoning_tokens, if(abs(cache_read_total) < e18, toString(cache_read_total - (intDiv(cache_read_total, e18) * e18)), concat(toString(intDiv(cache_read_total, e18)), substring(toString(abs(cache_read_total - (intDiv(cache_read_total, e18) * e18)) + e18), 2))) AS cache_read_tokens, if(abs(cache_creation_total) < e18, toString(cache_creation_total - (intDiv(cache_creation_total, e18) * e18)), concat(toString(intDiv(cache_creation_total, e18)), substring(toString(abs(cache_creation_total - (intDiv(cache_creation_total, e18) * e18)) + e18), 2))) AS cache_creation_tokens, unpriced_reports, models, provider, cwd, first_seen, last_seen
FROM (
    SELECT session_id, uniqExact(incarnation) AS incarnations, sumIf(toDecimal128(cost_pico, 0), report = 1) AS cost_total, sumIf(toDecimal128(input_tokens, 0), report = 1) AS input_total, sumIf(toDecimal128(output_tokens, 0), report = 1) AS output_total, sumIf(toDecimal128(reasoning_tokens, 0), report = 1) AS reasoning_total, sumIf(toDecimal128(cache_read_tokens, 0), report = 1) AS cache_read_total, sumIf(toDecimal128(cache_creation_tokens, 0), report = 1) AS cache_creation_total, countIf((report = 1) AND (unpriced = 1)) AS unpriced_reports, groupUniqArrayIf(model, model != '') AS models, anyIf(provider, provider != '') AS provider, anyIf(cwd, cwd != '') AS cwd, min(at) AS first_seen, max(at) AS last_seen
    FROM craze_events FINAL
    WHERE verdict != 'malformed'
    GROUP BY session_id) AS sessions;

CREATE VIEW craze_spend (
    session_id String,
    incarnation String,
    seq UInt64,
    at DateTime('UTC'),
    model String,
    cost_pico Int64,
    input_tokens Int64,
    output_tokens Int64,
    reasoning_tokens Int64,
    cache_read_tokens Int64,
    cache_creation_tokens Int64,
    unpriced UInt8
)
AS SELECT session_id, incarnation, seq, at, model, cost_pico, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_creation_tokens, unpriced
FROM craze_events FINAL
WHERE report = 1;

CREATE VIEW craze_subagents (
    session_id String,
    incarnation String,
    subagent_id String,
    subagent_attempt String,
    outcome String,
    first_seen DateTime('UTC'),
    last_seen DateTime('UTC')
)
AS SELECT session_id, incarnation, subagent_id, subagent_attempt, if(countIf(subagent_change = 'finished') = 0, 'abandoned', argMaxIf(subagent_status, seq, subagent_change = 'finished')) AS outcome, min(at) AS first_seen, max(at) AS last_seen
FROM craze_events FINAL
WHERE (subagent_id != '') AND (replayed = 0) AND (agent = '') AND (verdict != 'malformed')
GROUP BY session_id, incarnation, subagent_id, subagent_attempt;

CREATE VIEW craze_turns (
    session_id String,
    incarnation String,
    turn_id String,
    outcome String,
    synthetic UInt8,
    err_class String,
    ended_at DateTime('UTC')
)
AS SELECT session_id, incarnation, turn_id, argMax(turn_outcome, seq) AS outcome, argMax(turn_synthetic, seq) AS synthetic, argMax(err_class, seq) AS err_class, max(at) AS ended_at
FROM craze_events FINAL
WHERE (turn_outcome != '') AND (replayed = 0) AND (agent = '') AND (verdict != 'malformed')
GROUP BY session_id, incarnation, turn_id;

CREATE TABLE envelopes (
    loop_id String,
    seq UInt64,
    time DateTime('UTC'),
    time_text String,
    kind String,
    kind_class String,
    hash String,
    computed_hash String,
    payload String,
    verdict String,
    detail String,
    evidence String,
    kafka_topic String,
    kafka_partition UInt32,
    kafka_offset UInt64,
    ingested_at DateTime('UTC'),
    s1 String DEFAULT '',
    s2 String DEFAULT '',
    s3 String DEFAULT '',
    s4 String DEFAULT '',
    s5 String DEFAULT '',
    s6 String DEFAULT '',
    n1 Int64 DEFAULT toInt64(0),
    n2 Int64 DEFAULT toInt64(0),
    n3 Int64 DEFAULT toInt64(0),
    n4 Int64 DEFAULT toInt64(0),
    model_provider String ALIAS if(kind_class = 'ModelCalled', s1, ''),
    model_name String ALIAS if(kind_class = 'ModelCalled', s2, ''),
    input_tokens Int64 ALIAS if(kind_class = 'ModelCalled', n1, toInt64(0)),
    output_tokens Int64 ALIAS if(kind_class = 'ModelCalled', n2, toInt64(0)),
    cost_pico Int64 ALIAS if(kind_class = 'ModelCalled', n3, toInt64(0)),
    cost_usd_text String ALIAS if(kind_class = 'ModelCalled', s3, ''),
    duration_ms Int64 ALIAS if(kind_class IN ('ModelCalled', 'ToolCalled'), n4, toInt64(0)),
    budget_pico Int64 ALIAS if(kind_class = 'BudgetCharged', n3, toInt64(0)),
    budget_usd_text String ALIAS if(kind_class = 'BudgetCharged', s3, ''),
    budget_tokens Int64 ALIAS if(kind_class = 'BudgetCharged', n1, toInt64(0)),
    budget_wall_ms Int64 ALIAS if(kind_class = 'BudgetCharged', n2, toInt64(0)),
    budget_iterations Int64 ALIAS if(kind_class = 'BudgetCharged', n4, toInt64(0)),
    action_type String ALIAS if(kind_class = 'BudgetCharged', s1, ''),
    loop_name String ALIAS if(kind_class = 'LoopStarted', s1, ''),
    parent_loop_id String ALIAS if(kind_class = 'LoopStarted', s2, ''),
    depth Int64 ALIAS if(kind_class = 'LoopStarted', n1, toInt64(0)),
    loop_seed Int64 ALIAS if(kind_class = 'LoopStarted', n2, toInt64(0)),
    config_hash String ALIAS if(kind_class = 'LoopStarted', s3, ''),
    child_loop_id String ALIAS if(kind_class IN ('SubAgentSpawned', 'SubAgentCompleted', 'LoopFinished'), s1, ''),
    definition String ALIAS if(kind_class IN ('SubAgentSpawned', 'SubAgentCompleted', 'LoopFinished'), s2, ''),
    outcome String ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), s4, ''),
    error String ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), s5, ''),
    spend_raw String ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), s6, ''),
    spend_pico Int64 ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), n3, toInt64(0)),
    spend_usd_text String ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), s3, ''),
    spend_tokens Int64 ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), n1, toInt64(0)),
    spend_wall_ms Int64 ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), n2, toInt64(0)),
    spend_iterations Int64 ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), n4, toInt64(0)),
    fork_source String ALIAS if(kind_class = 'ForkedFrom', s1, ''),
    fork_at_seq UInt64 ALIAS if(kind_class = 'ForkedFrom', toUInt64(n1), toUInt64(0)),
    tool String ALIAS if(kind_class = 'ToolCalled', s1, ''),
    tool_is_error UInt8 ALIAS if(kind_class = 'ToolCalled', toUInt8(n1), toUInt8(0)),
    detector String ALIAS if(kind_class = 'ConvergenceWarning', s1, ''),
    iteration Int64 ALIAS if(kind_class = 'IterationStarted', n1, toInt64(0))
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ingested_at)
ORDER BY (loop_id, seq, kafka_topic, kafka_partition, kafka_offset)
SETTINGS index_granularity = 8192;

CREATE TABLE envelopes_probe (
    loop_id String,
    seq UInt64,
    time DateTime('UTC'),
    time_text String,
    kind String,
    kind_class String,
    hash String,
    computed_hash String,
    payload String,
    verdict String,
    detail String,
    evidence String,
    kafka_topic String,
    kafka_partition UInt32,
    kafka_offset UInt64,
    ingested_at DateTime('UTC'),
    s1 String DEFAULT '',
    s2 String DEFAULT '',
    s3 String DEFAULT '',
    s4 String DEFAULT '',
    s5 String DEFAULT '',
    s6 String DEFAULT '',
    n1 Int64 DEFAULT toInt64(0),
    n2 Int64 DEFAULT toInt64(0),
    n3 Int64 DEFAULT toInt64(0),
    n4 Int64 DEFAULT toInt64(0),
    model_provider String ALIAS if(kind_class = 'ModelCalled', s1, ''),
    model_name String ALIAS if(kind_class = 'ModelCalled', s2, ''),
    input_tokens Int64 ALIAS if(kind_class = 'ModelCalled', n1, toInt64(0)),
    output_tokens Int64 ALIAS if(kind_class = 'ModelCalled', n2, toInt64(0)),
    cost_pico Int64 ALIAS if(kind_class = 'ModelCalled', n3, toInt64(0)),
    cost_usd_text String ALIAS if(kind_class = 'ModelCalled', s3, ''),
    duration_ms Int64 ALIAS if(kind_class IN ('ModelCalled', 'ToolCalled'), n4, toInt64(0)),
    budget_pico Int64 ALIAS if(kind_class = 'BudgetCharged', n3, toInt64(0)),
    budget_usd_text String ALIAS if(kind_class = 'BudgetCharged', s3, ''),
    budget_tokens Int64 ALIAS if(kind_class = 'BudgetCharged', n1, toInt64(0)),
    budget_wall_ms Int64 ALIAS if(kind_class = 'BudgetCharged', n2, toInt64(0)),
    budget_iterations Int64 ALIAS if(kind_class = 'BudgetCharged', n4, toInt64(0)),
    action_type String ALIAS if(kind_class = 'BudgetCharged', s1, ''),
    loop_name String ALIAS if(kind_class = 'LoopStarted', s1, ''),
    parent_loop_id String ALIAS if(kind_class = 'LoopStarted', s2, ''),
    depth Int64 ALIAS if(kind_class = 'LoopStarted', n1, toInt64(0)),
    loop_seed Int64 ALIAS if(kind_class = 'LoopStarted', n2, toInt64(0)),
    config_hash String ALIAS if(kind_class = 'LoopStarted', s3, ''),
    child_loop_id String ALIAS if(kind_class IN ('SubAgentSpawned', 'SubAgentCompleted', 'LoopFinished'), s1, ''),
    definition String ALIAS if(kind_class IN ('SubAgentSpawned', 'SubAgentCompleted', 'LoopFinished'), s2, ''),
    outcome String ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), s4, ''),
    error String ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), s5, ''),
    spend_raw String ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), s6, ''),
    spend_pico Int64 ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), n3, toInt64(0)),
    spend_usd_text String ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), s3, ''),
    spend_tokens Int64 ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), n1, toInt64(0)),
    spend_wall_ms Int64 ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), n2, toInt64(0)),
    spend_iterations Int64 ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), n4, toInt64(0)),
    fork_source String ALIAS if(kind_class = 'ForkedFrom', s1, ''),
    fork_at_seq UInt64 ALIAS if(kind_class = 'ForkedFrom', toUInt64(n1), toUInt64(0)),
    tool String ALIAS if(kind_class = 'ToolCalled', s1, ''),
    tool_is_error UInt8 ALIAS if(kind_class = 'ToolCalled', toUInt8(n1), toUInt8(0)),
    detector String ALIAS if(kind_class = 'ConvergenceWarning', s1, ''),
    iteration Int64 ALIAS if(kind_class = 'IterationStarted', n1, toInt64(0))
)
ENGINE = Null;

CREATE VIEW event_rollup_committed (
    hour DateTime('UTC'),
    event_kind String,
    event_label String,
    event_outcome String,
    event_loop String,
    event_count UInt64,
    flagged_count UInt64
)
AS SELECT hour, kind AS event_kind, label AS event_label, outcome AS event_outcome, loop_id AS event_loop, events AS event_count, flagged AS flagged_count
FROM event_rollup_hour
WHERE (hour, version) IN (
    SELECT hour, max(version)
    FROM rollup_commits
    GROUP BY hour);

CREATE TABLE event_rollup_hour (
    hour DateTime('UTC'),
    version UInt64,
    kind String,
    label String,
    outcome String,
    loop_id String,
    events UInt64,
    flagged UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (hour, version, kind, label, outcome, loop_id)
SETTINGS index_granularity = 8192;

CREATE TABLE loop_child_reports (
    child_loop_id String,
    reporter String,
    version UInt64,
    seq UInt64,
    has_report UInt8,
    spend_pico Int64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (child_loop_id, reporter)
SETTINGS index_granularity = 8192;

CREATE VIEW loop_forks (
    loop_id String,
    source_loop_id String,
    replayed_to UInt64
)
AS SELECT loop_id, any(fork_source) AS source_loop_id, max(fork_at_seq) AS replayed_to
FROM envelopes FINAL
WHERE (kind_class = 'ForkedFrom') AND (verdict NOT IN ('malformed', 'fork'))
GROUP BY loop_id;

CREATE TABLE loop_heads (
    loop_id String,
    seq UInt64,
    hash String,
    computed_hash String,
    time_text String,
    verdict String,
    kafka_topic String,
    kafka_partition UInt32,
    kafka_offset UInt64,
    ingested_at DateTime('UTC')
)
ENGINE = ReplacingMergeTree(seq)
ORDER BY loop_id
SETTINGS index_granularity = 8192;

CREATE TABLE loop_ledgers (
    loop_id String,
    version UInt64,
    model_cost Decimal(38, 0),
    model_budget Decimal(38, 0),
    budget Decimal(38, 0),
    has_total_spend UInt8,
    total_spend Decimal(38, 0)
)
ENGINE = ReplacingMergeTree(version)
ORDER BY loop_id
SETTINGS index_granularity = 8192;

CREATE VIEW loop_reconciliation (
    loop_id String,
    model_cost_pico String,
    model_budget_pico String,
    budget_pico String,
    has_total_spend UInt8,
    total_spend_pico String,
    has_child_spend UInt8,
    child_spend_pico String,
    model_minus_model_budget_pico String,
    budget_minus_total_spend_pico String,
    budget_minus_child_spend_pico String,
    model_disagrees UInt8,
    total_spend_disagrees UInt8,
    child_spend_disagrees UInt8,
    disagrees UInt8
) AS WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT loop_id, if(abs(model_cost) < e18, toString(model_cost - (intDiv(model_cost, e18) * e18)), concat(toString(intDiv(model_cost, e18)), substring(toString(abs(model_cost - (intDiv(model_cost, e18) * e18)) + e18), 2))) AS model_cost_pico, if(abs(model_budget) < e18, toString(model_budget - (intDiv(model_budget, e18) * e18)), concat(toString(intDiv(model_budget, e18)), substring(toString(abs(model_budget - (intDiv(model_budget, e18) * e18)) + e18), 2))) AS model_budget_pico, if(abs(budget) < e18, toString(budget - (intDiv(budget, e18) * e18)), concat(toString(intDiv(budget, e18)), substring(toString(abs(budget - (intDiv(budget, e18) * e18)) + e18), 2))) AS budget_pico, has_total_spend, if(abs(total_spend) < e18, toString(total_spend - (intDiv(total_spend, e18) * e18)), concat(toString(intDiv(total_spend, e18)), substring(toString(abs(total_spend - (intDiv(total_spend, e18) * e18)) + e18), 2))) AS total_spend_pico, has_child_spend, if(abs(child_spend) < e18, toString(child_spend - (intDiv(child_spend, e18) * e18)), concat(toString(intDiv(child_spend, e18)), substring(toString(abs(child_spend - (intDiv(child_spend, e18) * e18)) + e18), 2))) AS child_spend_pico, if(abs(model_gap) < e18, toString(model_gap - (intDiv(model_gap, e18) * e18)), concat(toString(intDiv(model_gap, e18)), substring(toString(abs(model_gap - (intDiv(model_gap, e18) * e18)) + e18), 2))) AS model_minus_model_budget_pico, if(abs(total_spend_gap) < e18, toString(total_spend_gap - (intDiv(total_spend_gap, e18) * e18)), concat(toString(intDiv(total_spend_gap, e18)), substring(toString(abs(total_spend_gap - (intDiv(total_spend_gap, e18) * e18)) + e18), 2))) AS budget_minus_total_spend_pico, if(abs(child_spend_gap) < e18, toString(child_spend_gap - (intDiv(child_spend_gap, e18) * e18)), concat(toString(intDiv(child_spend_gap, e18)), substring(toString(abs(child_spend_gap - (intDiv(child_spend_gap, e18) * e18)) + e18), 2))) AS budget_minus_child_spend_pico, abs(toFloat64(model_cost - model_budget)) > greatest(1000000., abs(toFloat64(model_budget)) * 1e-9) AS model_disagrees, has_total_spend AND (abs(toFloat64(budget - total_spend)) > greatest(1000000., abs(toFloat64(total_spend)) * 1e-9)) AS total_spend_disagrees, has_child_spend AND (abs(toFloat64(budget - child_spend)) > greatest(1000000., abs(toFloat64(child_spend)) * 1e-9)) AS child_spend_disagrees, model_disagrees OR total_spend_disagrees OR child_spend_disagrees AS disagrees
FROM (
    SELECT loop_id, model_cost, model_budget, budget, has_total_spend, total_spend, has_child_spend, child_spend, model_cost - model_budget AS model_gap, budget - total_spend AS total_spend_gap, budget - child_spend AS child_spend_gap
    FROM (
        SELECT loop_id, model_cost, model_budget, budget, has_total_spend, total_spend, has_child_spend, toDecimal128(child_spend_reported, 0) AS child_spend
        FROM (
            SELECT loop_id, sumIf(toDecimal128(cost_pico, 0), (kind_class = 'ModelCalled') AND verified AND (seq > replayed_to)) AS model_cost, sumIf(toDecimal128(budget_pico, 0), (kind_class = 'BudgetCharged') AND verified AND (action_type = 'model') AND (seq > replayed_to)) AS model_budget, sumIf(toDecimal128(budget_pico, 0), (kind_class = 'BudgetCharged') AND verified) AS budget, countIf((kind_class = 'LoopFinished') AND (spend_raw != '')) > 0 AS has_total_spend, toDecimal128(argMaxIf(spend_pico, seq, kind_class = 'LoopFinished'), 0) AS total_spend
            FROM (
                SELECT loop_id, seq, kind_class, cost_pico, budget_pico, action_type, spend_raw, spend_pico, verdict IN ('ok', 'gap', 'time_regression') AS verified
                FROM envelopes FINAL
                WHERE (kind_class IN ('ModelCalled', 'BudgetCharged', 'LoopFinished')) AND (verdict NOT IN ('malformed', 'fork'))) AS ledger_rows
            ANY LEFT JOIN (
                SELECT loop_id, replayed_to
                FROM loop_forks ) AS forks
            USING (loop_id)
            GROUP BY loop_id) AS own
        ANY LEFT JOIN (
            SELECT child_loop_id AS loop_id, argMax(spend_pico, seq) AS child_spend_reported, 1 AS has_child_spend
            FROM (
                SELECT loop_id AS reporter, seq, child_loop_id, spend_pico
                FROM envelopes FINAL
                WHERE (kind_class = 'SubAgentCompleted') AND (child_loop_id != '') AND (spend_raw != '') AND (verdict NOT IN ('malformed', 'fork'))) AS reports
            ANY LEFT JOIN (
                SELECT loop_id AS reporter, replayed_to
                FROM loop_forks ) AS forks
            USING (reporter)
            WHERE seq > replayed_to
            GROUP BY child_loop_id) AS reported
        USING (loop_id)) AS sides ) AS gaps;

CREATE VIEW loop_reconciliation_rollup (
    loop_id String,
    model_cost_pico Decimal(38, 0),
    model_budget_pico Decimal(38, 0),
    budget_pico Decimal(38, 0),
    has_total_spend UInt8,
    total_spend_pico Decimal(38, 0),
    has_child_spend UInt8,
    child_spend_pico Decimal(38, 0),
    model_minus_model_budget_pico Decimal(38, 0),
    budget_minus_total_spend_pico Decimal(38, 0),
    budget_minus_child_spend_pico Decimal(38, 0),
    model_disagrees UInt8,
    total_spend_disagrees UInt8,
    child_spend_disagrees UInt8,
    disagrees UInt8
)
AS SELECT loop_id, model_cost AS model_cost_pico, model_budget AS model_budget_pico, budget AS budget_pico, has_total_spend, total_spend AS total_spend_pico, has_child_spend, child_spend AS child_spend_pico, model_cost - model_budget AS model_minus_model_budget_pico, budget - total_spend AS budget_minus_total_spend_pico, budget - child_spend AS budget_minus_child_spend_pico, abs(toFloat64(model_cost - model_budget)) > greatest(1000000., abs(toFloat64(model_budget)) * 1e-9) AS model_disagrees, has_total_spend AND (abs(toFloat64(budget - total_spend)) > greatest(1000000., abs(toFloat64(total_spend)) * 1e-9)) AS total_spend_disagrees, has_child_spend AND (abs(toFloat64(budget - child_spend)) > greatest(1000000., abs(toFloat64(child_spend)) * 1e-9)) AS child_spend_disagrees, model_disagrees OR total_spend_disagrees OR child_spend_disagrees AS disagrees
FROM (
    SELECT loop_id, model_cost, model_budget, budget, has_total_spend, total_spend, has_child_spend, toDecimal128(child_spend_reported, 0) AS child_spend
    FROM (
        SELECT loop_id, model_cost, model_budget, budget, has_total_spend, total_spend
        FROM loop_ledgers FINAL ) AS own
    ANY LEFT JOIN (
        SELECT child_loop_id AS loop_id, argMax(spend_pico, seq) AS child_spend_reported, 1 AS has_child_spend
        FROM loop_child_reports FINAL
        WHERE has_report = 1
        GROUP BY child_loop_id) AS reported
    USING (loop_id)) AS sides;

CREATE VIEW loop_replays (
    loop_id String,
    replayed_to UInt64
)
AS SELECT loop_id, max(fork_at_seq) AS replayed_to
FROM envelopes
PREWHERE kind_class = 'ForkedFrom'
WHERE verdict NOT IN ('malformed', 'fork')
GROUP BY loop_id;

CREATE TABLE loop_roots (
    loop_id String,
    root_loop_id String,
    loop_name String,
    parent_loop_id String,
    ancestors Array(String),
    version UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY loop_id
SETTINGS index_granularity = 8192;

CREATE VIEW loop_spawns (
    child String,
    spawned_by String,
    spawn_definition String
)
AS SELECT child_loop_id AS child, any(loop_id) AS spawned_by, any(definition) AS spawn_definition
FROM (
    SELECT loop_id, seq, child_loop_id, definition
    FROM envelopes FINAL
    WHERE (kind_class = 'SubAgentSpawned') AND (child_loop_id != '') AND (verdict NOT IN ('malformed', 'fork'))) AS spawns
ANY LEFT JOIN (
    SELECT loop_id, replayed_to
    FROM loop_forks ) AS forks
USING (loop_id)
WHERE seq > replayed_to
GROUP BY child_loop_id;

CREATE TABLE loop_summaries (
    loop_id String,
    version UInt64,
    present UInt8,
    name String,
    started_parent String,
    started_depth Int64,
    started UInt8,
    finished_outcome String,
    finished_error String,
    iterations UInt64,
    subagents_spawned UInt64,
    subagents_completed UInt64,
    subagents_failed UInt64,
    forked_from String,
    forked_at_seq UInt64,
    first_time_text String,
    last_time_text String,
    model_calls UInt64,
    input_tokens_sum String,
    output_tokens_sum String,
    model_cost String,
    budget_cost String,
    unverified_model_cost String,
    children Array(String)
)
ENGINE = ReplacingMergeTree(version)
ORDER BY loop_id
SETTINGS index_granularity = 8192;

CREATE TABLE loop_summary_marks (
    mark UInt8,
    version UInt64,
    seen_through DateTime('UTC'),
    finished_at DateTime('UTC')
)
ENGINE = ReplacingMergeTree(version)
ORDER BY mark
SETTINGS index_granularity = 8192;

CREATE VIEW loop_tree (
    loop_id String,
    parent_loop_id String,
    root_loop_id String,
    loop_name String,
    depth UInt64,
    own_calls UInt64,
    own_cost_pico Decimal(38, 0),
    subtree_cost_pico Decimal(38, 0)
)
AS SELECT loop_id, parent_loop_id, root_loop_id, loop_name, depth, own_calls, own_cost_pico, subtree_cost_pico
FROM (
    SELECT loop_id, parent_loop_id, root_loop_id, loop_name, depth, own_calls, own_cost_pico
    FROM (
        SELECT loop_id, parent_loop_id, root_loop_id, loop_name, length(ancestors) AS depth
        FROM loop_roots FINAL ) AS placed
    ANY LEFT JOIN (
        SELECT loop_id, sum(calls) AS own_calls, sum(cost_pico) AS own_cost_pico
        FROM spend_rollup_committed
        WHERE source = 'runtime'
        GROUP BY loop_id) AS own
    USING (loop_id)) AS loops
ANY LEFT JOIN (
    SELECT ancestor AS loop_id, subtree_cost_pico
    FROM (
        SELECT ancestor, sum(spent_cost) AS subtree_cost_pico
        FROM (
            SELECT spent_cost, arrayPushBack(ancestors, loop_id) AS line
            FROM (
                SELECT loop_id, sum(cost_pico) AS spent_cost
                FROM spend_rollup_committed
                WHERE source = 'runtime'
                GROUP BY loop_id) AS spent
            ANY LEFT JOIN (
                SELECT loop_id, ancestors
                FROM loop_roots FINAL ) AS placed
            USING (loop_id)) ARRAY JOIN line AS ancestor
        GROUP BY ancestor) ) AS subtree
USING (loop_id);

CREATE TABLE rollup_claims (
    version UInt64,
    claimant String,
    claimed_at DateTime('UTC')
)
ENGINE = MergeTree
ORDER BY version
SETTINGS index_granularity = 8192;

CREATE TABLE rollup_commits (
    hour DateTime('UTC'),
    version UInt64,
    committed_at DateTime('UTC')
)
ENGINE = MergeTree
ORDER BY (hour, version)
SETTINGS index_granularity = 8192;

CREATE TABLE rollup_sweeps (
    version UInt64,
    seen_through DateTime('UTC'),
    hours UInt64,
    finished_at DateTime('UTC')
)
ENGINE = MergeTree
ORDER BY version
SETTINGS index_granularity = 8192;

CREATE VIEW root_reconciliation (
    root_loop_id String,
    loops UInt64,
    tree_model_cost_pico Decimal(38, 0),
    tree_model_budget_pico Decimal(38, 0),
    tree_budget_pico Decimal(38, 0),
    loops_disagreeing UInt64
)
AS SELECT root AS root_loop_id, count() AS loops, sum(toDecimal128(model_cost_pico, 0)) AS tree_model_cost_pico, sum(toDecimal128(model_budget_pico, 0)) AS tree_model_budget_pico, sum(toDecimal128(budget_pico, 0)) AS tree_budget_pico, countIf(disagrees) AS loops_disagreeing
FROM (
    SELECT loop_id, if(placed_root = '', loop_id, placed_root) AS root, model_cost_pico, model_budget_pico, budget_pico, disagrees
    FROM (
        SELECT loop_id, model_cost_pico, model_budget_pico, budget_pico, disagrees
        FROM loop_reconciliation ) AS ledgers
    ANY LEFT JOIN (
        SELECT loop_id, root_loop_id AS placed_root
        FROM loop_roots FINAL ) AS placed
    USING (loop_id)) AS rooted
GROUP BY root;

CREATE VIEW root_reconciliation_rollup (
    root_loop_id String,
    loops UInt64,
    tree_model_cost_pico Decimal(38, 0),
    tree_model_budget_pico Decimal(38, 0),
    tree_budget_pico Decimal(38, 0),
    loops_disagreeing UInt64
)
AS SELECT root AS root_loop_id, count() AS loops, sum(model_cost_pico) AS tree_model_cost_pico, sum(model_budget_pico) AS tree_model_budget_pico, sum(budget_pico) AS tree_budget_pico, countIf(disagrees) AS loops_disagreeing
FROM (
    SELECT loop_id, if(placed_root = '', loop_id, placed_root) AS root, model_cost_pico, model_budget_pico, budget_pico, disagrees
    FROM (
        SELECT loop_id, model_cost_pico, model_budget_pico, budget_pico, disagrees
        FROM loop_reconciliation_rollup ) AS ledgers
    ANY LEFT JOIN (
        SELECT loop_id, root_loop_id AS placed_root
        FROM loop_roots FINAL ) AS placed
    USING (loop_id)) AS rooted
GROUP BY root;

CREATE VIEW runtime_loops (
    loop_id String,
    name String,
    started_parent String,
    started_depth Int64,
    started UInt8,
    finished_outcome String,
    finished_error String,
    total_spend_raw String,
    iterations UInt64,
    subagents_spawned UInt64,
    subagents_completed UInt64,
    subagents_failed UInt64,
    forked_from String,
    forked_at_seq UInt64,
    first_time DateTime('UTC'),
    last_time DateTime('UTC'),
    envelope_count UInt64
)
AS SELECT loop_id, argMaxIf(loop_name, seq, kind_class = 'LoopStarted') AS name, argMaxIf(parent_loop_id, seq, kind_class = 'LoopStarted') AS started_parent, argMaxIf(depth, seq, kind_class = 'LoopStarted') AS started_depth, countIf(kind_class = 'LoopStarted') > 0 AS started, argMaxIf(outcome, seq, kind_class = 'LoopFinished') AS finished_outcome, argMaxIf(error, seq, kind_class = 'LoopFinished') AS finished_error, argMaxIf(spend_raw, seq, kind_class = 'LoopFinished') AS total_spend_raw, countIf((kind_class = 'IterationStarted') AND (seq > replayed_to)) AS iterations, countIf((kind_class = 'SubAgentSpawned') AND (seq > replayed_to)) AS subagents_spawned, countIf((kind_class = 'SubAgentCompleted') AND (outcome = 'Completed') AND (seq > replayed_to)) AS subagents_completed, countIf((kind_class = 'SubAgentCompleted') AND (outcome != 'Completed') AND (seq > replayed_to)) AS subagents_failed, argMaxIf(fork_source, seq, kind_class = 'ForkedFrom') AS forked_from, maxIf(fork_at_seq, kind_class = 'ForkedFrom') AS forked_at_seq, min(time) AS first_time, max(time) AS last_time, count() AS envelope_count
FROM (
    SELECT loop_id, seq, time, kind_class, loop_name, parent_loop_id, depth, outcome, error, spend_raw, fork_source, fork_at_seq
    FROM envelopes FINAL
    WHERE verdict NOT IN ('malformed', 'fork')) AS own
ANY LEFT JOIN (
    SELECT loop_id, replayed_to
    FROM loop_forks ) AS forks
USING (loop_id)
GROUP BY loop_id;

CREATE VIEW runtime_spend (
    loop_id String,
    seq UInt64,
    time DateTime('UTC'),
    kind_class String,
    verdict String,
    verified UInt8,
    replayed UInt8,
    provider String,
    model String,
    input_tokens Int64,
    output_tokens Int64,
    cost_pico Int64,
    duration_ms Int64,
    budget_pico Int64,
    budget_tokens Int64,
    budget_wall_ms Int64,
    budget_iterations Int64,
    action_type String
)
AS SELECT loop_id, seq, time, kind_class, verdict, verdict IN ('ok', 'gap', 'time_regression') AS verified, seq <= replayed_to AS replayed, model_provider AS provider, model_name AS model, input_tokens, output_tokens, cost_pico, duration_ms, budget_pico, budget_tokens, budget_wall_ms, budget_iterations, action_type
FROM (
    SELECT loop_id, seq, time, kind_class, verdict, model_provider, model_name, input_tokens, output_tokens, cost_pico, duration_ms, budget_pico, budget_tokens, budget_wall_ms, budget_iterations, action_type
    FROM envelopes FINAL
    WHERE (kind_class IN ('ModelCalled', 'BudgetCharged')) AND (verdict != 'malformed')) AS spend
ANY LEFT JOIN (
    SELECT loop_id, replayed_to
    FROM loop_forks ) AS forks
USING (loop_id);

CREATE TABLE schema_migrations (
    version UInt32,
    name String,
    checksum String,
    applied_at DateTime
)
ENGINE = MergeTree
ORDER BY version
SETTINGS index_granularity = 8192;

CREATE VIEW spend_by_day (
    day Date,
    source String,
    provider String,
    model String,
    calls UInt64,
    input_tokens_sum String,
    output_tokens_sum String,
    cost_pico_usd String,
    unpriced_calls UInt64
) AS WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT day, source, provider, model, calls, if(abs(input_total) < e18, toString(input_total - (intDiv(input_total, e18) * e18)), concat(toString(intDiv(input_total, e18)), substring(toString(abs(input_total - (intDiv(input_total, e18) * e18)) + e18), 2))) AS input_tokens_sum, if(abs(output_total) < e18, toString(output_total - (intDiv(output_total, e18) * e18)), concat(toString(intDiv(output_total, e18)), substring(toString(abs(output_total - (intDiv(output_total, e18) * e18)) + e18), 2))) AS output_tokens_sum, if(abs(cost_total) < e18, toString(cost_total - (intDiv(cost_total, e18) * e18)), concat(toString(intDiv(cost_total, e18)), substring(toString(abs(cost_total - (intDiv(cost_total, e18) * e18)) + e18), 2))) AS cost_pico_usd, unpriced_calls
FROM (
    SELECT toDate(time) AS day, source, provider, model, count() AS calls, sum(toDecimal128(input_tokens, 0)) AS input_total, sum(toDecimal128(output_tokens, 0)) AS output_total, sum(toDecimal128(cost_pico, 0)) AS cost_total, countIf(unpriced_call = 1) AS unpriced_calls
    FROM spend_calls
    GROUP BY day, source, provider, model) AS sums;

CREATE VIEW spend_by_hour (
    hour DateTime('UTC'),
    source String,
    provider String,
    model String,
    calls UInt64,
    input_tokens_sum String,
    output_tokens_sum String,
    cost_pico_usd String,
    unpriced_calls UInt64
) AS WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT hour, source, provider, model, calls, if(abs(input_total) < e18, toString(input_total - (intDiv(input_total, e18) * e18)), concat(toString(intDiv(input_total, e18)), substring(toString(abs(input_total - (intDiv(input_total, e18) * e18)) + e18), 2))) AS input_tokens_sum, if(abs(output_total) < e18, toString(output_total - (intDiv(output_total, e18) * e18)), concat(toString(intDiv(output_total, e18)), substring(toString(abs(output_total - (intDiv(output_total, e18) * e18)) + e18), 2))) AS output_tokens_sum, if(abs(cost_total) < e18, toString(cost_total - (intDiv(cost_total, e18) * e18)), concat(toString(intDiv(cost_total, e18)), substring(toString(abs(cost_total - (intDiv(cost_total, e18) * e18)) + e18), 2))) AS cost_pico_usd, unpriced_calls
FROM (
    SELECT toStartOfHour(time) AS hour, source, provider, model, count() AS calls, sum(toDecimal128(input_tokens, 0)) AS input_total, sum(toDecimal128(output_tokens, 0)) AS output_total, sum(toDecimal128(cost_pico, 0)) AS cost_total, countIf(unpriced_call = 1) AS unpriced_calls
    FROM spend_calls
    GROUP BY hour, source, provider, model) AS sums;

CREATE VIEW spend_by_loop_name (
    name String,
    loops UInt64,
    calls UInt64,
    input_tokens_sum String,
    output_tokens_sum String,
    cost_pico_usd String
) AS WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT name, loops, calls, if(abs(input_total) < e18, toString(input_total - (intDiv(input_total, e18) * e18)), concat(toString(intDiv(input_total, e18)), substring(toString(abs(input_total - (intDiv(input_total, e18) * e18)) + e18), 2))) AS input_tokens_sum, if(abs(output_total) < e18, toString(output_total - (intDiv(output_total, e18) * e18)), concat(toString(intDiv(output_total, e18)), substring(toString(abs(output_total - (intDiv(output_total, e18) * e18)) + e18), 2))) AS output_tokens_sum, if(abs(cost_total) < e18, toString(cost_total - (intDiv(cost_total, e18) * e18)), concat(toString(intDiv(cost_total, e18)), substring(toString(abs(cost_total - (intDiv(cost_total, e18) * e18)) + e18), 2))) AS cost_pico_usd
FROM (
    SELECT name, count() AS loops, sum(loop_calls) AS calls, sum(loop_input_tokens) AS input_total, sum(loop_output_tokens) AS output_total, sum(loop_cost_pico) AS cost_total
    FROM (
        SELECT loop_id, name
        FROM runtime_loops ) AS named
    ANY LEFT JOIN (
        SELECT loop_id, count() AS loop_calls, sum(toDecimal128(input_tokens, 0)) AS loop_input_tokens, sum(toDecimal128(output_tokens, 0)) AS loop_output_tokens, sum(toDecimal128(cost_pico, 0)) AS loop_cost_pico
        FROM runtime_spend
        WHERE (kind_class = 'ModelCalled') AND verified AND NOT replayed
        GROUP BY loop_id) AS spent
    USING (loop_id)
    GROUP BY name) AS sums;

CREATE VIEW spend_calls (
    source String,
    time DateTime('UTC'),
    provider String,
    model String,
    input_tokens Int64,
    output_tokens Int64,
    cost_pico Int64,
    unpriced_call UInt8
)
AS SELECT source, time, provider, model, input_tokens, output_tokens, cost_pico, unpriced_call
FROM (
    SELECT 'runtime' AS source, time, provider, model, input_tokens, output_tokens, cost_pico, toUInt8(0) AS unpriced_call
    FROM runtime_spend
    WHERE (kind_class = 'ModelCalled') AND verified AND NOT replayed
    UNION ALL
    SELECT 'craze' AS source, at AS time, provider, model, input_tokens, output_tokens, cost_pico, unpriced AS unpriced_call
    FROM (
        SELECT session_id, at, model, input_tokens, output_tokens, cost_pico, unpriced
        FROM craze_spend ) AS reports
    ANY LEFT JOIN (
        SELECT session_id, provider
        FROM craze_sessions ) AS sessions
    USING (session_id)) AS calls_of_both;

CREATE VIEW spend_hourly_now (
    hour DateTime('UTC'),
    source String,
    provider String,
    model String,
    loop_name String,
    calls_sum UInt64,
    input_tokens_sum Decimal(38, 0),
    output_tokens_sum Decimal(38, 0),
    cost_pico_sum Decimal(38, 0),
    unpriced_calls_sum UInt64
)
AS SELECT hour, source, provider, model, loop_name, calls_sum, input_tokens_sum, output_tokens_sum, cost_pico_sum, unpriced_calls_sum
FROM spend_rollup_model_hourly
WHERE hour < (
    SELECT toStartOfHour(max(seen_through))
    FROM rollup_sweeps )
UNION ALL
SELECT bucket AS hour, 'runtime' AS source, provider, model, rolled_name AS loop_name, n AS calls_sum, input_sum AS input_tokens_sum, output_sum AS output_tokens_sum, cost_sum AS cost_pico_sum, toUInt64(0) AS unpriced_calls_sum
FROM (
    SELECT bucket, provider, model, rolled_name, count() AS n, sum(toDecimal128(input_tokens, 0)) AS input_sum, sum(toDecimal128(output_tokens, 0)) AS output_sum, sum(toDecimal128(cost_pico, 0)) AS cost_sum
    FROM (
        SELECT loop_id, toStartOfHour(time) AS bucket, provider, model, input_tokens, output_tokens, cost_pico
        FROM (
            SELECT loop_id, seq, time, model_provider AS provider, model_name AS model, input_tokens, output_tokens, cost_pico
            FROM envelopes FINAL
            WHERE (kind_class = 'ModelCalled') AND (verdict IN ('ok', 'gap', 'time_regression')) AND (time >= (
                    SELECT toStartOfHour(max(seen_through))
                    FROM rollup_sweeps )) AND (loop_id IN (
                    SELECT loop_id
                    FROM envelopes
                    WHERE ingested_at >= (
                        SELECT toDateTime(greatest(toUInt32(toStartOfHour(max(seen_through))), 3600) - 3600)
                        FROM rollup_sweeps )))) AS calls
        ANY LEFT JOIN (
            SELECT loop_id, max(fork_at_seq) AS replayed_to
            FROM envelopes FINAL
            WHERE (kind_class = 'ForkedFrom') AND (verdict NOT IN ('malformed', 'fork')) AND (loop_id IN (
                    SELECT loop_id
                    FROM envelopes
                    WHERE ingested_at >= (
                        SELECT toDateTime(greatest(toUInt32(toStartOfHour(max(seen_through))), 3600) - 3600)
                        FROM rollup_sweeps )))
            GROUP BY loop_id) AS forks
        USING (loop_id)
        WHERE seq > replayed_to) AS counted
    ANY LEFT JOIN (
        SELECT loop_id, loop_name AS rolled_name
        FROM loop_roots FINAL ) AS roots
    USING (loop_id)
    GROUP BY bucket, provider, model, rolled_name)
UNION ALL
SELECT bucket AS hour, 'craze' AS source, provider, model, '' AS loop_name, n AS calls_sum, input_sum AS input_tokens_sum, output_sum AS output_tokens_sum, cost_sum AS cost_pico_sum, unpriced_n AS unpriced_calls_sum
FROM (
    SELECT bucket, provider, model, count() AS n, sum(toDecimal128(input_tokens, 0)) AS input_sum, sum(toDecimal128(output_tokens, 0)) AS output_sum, sum(toDecimal128(cost_pico, 0)) AS cost_sum, countIf(unpriced = 1) AS unpriced_n
    FROM (
        SELECT session_id, toStartOfHour(at) AS bucket, model, input_tokens, output_tokens, cost_pico, unpriced
        FROM craze_spend
        WHERE at >= (
            SELECT toStartOfHour(max(seen_through))
            FROM rollup_sweeps )) AS reports
    ANY LEFT JOIN (
        SELECT session_id, provider
        FROM craze_sessions ) AS sessions
    USING (session_id)
    GROUP BY bucket, provider, model);

CREATE VIEW spend_rollup_by_name (
    loop_name String,
    calls UInt64,
    input_tokens Decimal(38, 0),
    output_tokens Decimal(38, 0),
    cost_pico Decimal(38, 0)
)
AS SELECT loop_name, sum(calls_sum) AS calls, sum(input_tokens_sum) AS input_tokens, sum(output_tokens_sum) AS output_tokens, sum(cost_pico_sum) AS cost_pico
FROM spend_rollup_model_hourly
WHERE source = 'runtime'
GROUP BY loop_name;

CREATE VIEW spend_rollup_committed (
    hour DateTime('UTC'),
    source String,
    provider String,
    model String,
    loop_name String,
    root_loop_id String,
    loop_id String,
    calls UInt64,
    input_tokens Decimal(38, 0),
    output_tokens Decimal(38, 0),
    cost_pico Decimal(38, 0),
    unpriced_calls UInt64
)
AS SELECT hour, source, provider, model, loop_name, root_loop_id, loop_id, calls, input_tokens, output_tokens, cost_pico, unpriced_calls
FROM spend_rollup_hour
WHERE (hour, version) IN (
    SELECT hour, max(version)
    FROM rollup_commits
    GROUP BY hour);

CREATE VIEW spend_rollup_daily (
    day Date,
    source String,
    provider String,
    model String,
    loop_name String,
    calls UInt64,
    input_tokens Decimal(38, 0),
    output_tokens Decimal(38, 0),
    cost_pico Decimal(38, 0),
    unpriced_calls UInt64
)
AS SELECT toDate(hour) AS day, source, provider, model, loop_name, sum(calls_sum) AS calls, sum(input_tokens_sum) AS input_tokens, sum(output_tokens_sum) AS output_tokens, sum(cost_pico_sum) AS cost_pico, sum(unpriced_calls_sum) AS unpriced_calls
FROM spend_rollup_model_hourly
GROUP BY day, source, provider, model, loop_name;

CREATE TABLE spend_rollup_hour (
    hour DateTime('UTC'),
    version UInt64,
    source String,
    provider String,
    model String,
    loop_name String,
    root_loop_id String,
    loop_id String,
    calls UInt64,
    input_tokens Decimal(38, 0),
    output_tokens Decimal(38, 0),
    cost_pico Decimal(38, 0),
    unpriced_calls UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (hour, version, source, provider, model, loop_name, root_loop_id, loop_id)
SETTINGS index_granularity = 8192;

CREATE VIEW spend_rollup_hourly (
    hour DateTime('UTC'),
    source String,
    provider String,
    model String,
    loop_name String,
    root_loop_id String,
    calls_sum UInt64,
    input_tokens_sum Decimal(38, 0),
    output_tokens_sum Decimal(38, 0),
    cost_pico_sum Decimal(38, 0),
    unpriced_calls_sum UInt64
)
AS SELECT hour, source, provider, model, loop_name, root_loop_id, sum(calls) AS calls_sum, sum(input_tokens) AS input_tokens_sum, sum(output_tokens) AS output_tokens_sum, sum(cost_pico) AS cost_pico_sum, sum(unpriced_calls) AS unpriced_calls_sum
FROM spend_rollup_committed
GROUP BY hour, source, provider, model, loop_name, root_loop_id;

CREATE TABLE spend_rollup_model_hour (
    hour DateTime('UTC'),
    version UInt64,
    source String,
    provider String,
    model String,
    loop_name String,
    calls UInt64,
    input_tokens Decimal(38, 0),
    output_tokens Decimal(38, 0),
    cost_pico Decimal(38, 0),
    unpriced_calls UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (hour, version, source, provider, model, loop_name)
SETTINGS index_granularity = 8192;

CREATE VIEW spend_rollup_model_hourly (
    hour DateTime('UTC'),
    source String,
    provider String,
    model String,
    loop_name String,
    calls_sum UInt64,
    input_tokens_sum Decimal(38, 0),
    output_tokens_sum Decimal(38, 0),
    cost_pico_sum Decimal(38, 0),
    unpriced_calls_sum UInt64
)
AS SELECT hour, source, provider, model, loop_name, calls AS calls_sum, input_tokens AS input_tokens_sum, output_tokens AS output_tokens_sum, cost_pico AS cost_pico_sum, unpriced_calls AS unpriced_calls_sum
FROM spend_rollup_model_hour
WHERE (hour, version) IN (
    SELECT hour, max(version)
    FROM rollup_commits
    GROUP BY hour);

CREATE TABLE spend_rollup_root_hour (
    hour DateTime('UTC'),
    version UInt64,
    source String,
    root_loop_id String,
    calls UInt64,
    input_tokens Decimal(38, 0),
    output_tokens Decimal(38, 0),
    cost_pico Decimal(38, 0)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (hour, version, source, root_loop_id)
SETTINGS index_granularity = 8192;

CREATE VIEW spend_rollup_root_hourly (
    hour DateTime('UTC'),
    source String,
    root_loop_id String,
    calls_sum UInt64,
    input_tokens_sum Decimal(38, 0),
    output_tokens_sum Decimal(38, 0),
    cost_pico_sum Decimal(38, 0)
)
AS SELECT hour, source, root_loop_id, calls AS calls_sum, input_tokens AS input_tokens_sum, output_tokens AS output_tokens_sum, cost_pico AS cost_pico_sum
FROM spend_rollup_root_hour
WHERE (hour, version) IN (
    SELECT hour, max(version)
    FROM rollup_commits
    GROUP BY hour);

CREATE VIEW subagent_outcomes (
    definition String,
    outcome String,
    subagents UInt64
)
AS SELECT definition, outcome, count() AS subagents
FROM (
    SELECT loop_id, seq, definition, outcome
    FROM envelopes FINAL
    WHERE (kind_class = 'SubAgentCompleted') AND (verdict NOT IN ('malformed', 'fork'))) AS completed
ANY LEFT JOIN (
    SELECT loop_id, replayed_to
    FROM loop_forks ) AS forks
USING (loop_id)
WHERE seq > replayed_to
GROUP BY definition, outcome;

CREATE VIEW subagent_outcomes_daily (
    day Date,
    definition String,
    outcome String,
    subagents UInt64
)
AS SELECT toDate(hour) AS day, event_label AS definition, event_outcome AS outcome, sum(event_count) AS subagents
FROM event_rollup_committed
WHERE event_kind = 'SubAgentCompleted'
GROUP BY day, definition, outcome;

CREATE VIEW tool_error_rates (
    tool String,
    calls UInt64,
    errors UInt64,
    error_share Float64
)
AS SELECT tool, count() AS calls, countIf(tool_is_error = 1) AS errors, countIf(tool_is_error = 1) / count() AS error_share
FROM (
    SELECT loop_id, seq, tool, tool_is_error
    FROM envelopes FINAL
    WHERE (kind_class = 'ToolCalled') AND (verdict NOT IN ('malformed', 'fork'))) AS tool_calls
ANY LEFT JOIN (
    SELECT loop_id, replayed_to
    FROM loop_forks ) AS forks
USING (loop_id)
WHERE seq > replayed_to
GROUP BY tool;

CREATE VIEW tool_errors_hourly (
    hour DateTime('UTC'),
    tool String,
    calls UInt64,
    errors UInt64
)
AS SELECT hour, event_label AS tool, sum(event_count) AS calls, sum(flagged_count) AS errors
FROM event_rollup_committed
WHERE event_kind = 'ToolCalled'
GROUP BY hour, tool;

CREATE VIEW top_roots (
    source String,
    root_loop_id String,
    calls UInt64,
    input_tokens Decimal(38, 0),
    output_tokens Decimal(38, 0),
    cost_pico Decimal(38, 0),
    first_hour DateTime('UTC'),
    last_hour DateTime('UTC')
)
AS SELECT source, root_loop_id, sum(calls_sum) AS calls, sum(input_tokens_sum) AS input_tokens, sum(output_tokens_sum) AS output_tokens, sum(cost_pico_sum) AS cost_pico, min(hour) AS first_hour, max(hour) AS last_hour
FROM spend_rollup_root_hourly
GROUP BY source, root_loop_id;

CREATE VIEW unverified_spend (
    loop_id String,
    verdict String,
    calls UInt64,
    cost_pico_usd String,
    first_time DateTime('UTC'),
    last_time DateTime('UTC')
) AS WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT loop_id, verdict, calls, if(abs(cost_total) < e18, toString(cost_total - (intDiv(cost_total, e18) * e18)), concat(toString(intDiv(cost_total, e18)), substring(toString(abs(cost_total - (intDiv(cost_total, e18) * e18)) + e18), 2))) AS cost_pico_usd, first_time, last_time
FROM (
    SELECT loop_id, verdict, count() AS calls, sum(toDecimal128(cost_pico, 0)) AS cost_total, min(time) AS first_time, max(time) AS last_time
    FROM runtime_spend
    WHERE (kind_class = 'ModelCalled') AND NOT verified AND NOT replayed
    GROUP BY loop_id, verdict) AS sums;

CREATE VIEW unverified_spend_now (
    loop_id String,
    verdict String,
    calls UInt64,
    cost_pico_usd String,
    first_time DateTime('UTC'),
    last_time DateTime('UTC')
) AS WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT loop_id, verdict, calls, if(abs(cost_total) < e18, toString(cost_total - (intDiv(cost_total, e18) * e18)), concat(toString(intDiv(cost_total, e18)), substring(toString(abs(cost_total - (intDiv(cost_total, e18) * e18)) + e18), 2))) AS cost_pico_usd, first_time, last_time
FROM (
    SELECT loop_id, flag_verdict AS verdict, count() AS calls, sum(toDecimal128(flag_cost, 0)) AS cost_total, min(flag_time) AS first_time, max(flag_time) AS last_time
    FROM (
        SELECT loop_id, seq, verdict AS flag_verdict, cost_pico AS flag_cost, time AS flag_time
        FROM chain_violations_now
        WHERE (kind_class = 'ModelCalled') AND (verdict NOT IN ('ok', 'gap', 'time_regression', 'malformed'))) AS flagged
    ANY LEFT JOIN (
        SELECT loop_id, replayed_to
        FROM loop_replays ) AS forks
    USING (loop_id)
    WHERE seq > replayed_to
    GROUP BY loop_id, flag_verdict) AS sums;
