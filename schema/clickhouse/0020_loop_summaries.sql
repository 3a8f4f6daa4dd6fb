-- Each runtime loop's row as `agentledger loops` reads it, kept by the rollup
-- sweep (docs/spend.md "How `loops` reads"), so that `loops` reads one row
-- per loop instead of every loop's envelopes.
--
-- loop_summaries: per loop, the columns runtime_loop_rows.sql computes, as it
-- returns them (the sums and times as the exact text it renders), and the
-- children its SubAgentSpawned rows name (loop_spawns' rule: a fork's replays
-- aside), the parent's side of the tree. `present` 0: the loop has no row in
-- runtime_loops (every envelope malformed or a second version). The sweep
-- recomputes, under its version, every loop with a row ingested since the last
-- summary mark; the highest version wins (FINAL), so a stale recompute
-- finishing late never does (versions as in 0013).
--
-- loop_summary_marks: one row per summary step that finished (key 0, the
-- highest version kept): every loop with no row ingested at or after
-- seen_through less AGENTLEDGER_ROLLUP_LATE_MS has its exact row in
-- loop_summaries. Its own mark, not rollup_sweeps': a database swept before
-- this migration has sweeps and no summaries.
CREATE TABLE IF NOT EXISTS loop_summaries
(
    loop_id                String,
    version                UInt64,
    present                UInt8,
    name                   String,
    started_parent         String,
    started_depth          Int64,
    started                UInt8,
    finished_outcome       String,
    finished_error         String,
    iterations             UInt64,
    subagents_spawned      UInt64,
    subagents_completed    UInt64,
    subagents_failed       UInt64,
    forked_from            String,
    forked_at_seq          UInt64,
    first_time_text        String,
    last_time_text         String,
    model_calls            UInt64,
    input_tokens_sum       String,
    output_tokens_sum      String,
    model_cost             String,
    budget_cost            String,
    unverified_model_cost  String,
    children               Array(String)
)
ENGINE = ReplacingMergeTree(version)
ORDER BY loop_id;

CREATE TABLE IF NOT EXISTS loop_summary_marks
(
    mark          UInt8,
    version       UInt64,
    seen_through  DateTime('UTC'),
    finished_at   DateTime('UTC')
)
ENGINE = ReplacingMergeTree(version)
ORDER BY mark;
