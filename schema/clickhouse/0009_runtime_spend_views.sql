-- What the loop runtime spent, as views of `envelopes FINAL` over the payload
-- facts each row carries (migration 0008): one definition of "counted spend"
-- for the CLI (`loops`, `spend`) and for dashboards. Plain views, computed
-- when read, so a redelivery, a row landed twice or a ForkedFrom that arrives
-- after the replays it covers can never leave a stale or doubled figure
-- (README, "Loop-runtime spend").
--
-- The counting rules:
-- - verified: the envelope's own link verified (ok; gap and time_regression
--   too: their hash is the one recomputed). mismatch, fork (a second version)
--   and regression rows are unverified: reported apart, never in spend.
-- - replayed: a fork loop's events 1..AtSeq replay its source's and are the
--   source's money; they are not counted again in the fork.
-- - a parent's SubAgentCompleted.child_spend is the child's own spend seen
--   from the parent's ledger: kept for reconciliation (spend_raw), never added.

-- Per fork loop, the seq up to which its events are replays (0: not a fork).
-- The first version of a ForkedFrom counts whatever its link: a tampered one
-- is reported as a violation, and ignoring it would count replays twice.
-- (No alias here or below repeats a column name of envelopes: 18.16 would
-- read the alias inside the aggregate.)
CREATE VIEW IF NOT EXISTS loop_forks AS
SELECT loop_id, any(fork_source) AS source_loop_id, max(fork_at_seq) AS replayed_to
FROM envelopes FINAL
WHERE kind_class = 'ForkedFrom' AND verdict NOT IN ('malformed', 'fork')
GROUP BY loop_id;

-- One row per ModelCalled or BudgetCharged envelope (malformed rows aside),
-- with its facts and the two flags every sum filters on.
CREATE VIEW IF NOT EXISTS runtime_spend AS
SELECT loop_id, seq, time, kind_class, verdict,
       verdict IN ('ok', 'gap', 'time_regression') AS verified,
       seq <= replayed_to AS replayed,
       model_provider AS provider, model_name AS model, input_tokens, output_tokens, cost_pico, duration_ms,
       budget_pico, budget_tokens, budget_wall_ms, budget_iterations, action_type
FROM
(
    SELECT loop_id, seq, time, kind_class, verdict, model_provider, model_name, input_tokens, output_tokens,
           cost_pico, duration_ms, budget_pico, budget_tokens, budget_wall_ms, budget_iterations, action_type
    FROM envelopes FINAL
    WHERE kind_class IN ('ModelCalled', 'BudgetCharged') AND verdict != 'malformed'
) AS spend
ANY LEFT JOIN (SELECT loop_id, replayed_to FROM loop_forks) AS forks USING loop_id;

-- Per loop: what its own envelopes say of it (LoopStarted, LoopFinished,
-- iterations, sub-agents, fork source), second versions and malformed rows
-- aside. Its parent as the child's LoopStarted names it (a fork's own,
-- replayed LoopStarted included: that is where a fork's place in the tree
-- comes from); the parent's side (SubAgentSpawned) is in loop_spawns, and the
-- CLI joins both into the tree. Iterations and sub-agents count the loop's
-- own events: a fork's replayed ones are its source's.
CREATE VIEW IF NOT EXISTS runtime_loops AS
SELECT
    loop_id,
    argMaxIf(loop_name, seq, kind_class = 'LoopStarted') AS name,
    argMaxIf(parent_loop_id, seq, kind_class = 'LoopStarted') AS started_parent,
    argMaxIf(depth, seq, kind_class = 'LoopStarted') AS started_depth,
    countIf(kind_class = 'LoopStarted') > 0 AS started,
    argMaxIf(outcome, seq, kind_class = 'LoopFinished') AS finished_outcome,
    argMaxIf(error, seq, kind_class = 'LoopFinished') AS finished_error,
    argMaxIf(spend_raw, seq, kind_class = 'LoopFinished') AS total_spend_raw,
    countIf(kind_class = 'IterationStarted' AND seq > replayed_to) AS iterations,
    countIf(kind_class = 'SubAgentSpawned' AND seq > replayed_to) AS subagents_spawned,
    countIf(kind_class = 'SubAgentCompleted' AND outcome = 'Completed' AND seq > replayed_to) AS subagents_completed,
    countIf(kind_class = 'SubAgentCompleted' AND outcome != 'Completed' AND seq > replayed_to) AS subagents_failed,
    argMaxIf(fork_source, seq, kind_class = 'ForkedFrom') AS forked_from,
    maxIf(fork_at_seq, kind_class = 'ForkedFrom') AS forked_at_seq,
    min(time) AS first_time,
    max(time) AS last_time,
    count() AS envelope_count
FROM
(
    SELECT loop_id, seq, time, kind_class, loop_name, parent_loop_id, depth, outcome, error, spend_raw, fork_source, fork_at_seq
    FROM envelopes FINAL
    WHERE verdict NOT IN ('malformed', 'fork')
) AS own
ANY LEFT JOIN (SELECT loop_id, replayed_to FROM loop_forks) AS forks USING loop_id
GROUP BY loop_id;

-- The parent's side of the tree: which loop spawned which child. A fork's
-- replayed SubAgentSpawned names its source's child, not a child of the fork.
CREATE VIEW IF NOT EXISTS loop_spawns AS
SELECT child_loop_id AS child, any(loop_id) AS spawned_by, any(definition) AS spawn_definition
FROM
(
    SELECT loop_id, seq, child_loop_id, definition
    FROM envelopes FINAL
    WHERE kind_class = 'SubAgentSpawned' AND child_loop_id != '' AND verdict NOT IN ('malformed', 'fork')
) AS spawns
ANY LEFT JOIN (SELECT loop_id, replayed_to FROM loop_forks) AS forks USING loop_id
WHERE seq > replayed_to
GROUP BY child_loop_id;
