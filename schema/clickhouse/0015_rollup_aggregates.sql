-- Coarser rollups beside spend_rollup_hour (0013), so every dashboard read
-- takes thousands of rows, not the per-loop million (README, "Rollups"):
-- - spend_rollup_model_hour: per hour, source, provider, model and loop name;
-- - spend_rollup_root_hour: per hour, source and root;
-- - event_rollup_hour: the counted ToolCalled, ConvergenceWarning and
--   SubAgentCompleted envelopes per hour (the questions of tool_error_rates,
--   convergence_warnings and subagent_outcomes, 0010).
-- Same versions, same commits: a recompute writes the hour's rows of every
-- rollup table under its version (the first two summed from its own
-- spend_rollup_hour rows), then commits the hour once in rollup_commits.
-- Readers take each hour's highest committed version, in every table alike.

CREATE TABLE IF NOT EXISTS spend_rollup_model_hour
(
    hour           DateTime('UTC'),
    version        UInt64,
    source         String,
    provider       String,
    model          String,
    loop_name      String,
    calls          UInt64,
    input_tokens   Decimal128(0),
    output_tokens  Decimal128(0),
    cost_pico      Decimal128(0),
    unpriced_calls UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (hour, version, source, provider, model, loop_name);

CREATE TABLE IF NOT EXISTS spend_rollup_root_hour
(
    hour           DateTime('UTC'),
    version        UInt64,
    source         String,
    root_loop_id   String,
    calls          UInt64,
    input_tokens   Decimal128(0),
    output_tokens  Decimal128(0),
    cost_pico      Decimal128(0)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (hour, version, source, root_loop_id);

-- kind: ToolCalled (label: the tool; flagged: calls with is_error),
-- ConvergenceWarning (label: the detector; loop_id: the loop warned, so a
-- day's distinct loops can be counted), SubAgentCompleted (label: the
-- definition; outcome: its outcome_kind). A fork's replays and links that
-- are malformed or a second version are left out, as in 0010.
CREATE TABLE IF NOT EXISTS event_rollup_hour
(
    hour     DateTime('UTC'),
    version  UInt64,
    kind     String,
    label    String,
    outcome  String,
    loop_id  String,
    events   UInt64,
    flagged  UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (hour, version, kind, label, outcome, loop_id);

-- Per hour, source, provider, model and loop name: the committed rows.
CREATE VIEW IF NOT EXISTS spend_rollup_model_hourly AS
SELECT hour, source, provider, model, loop_name,
       calls AS calls_sum,
       input_tokens AS input_tokens_sum,
       output_tokens AS output_tokens_sum,
       cost_pico AS cost_pico_sum,
       unpriced_calls AS unpriced_calls_sum
FROM spend_rollup_model_hour
WHERE (hour, version) IN (SELECT hour, max(version) FROM rollup_commits GROUP BY hour);

-- Per hour, source and root: the committed rows.
CREATE VIEW IF NOT EXISTS spend_rollup_root_hourly AS
SELECT hour, source, root_loop_id,
       calls AS calls_sum,
       input_tokens AS input_tokens_sum,
       output_tokens AS output_tokens_sum,
       cost_pico AS cost_pico_sum
FROM spend_rollup_root_hour
WHERE (hour, version) IN (SELECT hour, max(version) FROM rollup_commits GROUP BY hour);

-- spend_rollup_daily and top_roots (0013) read the coarser tables from now
-- on. spend_rollup_daily loses root_loop_id (a root's days: top_roots'
-- first_hour and last_hour, or spend_rollup_hourly, which keeps it).
DROP TABLE IF EXISTS spend_rollup_daily;

CREATE VIEW IF NOT EXISTS spend_rollup_daily AS
SELECT toDate(hour) AS day, source, provider, model, loop_name,
       sum(calls_sum) AS calls,
       sum(input_tokens_sum) AS input_tokens,
       sum(output_tokens_sum) AS output_tokens,
       sum(cost_pico_sum) AS cost_pico,
       sum(unpriced_calls_sum) AS unpriced_calls
FROM spend_rollup_model_hourly
GROUP BY day, source, provider, model, loop_name;

DROP TABLE IF EXISTS top_roots;

CREATE VIEW IF NOT EXISTS top_roots AS
SELECT source, root_loop_id,
       sum(calls_sum) AS calls,
       sum(input_tokens_sum) AS input_tokens,
       sum(output_tokens_sum) AS output_tokens,
       sum(cost_pico_sum) AS cost_pico,
       min(hour) AS first_hour,
       max(hour) AS last_hour
FROM spend_rollup_root_hourly
GROUP BY source, root_loop_id;

-- Top loop names: the runtime's counted spend per loop name over all time.
CREATE VIEW IF NOT EXISTS spend_rollup_by_name AS
SELECT loop_name,
       sum(calls_sum) AS calls,
       sum(input_tokens_sum) AS input_tokens,
       sum(output_tokens_sum) AS output_tokens,
       sum(cost_pico_sum) AS cost_pico
FROM spend_rollup_model_hourly
WHERE source = 'runtime'
GROUP BY loop_name;

-- The committed rows of event_rollup_hour, renamed for the views below.
CREATE VIEW IF NOT EXISTS event_rollup_committed AS
SELECT hour, kind AS event_kind, label AS event_label, outcome AS event_outcome, loop_id AS event_loop, events AS event_count, flagged AS flagged_count
FROM event_rollup_hour
WHERE (hour, version) IN (SELECT hour, max(version) FROM rollup_commits GROUP BY hour);

-- tool_error_rates (0010) per hour: ToolCalled per tool, those with is_error.
CREATE VIEW IF NOT EXISTS tool_errors_hourly AS
SELECT hour, event_label AS tool, sum(event_count) AS calls, sum(flagged_count) AS errors
FROM event_rollup_committed
WHERE event_kind = 'ToolCalled'
GROUP BY hour, tool;

-- convergence_warnings (0010) from the rollups: per detector and UTC day,
-- warnings and the loops that had one.
CREATE VIEW IF NOT EXISTS convergence_warnings_daily AS
SELECT event_label AS detector, toDate(hour) AS day, sum(event_count) AS warnings, uniqExact(event_loop) AS loops
FROM event_rollup_committed
WHERE event_kind = 'ConvergenceWarning'
GROUP BY detector, day;

-- subagent_outcomes (0010) per UTC day: SubAgentCompleted per definition and outcome_kind.
CREATE VIEW IF NOT EXISTS subagent_outcomes_daily AS
SELECT toDate(hour) AS day, event_label AS definition, event_outcome AS outcome, sum(event_count) AS subagents
FROM event_rollup_committed
WHERE event_kind = 'SubAgentCompleted'
GROUP BY day, definition, outcome;

-- Spend per hour, source, provider, model and loop name with the open hours
-- answered at query time: the hours from the one holding the last finished
-- sweep's newest ingest stamp on (every hour when no sweep has finished) are
-- computed live from envelopes FINAL and craze_spend, as the rollup job
-- computes them (rollup_insert_runtime.sql, rollup_insert_craze.sql; loop
-- names as loop_roots holds them); earlier hours are the committed rollups.
-- Exact for every row of the open hours and every row the last sweep saw; a
-- row stored since with an older time waits for the next sweep. The live
-- part reads envelopes FINAL of the loops stored since an hour before the
-- open hours (by primary key): a row timed in an open hour but stored over
-- an hour before it (a producer clock far ahead) shows once its hour is
-- closed and swept.
CREATE VIEW IF NOT EXISTS spend_hourly_now AS
SELECT hour, source, provider, model, loop_name, calls_sum, input_tokens_sum, output_tokens_sum, cost_pico_sum, unpriced_calls_sum
FROM spend_rollup_model_hourly
WHERE hour < (SELECT toStartOfHour(max(seen_through)) FROM rollup_sweeps)
UNION ALL
SELECT bucket AS hour, 'runtime' AS source, provider, model, rolled_name AS loop_name,
       n AS calls_sum, input_sum AS input_tokens_sum, output_sum AS output_tokens_sum, cost_sum AS cost_pico_sum, toUInt64(0) AS unpriced_calls_sum
FROM
(
    SELECT bucket, provider, model, rolled_name,
           count() AS n, sum(toDecimal128(input_tokens, 0)) AS input_sum, sum(toDecimal128(output_tokens, 0)) AS output_sum, sum(toDecimal128(cost_pico, 0)) AS cost_sum
    FROM
    (
        SELECT loop_id, toStartOfHour(time) AS bucket, provider, model, input_tokens, output_tokens, cost_pico
        FROM
        (
            SELECT loop_id, seq, time, model_provider AS provider, model_name AS model, input_tokens, output_tokens, cost_pico
            FROM envelopes FINAL
            WHERE kind_class = 'ModelCalled'
              AND verdict IN ('ok', 'gap', 'time_regression')
              AND time >= (SELECT toStartOfHour(max(seen_through)) FROM rollup_sweeps)
              AND loop_id IN (SELECT loop_id FROM envelopes WHERE ingested_at >= (SELECT toDateTime(greatest(toUInt32(toStartOfHour(max(seen_through))), 3600) - 3600) FROM rollup_sweeps))
        ) AS calls
        ANY LEFT JOIN
        (
            SELECT loop_id, max(fork_at_seq) AS replayed_to
            FROM envelopes FINAL
            WHERE kind_class = 'ForkedFrom' AND verdict NOT IN ('malformed', 'fork')
              AND loop_id IN (SELECT loop_id FROM envelopes WHERE ingested_at >= (SELECT toDateTime(greatest(toUInt32(toStartOfHour(max(seen_through))), 3600) - 3600) FROM rollup_sweeps))
            GROUP BY loop_id
        ) AS forks USING loop_id
        WHERE seq > replayed_to
    ) AS counted
    ANY LEFT JOIN (SELECT loop_id, loop_name AS rolled_name FROM loop_roots FINAL) AS roots USING loop_id
    GROUP BY bucket, provider, model, rolled_name
)
UNION ALL
SELECT bucket AS hour, 'craze' AS source, provider, model, '' AS loop_name,
       n AS calls_sum, input_sum AS input_tokens_sum, output_sum AS output_tokens_sum, cost_sum AS cost_pico_sum, unpriced_n AS unpriced_calls_sum
FROM
(
    SELECT bucket, provider, model,
           count() AS n, sum(toDecimal128(input_tokens, 0)) AS input_sum, sum(toDecimal128(output_tokens, 0)) AS output_sum, sum(toDecimal128(cost_pico, 0)) AS cost_sum,
           countIf(unpriced = 1) AS unpriced_n
    FROM
    (
        SELECT session_id, toStartOfHour(at) AS bucket, model, input_tokens, output_tokens, cost_pico, unpriced
        FROM craze_spend
        WHERE at >= (SELECT toStartOfHour(max(seen_through)) FROM rollup_sweeps)
    ) AS reports
    ANY LEFT JOIN (SELECT session_id, provider FROM craze_sessions) AS sessions USING session_id
    GROUP BY bucket, provider, model
);

-- Reconciliation rolled up per loop (the questions of loop_reconciliation,
-- 0011/0012, and root_reconciliation, 0014, which read envelopes FINAL whole):
-- - loop_ledgers: a loop's own sums (verified model cost and model budget, a
--   fork's replays aside; every budget charge; LoopFinished.total_spend);
-- - loop_child_reports: per child and reporting parent, the parent's last
--   SubAgentCompleted.child_spend for it, a fork's replayed reports aside
--   (has_report 0 when every report it made was a replay).
-- The rollup job recomputes the rows of every loop with a new ledger row,
-- report or ForkedFrom, under its version; the highest version wins (FINAL),
-- so a stale recompute finishing late never does.
CREATE TABLE IF NOT EXISTS loop_ledgers
(
    loop_id          String,
    version          UInt64,
    model_cost       Decimal128(0),
    model_budget     Decimal128(0),
    budget           Decimal128(0),
    has_total_spend  UInt8,
    total_spend      Decimal128(0)
)
ENGINE = ReplacingMergeTree(version)
ORDER BY loop_id;

CREATE TABLE IF NOT EXISTS loop_child_reports
(
    child_loop_id  String,
    reporter       String,
    version        UInt64,
    seq            UInt64,
    has_report     UInt8,
    spend_pico     Int64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (child_loop_id, reporter);

-- loop_reconciliation's columns from the rollups, as Decimal128 (read them
-- exactly as in the README's "Exact money text"), with the same flags.
CREATE VIEW IF NOT EXISTS loop_reconciliation_rollup AS
SELECT
    loop_id,
    model_cost AS model_cost_pico,
    model_budget AS model_budget_pico,
    budget AS budget_pico,
    has_total_spend,
    total_spend AS total_spend_pico,
    has_child_spend,
    child_spend AS child_spend_pico,
    model_cost - model_budget AS model_minus_model_budget_pico,
    budget - total_spend AS budget_minus_total_spend_pico,
    budget - child_spend AS budget_minus_child_spend_pico,
    abs(toFloat64(model_cost - model_budget)) > greatest(1e6, abs(toFloat64(model_budget)) * 1e-9) AS model_disagrees,
    has_total_spend AND abs(toFloat64(budget - total_spend)) > greatest(1e6, abs(toFloat64(total_spend)) * 1e-9) AS total_spend_disagrees,
    has_child_spend AND abs(toFloat64(budget - child_spend)) > greatest(1e6, abs(toFloat64(child_spend)) * 1e-9) AS child_spend_disagrees,
    model_disagrees OR total_spend_disagrees OR child_spend_disagrees AS disagrees
FROM
(
    SELECT loop_id, model_cost, model_budget, budget, has_total_spend, total_spend, has_child_spend, toDecimal128(child_spend_reported, 0) AS child_spend
    FROM
    (
        SELECT loop_id, model_cost, model_budget, budget, has_total_spend, total_spend
        FROM loop_ledgers FINAL
    ) AS own
    ANY LEFT JOIN
    (
        SELECT child_loop_id AS loop_id, argMax(spend_pico, seq) AS child_spend_reported, 1 AS has_child_spend
        FROM loop_child_reports FINAL
        WHERE has_report = 1
        GROUP BY child_loop_id
    ) AS reported USING loop_id
) AS sides;

-- root_reconciliation from the rollups: per root (loop_roots; a loop it does
-- not hold is a root of its own), the tree's sums and its loops that disagree.
CREATE VIEW IF NOT EXISTS root_reconciliation_rollup AS
SELECT root AS root_loop_id,
       count() AS loops,
       sum(model_cost_pico) AS tree_model_cost_pico,
       sum(model_budget_pico) AS tree_model_budget_pico,
       sum(budget_pico) AS tree_budget_pico,
       countIf(disagrees) AS loops_disagreeing
FROM
(
    SELECT loop_id, if(placed_root = '', loop_id, placed_root) AS root, model_cost_pico, model_budget_pico, budget_pico, disagrees
    FROM
    (
        SELECT loop_id, model_cost_pico, model_budget_pico, budget_pico, disagrees
        FROM loop_reconciliation_rollup
    ) AS ledgers
    ANY LEFT JOIN (SELECT loop_id, root_loop_id AS placed_root FROM loop_roots FINAL) AS placed USING loop_id
) AS rooted
GROUP BY root;
