-- Hour rollups of counted spend for dashboards (README, "Rollups"): per UTC
-- hour, source, provider, model, loop name and root loop, the calls, tokens,
-- picodollars and unpriced calls of spend_calls' rows (0010), so a dashboard
-- over months reads thousands of rows, not millions.
--
-- Not a materialized view: one would fire on a retried or zombie insert too,
-- and its write can fail apart from the source insert (DESIGN.md §4). The
-- rollup job (`agentledger worker`, `agentledger rollups`) recomputes whole
-- hours from deduplicated rows (FINAL), each recompute under a new version:
-- 1. it writes the hour's rows under version V (in as many inserts as it
--    takes), then
-- 2. one row (hour, V) into rollup_commits.
-- Readers take, per hour, the rows of the hour's highest committed version
-- only. A recompute that dies before its commit leaves rows no reader takes;
-- one that dies after has replaced the hour whole. Versions come from one
-- counter (Redis INCR, never below the highest committed), taken before the
-- recompute reads: a later version always read later data, so a stale
-- recompute finishing late never wins.

-- Each runtime loop's root and name, as the rollup job folded the loop tree
-- (account/loop-tree.ts, the rules of `agentledger loops`). A loop not listed
-- is its own root with no name.
CREATE TABLE IF NOT EXISTS loop_roots
(
    loop_id       String,
    root_loop_id  String,
    loop_name     String,
    version       UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY loop_id;

CREATE TABLE IF NOT EXISTS spend_rollup_hour
(
    hour           DateTime('UTC'),
    version        UInt64,
    source         String,
    provider       String,
    model          String,
    loop_name      String,
    root_loop_id   String,
    calls          UInt64,
    input_tokens   Decimal128(0),
    output_tokens  Decimal128(0),
    cost_pico      Decimal128(0),
    unpriced_calls UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (hour, version, source, provider, model, loop_name, root_loop_id);

CREATE TABLE IF NOT EXISTS rollup_commits
(
    hour          DateTime('UTC'),
    version       UInt64,
    committed_at  DateTime('UTC')
)
ENGINE = MergeTree
ORDER BY (hour, version);

-- One row per finished sweep: every row ingested up to seen_through (the
-- newest ingest stamp it saw) is in the rollups. The next sweep starts from
-- there, less AGENTLEDGER_ROLLUP_LATE_MS.
CREATE TABLE IF NOT EXISTS rollup_sweeps
(
    version       UInt64,
    seen_through  DateTime('UTC'),
    hours         UInt64,
    finished_at   DateTime('UTC')
)
ENGINE = MergeTree
ORDER BY version;

-- The committed rollup rows, summed per key (a recompute may write one key in
-- several inserts). Money and tokens stay Decimal128: exact, and numbers a
-- dashboard can sum further.
CREATE VIEW IF NOT EXISTS spend_rollup_hourly AS
SELECT hour, source, provider, model, loop_name, root_loop_id,
       sum(calls) AS calls_sum,
       sum(input_tokens) AS input_tokens_sum,
       sum(output_tokens) AS output_tokens_sum,
       sum(cost_pico) AS cost_pico_sum,
       sum(unpriced_calls) AS unpriced_calls_sum
FROM spend_rollup_hour
WHERE (hour, version) IN (SELECT hour, max(version) FROM rollup_commits GROUP BY hour)
GROUP BY hour, source, provider, model, loop_name, root_loop_id;

-- The same per UTC day.
CREATE VIEW IF NOT EXISTS spend_rollup_daily AS
SELECT toDate(hour) AS day, source, provider, model, loop_name, root_loop_id,
       sum(calls_sum) AS calls,
       sum(input_tokens_sum) AS input_tokens,
       sum(output_tokens_sum) AS output_tokens,
       sum(cost_pico_sum) AS cost_pico,
       sum(unpriced_calls_sum) AS unpriced_calls
FROM spend_rollup_hourly
GROUP BY day, source, provider, model, loop_name, root_loop_id;

-- Roots (a task: a root loop with all its sub-agents; a craze session is its
-- own root) by counted spend, with their first and last hour of spend.
CREATE VIEW IF NOT EXISTS top_roots AS
SELECT source, root_loop_id,
       sum(calls_sum) AS calls,
       sum(input_tokens_sum) AS input_tokens,
       sum(output_tokens_sum) AS output_tokens,
       sum(cost_pico_sum) AS cost_pico,
       min(hour) AS first_hour,
       max(hour) AS last_hour
FROM spend_rollup_hourly
GROUP BY source, root_loop_id;
