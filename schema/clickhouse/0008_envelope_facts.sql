-- The payload facts the spend ledger sums, on each envelopes row.
--
-- The consumer decodes every payload already; it now also writes what the
-- ledger needs into these columns of the envelope's own row (src/account/
-- loop-facts.ts). They land with the row, in the same single insert, and
-- collapse with it under ReplacingMergeTree and FINAL: no derived write can
-- lose, double or drift from them (DESIGN.md §4). A kind that does not carry a
-- column leaves its default, and so do rows stored before this migration and
-- malformed rows. Money is Int64 picodollars per event (an event beyond about
-- $9.2M is refused as malformed, never wrapped); sums widen in SQL.
--
-- ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: the migrator takes an
-- ADD COLUMN whose column is already there, with the same type, as done
-- (src/sink/clickhouse/migrate.ts), so a run killed half-way through this
-- file is finished by the next run. One column per statement for that reason.
--
-- envelopes_probe, the Null-engine twin the consumer test-inserts into
-- (0007), gets every column too: it must take exactly the rows envelopes takes.

-- ModelCalled: provider, model, usage.in, usage.out, usage.cost_usd (as Int64
-- picodollars, and its number text as written), duration_ms (ToolCalled's too).
ALTER TABLE envelopes ADD COLUMN model_provider String DEFAULT '';
ALTER TABLE envelopes ADD COLUMN model_name String DEFAULT '';
ALTER TABLE envelopes ADD COLUMN input_tokens Int64 DEFAULT 0;
ALTER TABLE envelopes ADD COLUMN output_tokens Int64 DEFAULT 0;
ALTER TABLE envelopes ADD COLUMN cost_pico Int64 DEFAULT 0;
ALTER TABLE envelopes ADD COLUMN cost_usd_text String DEFAULT '';
ALTER TABLE envelopes ADD COLUMN duration_ms Int64 DEFAULT 0;

-- BudgetCharged: usd (picodollars, text), tokens, wall_clock_ms, iterations, action_type.
ALTER TABLE envelopes ADD COLUMN budget_pico Int64 DEFAULT 0;
ALTER TABLE envelopes ADD COLUMN budget_usd_text String DEFAULT '';
ALTER TABLE envelopes ADD COLUMN budget_tokens Int64 DEFAULT 0;
ALTER TABLE envelopes ADD COLUMN budget_wall_ms Int64 DEFAULT 0;
ALTER TABLE envelopes ADD COLUMN budget_iterations Int64 DEFAULT 0;
ALTER TABLE envelopes ADD COLUMN action_type String DEFAULT '';

-- LoopStarted: name, parent_id, depth, seed, config_hash.
ALTER TABLE envelopes ADD COLUMN loop_name String DEFAULT '';
ALTER TABLE envelopes ADD COLUMN parent_loop_id String DEFAULT '';
ALTER TABLE envelopes ADD COLUMN depth Int64 DEFAULT 0;
ALTER TABLE envelopes ADD COLUMN loop_seed Int64 DEFAULT 0;
ALTER TABLE envelopes ADD COLUMN config_hash String DEFAULT '';

-- SubAgentSpawned and SubAgentCompleted: child_loop_id, definition.
ALTER TABLE envelopes ADD COLUMN child_loop_id String DEFAULT '';
ALTER TABLE envelopes ADD COLUMN definition String DEFAULT '';

-- SubAgentCompleted and LoopFinished: outcome_kind, error, and child_spend /
-- total_spend: the raw JSON text, and its members usd, tokens, wall_clock_ms
-- and iterations read exactly (0 where absent, not a number or beyond Int64).
ALTER TABLE envelopes ADD COLUMN outcome String DEFAULT '';
ALTER TABLE envelopes ADD COLUMN error String DEFAULT '';
ALTER TABLE envelopes ADD COLUMN spend_raw String DEFAULT '';
ALTER TABLE envelopes ADD COLUMN spend_pico Int64 DEFAULT 0;
ALTER TABLE envelopes ADD COLUMN spend_usd_text String DEFAULT '';
ALTER TABLE envelopes ADD COLUMN spend_tokens Int64 DEFAULT 0;
ALTER TABLE envelopes ADD COLUMN spend_wall_ms Int64 DEFAULT 0;
ALTER TABLE envelopes ADD COLUMN spend_iterations Int64 DEFAULT 0;

-- ForkedFrom: source_loop_id, at_seq.
ALTER TABLE envelopes ADD COLUMN fork_source String DEFAULT '';
ALTER TABLE envelopes ADD COLUMN fork_at_seq UInt64 DEFAULT 0;

-- ToolCalled: tool, is_error.
ALTER TABLE envelopes ADD COLUMN tool String DEFAULT '';
ALTER TABLE envelopes ADD COLUMN tool_is_error UInt8 DEFAULT 0;

-- ConvergenceWarning: detector.
ALTER TABLE envelopes ADD COLUMN detector String DEFAULT '';

-- IterationStarted: iteration.
ALTER TABLE envelopes ADD COLUMN iteration Int64 DEFAULT 0;

-- The same columns on the probe twin, in the same order.
ALTER TABLE envelopes_probe ADD COLUMN model_provider String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN model_name String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN input_tokens Int64 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN output_tokens Int64 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN cost_pico Int64 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN cost_usd_text String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN duration_ms Int64 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN budget_pico Int64 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN budget_usd_text String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN budget_tokens Int64 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN budget_wall_ms Int64 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN budget_iterations Int64 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN action_type String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN loop_name String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN parent_loop_id String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN depth Int64 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN loop_seed Int64 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN config_hash String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN child_loop_id String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN definition String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN outcome String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN error String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN spend_raw String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN spend_pico Int64 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN spend_usd_text String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN spend_tokens Int64 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN spend_wall_ms Int64 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN spend_iterations Int64 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN fork_source String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN fork_at_seq UInt64 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN tool String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN tool_is_error UInt8 DEFAULT 0;
ALTER TABLE envelopes_probe ADD COLUMN detector String DEFAULT '';
ALTER TABLE envelopes_probe ADD COLUMN iteration Int64 DEFAULT 0;
