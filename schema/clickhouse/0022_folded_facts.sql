-- The facts folded into ten typed slots the kinds share (issue 23 item 1).
--
-- Why: the 34 fact columns of 0008, empty on most rows (a row carries the
-- facts of its own kind only), were a third of what ClickHouse spent per
-- stored row on 18.16 and on current versions, and a third of the insert
-- body's building (docs/benchmarks.md, "Folded fact columns"). The table now
-- stores ten slots, s1..s6 String and n1..n4 Int64; which fact of which kind
-- sits in which slot is declared once in src/rows/envelope-facts.ts
-- (FACT_SLOTS), and test/unit/rows/envelope-facts.test.ts checks every
-- expression below against it. The same meaning shares a slot across kinds:
-- n3 is always picodollars, s3 its producer's text.
--
-- Readers keep the fact names: each fact becomes an ALIAS column reading its
-- kind's slot (`cost_pico` is `if(kind_class = 'ModelCalled', n3, 0)`), so no
-- reader's SQL changes and every fact still reads its default on a row of
-- another kind. ALIAS columns on the table rather than per-kind views: 18.16
-- pushes no predicate into a view, and the readers' primary-key and time
-- filters must reach the table (docs/architecture.md).
--
-- The data migration, in place (no table swap, nothing to rename back):
-- 1. each slot is added with a DEFAULT that computes it from the facts, per
--    kind. Rows stored before read their slots through it; rows an insert
--    names only facts for (a writer of the previous version) get them
--    computed at insert time.
-- 2. OPTIMIZE … FINAL rewrites every part of every partition, which writes the
--    slots of the old rows into the parts (the DEFAULT evaluated once).
-- 3. a check that every active part now holds the slot columns: a part
--    written while this ran by a writer that still names the facts (an insert
--    started before step 1), or a partition OPTIMIZE skipped because a merge
--    held it, fails the migration here, before any fact is lost ("Value
--    passed to 'throwIf' function is non zero"); `agentledger migrate` again
--    finishes it.
-- 4. two ALTERs turn every fact into its ALIAS (two, since 18.16 refuses an
--    ALTER that removes more than 50 files from a part:
--    max_files_to_remove_in_alter_columns, two files per column). The first
--    also turns every slot's DEFAULT into a constant, at once with its 24
--    facts: from it on, an insert that names the facts is refused (code 16,
--    "No such column"), so a writer of the previous version stops on its
--    first flush with nothing stored and its offsets not committed, and its
--    records are stored by the new version; before it, such an insert got
--    its slots computed. No fact is ever neither stored nor read from a
--    slot. Between the two, only a row written by a new writer that skipped
--    this migration (`--no-migrate`) would read its last ten facts as
--    defaults, until the second. Stop the old writers before migrating
--    (docs/operations.md, "Upgrading to 0022").
--
-- Every statement runs again to the same end (a run killed half-way is
-- finished by the next): an ADD COLUMN of an existing column counts as done
-- (src/sink/clickhouse/migrate.ts), OPTIMIZE and the check are repeatable,
-- and MODIFY to what a column already is changes nothing. After step 4, the
-- slot DEFAULTs of step 1 are gone, so step 2 and 3 of a rerun find every
-- slot stored.
--
-- envelopes_probe, the Null-engine twin (0007), is made again from the new
-- table: a Null table holds nothing to migrate.
--
-- Rollback (to a version before 0022): stop the writers, then, as the
-- migrator user, one ALTER turning each fact back into an ordinary column
-- with its ALIAS expression as DEFAULT (`MODIFY COLUMN cost_pico Int64
-- DEFAULT if(kind_class = 'ModelCalled', n3, toInt64(0))`, …), `OPTIMIZE TABLE
-- envelopes FINAL` to store them, then `MODIFY COLUMN cost_pico Int64 DEFAULT
-- 0` for each fact, and `ALTER TABLE schema_migrations DELETE WHERE version =
-- 22` (docs/operations.md). The slots may stay: the old writer does not name
-- them, and their DEFAULT then reads ''/0.

ALTER TABLE envelopes ADD COLUMN s1 String DEFAULT multiIf(kind_class = 'ModelCalled', model_provider, kind_class = 'BudgetCharged', action_type, kind_class = 'LoopStarted', loop_name, kind_class IN ('SubAgentSpawned', 'SubAgentCompleted', 'LoopFinished'), child_loop_id, kind_class = 'ForkedFrom', fork_source, kind_class = 'ToolCalled', tool, kind_class = 'ConvergenceWarning', detector, '');
ALTER TABLE envelopes ADD COLUMN s2 String DEFAULT multiIf(kind_class = 'ModelCalled', model_name, kind_class = 'LoopStarted', parent_loop_id, kind_class IN ('SubAgentSpawned', 'SubAgentCompleted', 'LoopFinished'), definition, '');
ALTER TABLE envelopes ADD COLUMN s3 String DEFAULT multiIf(kind_class = 'ModelCalled', cost_usd_text, kind_class = 'BudgetCharged', budget_usd_text, kind_class = 'LoopStarted', config_hash, kind_class IN ('SubAgentCompleted', 'LoopFinished'), spend_usd_text, '');
ALTER TABLE envelopes ADD COLUMN s4 String DEFAULT multiIf(kind_class IN ('SubAgentCompleted', 'LoopFinished'), outcome, '');
ALTER TABLE envelopes ADD COLUMN s5 String DEFAULT multiIf(kind_class IN ('SubAgentCompleted', 'LoopFinished'), error, '');
ALTER TABLE envelopes ADD COLUMN s6 String DEFAULT multiIf(kind_class IN ('SubAgentCompleted', 'LoopFinished'), spend_raw, '');
ALTER TABLE envelopes ADD COLUMN n1 Int64 DEFAULT multiIf(kind_class = 'ModelCalled', toInt64(input_tokens), kind_class = 'BudgetCharged', toInt64(budget_tokens), kind_class = 'LoopStarted', toInt64(depth), kind_class IN ('SubAgentCompleted', 'LoopFinished'), toInt64(spend_tokens), kind_class = 'ForkedFrom', toInt64(fork_at_seq), kind_class = 'ToolCalled', toInt64(tool_is_error), kind_class = 'IterationStarted', toInt64(iteration), toInt64(0));
ALTER TABLE envelopes ADD COLUMN n2 Int64 DEFAULT multiIf(kind_class = 'ModelCalled', toInt64(output_tokens), kind_class = 'BudgetCharged', toInt64(budget_wall_ms), kind_class = 'LoopStarted', toInt64(loop_seed), kind_class IN ('SubAgentCompleted', 'LoopFinished'), toInt64(spend_wall_ms), toInt64(0));
ALTER TABLE envelopes ADD COLUMN n3 Int64 DEFAULT multiIf(kind_class = 'ModelCalled', toInt64(cost_pico), kind_class = 'BudgetCharged', toInt64(budget_pico), kind_class IN ('SubAgentCompleted', 'LoopFinished'), toInt64(spend_pico), toInt64(0));
ALTER TABLE envelopes ADD COLUMN n4 Int64 DEFAULT multiIf(kind_class IN ('ModelCalled', 'ToolCalled'), toInt64(duration_ms), kind_class = 'BudgetCharged', toInt64(budget_iterations), kind_class IN ('SubAgentCompleted', 'LoopFinished'), toInt64(spend_iterations), toInt64(0));

OPTIMIZE TABLE envelopes FINAL;

SELECT throwIf(count() > 0) FROM system.parts
WHERE database = currentDatabase() AND table = 'envelopes' AND active AND name NOT IN (
    SELECT name FROM system.parts_columns
    WHERE database = currentDatabase() AND table = 'envelopes' AND active AND column IN ('s1', 's2', 's3', 's4', 's5', 's6', 'n1', 'n2', 'n3', 'n4')
    GROUP BY name HAVING count() = 10);

ALTER TABLE envelopes
    MODIFY COLUMN s1 String DEFAULT '',
    MODIFY COLUMN s2 String DEFAULT '',
    MODIFY COLUMN s3 String DEFAULT '',
    MODIFY COLUMN s4 String DEFAULT '',
    MODIFY COLUMN s5 String DEFAULT '',
    MODIFY COLUMN s6 String DEFAULT '',
    MODIFY COLUMN n1 Int64 DEFAULT toInt64(0),
    MODIFY COLUMN n2 Int64 DEFAULT toInt64(0),
    MODIFY COLUMN n3 Int64 DEFAULT toInt64(0),
    MODIFY COLUMN n4 Int64 DEFAULT toInt64(0),
    MODIFY COLUMN model_provider String ALIAS if(kind_class = 'ModelCalled', s1, ''),
    MODIFY COLUMN model_name String ALIAS if(kind_class = 'ModelCalled', s2, ''),
    MODIFY COLUMN input_tokens Int64 ALIAS if(kind_class = 'ModelCalled', n1, toInt64(0)),
    MODIFY COLUMN output_tokens Int64 ALIAS if(kind_class = 'ModelCalled', n2, toInt64(0)),
    MODIFY COLUMN cost_pico Int64 ALIAS if(kind_class = 'ModelCalled', n3, toInt64(0)),
    MODIFY COLUMN cost_usd_text String ALIAS if(kind_class = 'ModelCalled', s3, ''),
    MODIFY COLUMN duration_ms Int64 ALIAS if(kind_class IN ('ModelCalled', 'ToolCalled'), n4, toInt64(0)),
    MODIFY COLUMN budget_pico Int64 ALIAS if(kind_class = 'BudgetCharged', n3, toInt64(0)),
    MODIFY COLUMN budget_usd_text String ALIAS if(kind_class = 'BudgetCharged', s3, ''),
    MODIFY COLUMN budget_tokens Int64 ALIAS if(kind_class = 'BudgetCharged', n1, toInt64(0)),
    MODIFY COLUMN budget_wall_ms Int64 ALIAS if(kind_class = 'BudgetCharged', n2, toInt64(0)),
    MODIFY COLUMN budget_iterations Int64 ALIAS if(kind_class = 'BudgetCharged', n4, toInt64(0)),
    MODIFY COLUMN action_type String ALIAS if(kind_class = 'BudgetCharged', s1, ''),
    MODIFY COLUMN loop_name String ALIAS if(kind_class = 'LoopStarted', s1, ''),
    MODIFY COLUMN parent_loop_id String ALIAS if(kind_class = 'LoopStarted', s2, ''),
    MODIFY COLUMN depth Int64 ALIAS if(kind_class = 'LoopStarted', n1, toInt64(0)),
    MODIFY COLUMN loop_seed Int64 ALIAS if(kind_class = 'LoopStarted', n2, toInt64(0)),
    MODIFY COLUMN config_hash String ALIAS if(kind_class = 'LoopStarted', s3, ''),
    MODIFY COLUMN child_loop_id String ALIAS if(kind_class IN ('SubAgentSpawned', 'SubAgentCompleted', 'LoopFinished'), s1, ''),
    MODIFY COLUMN definition String ALIAS if(kind_class IN ('SubAgentSpawned', 'SubAgentCompleted', 'LoopFinished'), s2, ''),
    MODIFY COLUMN outcome String ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), s4, ''),
    MODIFY COLUMN error String ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), s5, ''),
    MODIFY COLUMN spend_raw String ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), s6, ''),
    MODIFY COLUMN spend_pico Int64 ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), n3, toInt64(0));

