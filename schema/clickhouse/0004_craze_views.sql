-- Views of craze_events for dashboards and for `agentledger sessions`: one
-- definition of "a counted report", "a turn's outcome" and "a sub-agent's
-- final status", so Grafana and the CLI agree. FINAL applies the
-- ReplacingMergeTree's deduplication at query time.

-- Spend rows: one per counted usage report (session-level, not replayed, in
-- seq order), in picodollars and tokens, with the model in force and the time.
CREATE VIEW IF NOT EXISTS craze_spend AS
SELECT session_id, incarnation, seq, at, model, cost_pico, input_tokens, output_tokens, reasoning_tokens,
       cache_read_tokens, cache_creation_tokens, unpriced
FROM craze_events FINAL
WHERE report = 1;

-- Turn outcomes: each (incarnation, turn id) once, by its last ending;
-- replayed events and sub-agent transcripts excluded.
CREATE VIEW IF NOT EXISTS craze_turns AS
SELECT session_id, incarnation, turn_id,
       argMax(turn_outcome, seq) AS outcome,
       argMax(turn_synthetic, seq) AS synthetic,
       argMax(err_class, seq) AS err_class,
       max(at) AS ended_at
FROM craze_events FINAL
WHERE turn_outcome != '' AND replayed = 0 AND agent = '' AND verdict != 'malformed'
GROUP BY session_id, incarnation, turn_id;

-- Sub-agent outcomes: per (incarnation, id, attempt) the last `finished` by
-- seq wins; spawned and never finished is 'abandoned'.
CREATE VIEW IF NOT EXISTS craze_subagents AS
SELECT session_id, incarnation, subagent_id, subagent_attempt,
       if(countIf(subagent_change = 'finished') = 0, 'abandoned',
          argMaxIf(subagent_status, seq, subagent_change = 'finished')) AS outcome,
       min(at) AS first_seen,
       max(at) AS last_seen
FROM craze_events FINAL
WHERE subagent_id != '' AND replayed = 0 AND agent = '' AND verdict != 'malformed'
GROUP BY session_id, incarnation, subagent_id, subagent_attempt;

-- Sessions: incarnations, spend (Int64 picodollars summed as Decimal128, read
-- as text so JSON keeps every digit), tokens, unpriced reports, what the
-- journal said about it, models, first and last seen.
CREATE VIEW IF NOT EXISTS craze_sessions AS
SELECT
    session_id,
    uniqExact(incarnation) AS incarnations,
    toString(sumIf(toDecimal128(cost_pico, 0), report = 1)) AS cost_pico,
    toString(sumIf(toDecimal128(input_tokens, 0), report = 1)) AS input_tokens,
    toString(sumIf(toDecimal128(output_tokens, 0), report = 1)) AS output_tokens,
    toString(sumIf(toDecimal128(reasoning_tokens, 0), report = 1)) AS reasoning_tokens,
    toString(sumIf(toDecimal128(cache_read_tokens, 0), report = 1)) AS cache_read_tokens,
    toString(sumIf(toDecimal128(cache_creation_tokens, 0), report = 1)) AS cache_creation_tokens,
    countIf(report = 1 AND unpriced = 1) AS unpriced_reports,
    groupUniqArrayIf(model, model != '') AS models,
    anyIf(provider, provider != '') AS provider,
    anyIf(cwd, cwd != '') AS cwd,
    min(at) AS first_seen,
    max(at) AS last_seen
FROM craze_events FINAL
WHERE verdict != 'malformed'
GROUP BY session_id;
