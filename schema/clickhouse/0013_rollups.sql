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

-- Each runtime loop's place in the tree and its name, as the rollup job
-- folded the loop tree (account/loop-tree.ts, the rules of `agentledger
-- loops`): its parent, its ancestors (root first, parent last; empty for a
-- root) and its root. A loop not listed is a root of its own with no name.
CREATE TABLE IF NOT EXISTS loop_roots
(
    loop_id         String,
    root_loop_id    String,
    loop_name       String,
    parent_loop_id  String,
    ancestors       Array(String),
    version         UInt64
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
    loop_id        String,
    calls          UInt64,
    input_tokens   Decimal128(0),
    output_tokens  Decimal128(0),
    cost_pico      Decimal128(0),
    unpriced_calls UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (hour, version, source, provider, model, loop_name, root_loop_id, loop_id);

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

-- The rows readers take: per hour, those of its highest committed version.
CREATE VIEW IF NOT EXISTS spend_rollup_committed AS
SELECT hour, source, provider, model, loop_name, root_loop_id, loop_id, calls, input_tokens, output_tokens, cost_pico, unpriced_calls
FROM spend_rollup_hour
WHERE (hour, version) IN (SELECT hour, max(version) FROM rollup_commits GROUP BY hour);

-- Per hour, source, provider, model, loop name and root. Money and tokens
-- stay Decimal128: exact, and numbers a dashboard can sum further.
CREATE VIEW IF NOT EXISTS spend_rollup_hourly AS
SELECT hour, source, provider, model, loop_name, root_loop_id,
       sum(calls) AS calls_sum,
       sum(input_tokens) AS input_tokens_sum,
       sum(output_tokens) AS output_tokens_sum,
       sum(cost_pico) AS cost_pico_sum,
       sum(unpriced_calls) AS unpriced_calls_sum
FROM spend_rollup_committed
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

-- The loop tree with spend: every loop loop_roots places (a LoopStarted or a
-- parent's SubAgentSpawned names it), its parent, root, name and depth, its
-- own counted model calls and cost, and its subtree's cost (its own plus
-- every descendant's, each loop once; a parent's child_spend never added).
CREATE VIEW IF NOT EXISTS loop_tree AS
SELECT loop_id, parent_loop_id, root_loop_id, loop_name, depth, own_calls, own_cost_pico, subtree_cost_pico
FROM
(
    SELECT loop_id, parent_loop_id, root_loop_id, loop_name, depth, own_calls, own_cost_pico
    FROM
    (
        SELECT loop_id, parent_loop_id, root_loop_id, loop_name, length(ancestors) AS depth
        FROM loop_roots FINAL
    ) AS placed
    ANY LEFT JOIN
    (
        SELECT loop_id, sum(calls) AS own_calls, sum(cost_pico) AS own_cost_pico
        FROM spend_rollup_committed
        WHERE source = 'runtime'
        GROUP BY loop_id
    ) AS own USING loop_id
) AS loops
ANY LEFT JOIN
(
    SELECT ancestor AS loop_id, subtree_cost_pico
    FROM
    (
        SELECT ancestor, sum(spent_cost) AS subtree_cost_pico
        FROM
        (
            SELECT spent_cost, arrayPushBack(ancestors, loop_id) AS line
            FROM
            (
                SELECT loop_id, sum(cost_pico) AS spent_cost
                FROM spend_rollup_committed
                WHERE source = 'runtime'
                GROUP BY loop_id
            ) AS spent
            ANY LEFT JOIN (SELECT loop_id, ancestors FROM loop_roots FINAL) AS placed USING loop_id
        )
        ARRAY JOIN line AS ancestor
        GROUP BY ancestor
    )
) AS subtree USING loop_id;
