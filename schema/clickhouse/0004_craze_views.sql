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