ALTER TABLE envelopes
    MODIFY COLUMN spend_usd_text String ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), s3, ''),
    MODIFY COLUMN spend_tokens Int64 ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), n1, toInt64(0)),
    MODIFY COLUMN spend_wall_ms Int64 ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), n2, toInt64(0)),
    MODIFY COLUMN spend_iterations Int64 ALIAS if(kind_class IN ('SubAgentCompleted', 'LoopFinished'), n4, toInt64(0)),
    MODIFY COLUMN fork_source String ALIAS if(kind_class = 'ForkedFrom', s1, ''),
    MODIFY COLUMN fork_at_seq UInt64 ALIAS if(kind_class = 'ForkedFrom', toUInt64(n1), toUInt64(0)),
    MODIFY COLUMN tool String ALIAS if(kind_class = 'ToolCalled', s1, ''),
    MODIFY COLUMN tool_is_error UInt8 ALIAS if(kind_class = 'ToolCalled', toUInt8(n1), toUInt8(0)),
    MODIFY COLUMN detector String ALIAS if(kind_class = 'ConvergenceWarning', s1, ''),
    MODIFY COLUMN iteration Int64 ALIAS if(kind_class = 'IterationStarted', n1, toInt64(0));

DROP TABLE IF EXISTS envelopes_probe;
CREATE TABLE IF NOT EXISTS envelopes_probe AS envelopes ENGINE = Null;
