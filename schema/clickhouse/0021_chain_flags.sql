-- Chain violations kept by the rollup sweep (docs/dashboards.md "How the
-- chain reads read"), as loop_summaries (0020) keeps each loop's row for
-- `loops`: so that a read of the violations no longer reads the key columns
-- of every envelope.
--
-- Why: the 0019 view reads only the flagged envelopes' own columns, but finds
-- the 'ok' copies of their records by kafka_offset over the whole table; with
-- one flag per few thousand envelopes every granule holds one, so every read
-- of chain_violations read the small columns of all envelopes (seconds at
-- 10M model calls on 18.16).
--
-- A loop's violations depend on its own envelopes only (every copy of a key
-- has the key's loop_id), so, as for loop_summaries, the sweep step
-- (src/rollups/chain.ts) recomputes, under the sweep's version, every loop
-- with a row ingested since the last chain-flag mark less
-- AGENTLEDGER_ROLLUP_LATE_MS (every loop when no mark is stored, and at
-- `agentledger rollups rebuild`):
-- - chain_flags: the loop's rows of chain_violations (0019: each key as FINAL
--   keeps it, keys kept 'ok' dropped), with kind_class, cost_pico and
--   model_name beside (what the unverified-spend reads need);
-- - chain_flag_loops: the loop's commit, one row per recomputed loop and
--   version, written after its chain_flags rows, with its number of keys
--   (distinct records stored: `report`'s 'ok' count is the keys less the
--   flags). Readers take, per loop, only the chain_flags rows of the highest
--   version committed here, so a loop recomputed with no flag any more drops
--   its old ones, and a stale recompute (a lower version, which read earlier
--   data) never wins; rows of an uncommitted version are never read;
-- - chain_flag_marks: one row per finished step (key 0, the highest version
--   kept, as loop_summary_marks): every loop with no row ingested at or after
--   seen_through less late_s (the step's margin, stored since the views have
--   no configuration to read it from) has its exact rows in chain_flags.
--   Its own mark: a database swept before this migration has sweeps and
--   summary marks and no chain flags.
--
-- Readers (the *_now views below): the kept rows of the loops with no row
-- ingested since the mark less its margin, and the 0019 logic, by primary key
-- (loop_id IN), for the loops with one (chain_loops_changed: every loop
-- while no mark is stored, the 0019 view's answer). Rows stored later than
-- their stamp by more than the margin, or envelopes dropped (a partition),
-- are not seen until `agentledger rollups rebuild`, as for every rollup.
-- 18.16 pushes no predicate into a view: a read with a filter (a time range)
-- reads the whole view, which is the kept rows and the changed loops' only.
CREATE TABLE IF NOT EXISTS chain_flags
(
    loop_id         String,
    version         UInt64,
    seq             UInt64,
    verdict         String,
    detail          String,
    kind            String,
    time            DateTime('UTC'),
    time_text       String,
    carried_hash    String,
    expected_hash   String,
    payload         String,
    evidence        String,
    kafka_topic     String,
    kafka_partition UInt32,
    kafka_offset    UInt64,
    ingested_at     DateTime('UTC'),
    kind_class      String,
    cost_pico       Int64,
    model_name      String
)
ENGINE = MergeTree
ORDER BY (loop_id, version, seq, kafka_topic, kafka_partition, kafka_offset);

CREATE TABLE IF NOT EXISTS chain_flag_loops
(
    loop_id  String,
    version  UInt64,
    keys     UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY loop_id;

CREATE TABLE IF NOT EXISTS chain_flag_marks
(
    mark          UInt8,
    version       UInt64,
    seen_through  DateTime('UTC'),
    late_s        UInt32,
    finished_at   DateTime('UTC')
)
ENGINE = ReplacingMergeTree(version)
ORDER BY mark;

-- Per loop, the version whose chain_flags rows readers take, and its keys:
-- the highest committed (FINAL of a ReplacingMergeTree(version): one small
-- row per loop, cheaper than a GROUP BY on 18.16; two commits of one version
-- are one recompute's, equal).
CREATE VIEW IF NOT EXISTS chain_flag_current AS
SELECT loop_id, version AS current_version, keys AS current_keys
FROM chain_flag_loops FINAL;

-- The loops read live: a row ingested at or after the mark's seen_through
-- less its margin (every loop while no mark is stored). Pruned by partition
-- (envelopes are partitioned by the month of ingested_at); the scalar is a
-- constant before index analysis.
CREATE VIEW IF NOT EXISTS chain_loops_changed AS
SELECT DISTINCT loop_id
FROM envelopes
WHERE ingested_at >= toDateTime((SELECT toUInt32(greatest(max(toInt64(toUInt32(seen_through)) - late_s), 0)) FROM chain_flag_marks FINAL));

-- chain_violations (0019) now: the same rows and columns (and kind_class,
-- cost_pico, model_name): the kept rows of the loops not changed since the
-- mark (the current version looked up for the loops chain_flags holds only,
-- by primary key), the 0019 logic restricted by primary key to the others;
-- there the 'ok' copies are the changed loops' 'ok' rows (small columns,
-- after a PREWHERE on the loop), not the offsets of their flagged rows: one
-- read of the changed loops less, and before the first mark (every loop
-- changed) a GROUP BY of every key, as FINAL's merge. Exact at any
-- instant nothing is being stored; while rows land, each IN set is built at
-- its own moment (as 0019's two reads are), so a loop whose first row since
-- the mark lands during one read may be read wrong by that read only.
CREATE VIEW IF NOT EXISTS chain_violations_now AS
SELECT loop_id, seq, verdict, detail, kind, time, time_text, carried_hash, expected_hash, payload, evidence,
       kafka_topic, kafka_partition, kafka_offset, ingested_at, kind_class, cost_pico, model_name
FROM chain_flags
WHERE (loop_id, version) IN
      (SELECT loop_id, max(version) FROM chain_flag_loops WHERE loop_id IN (SELECT loop_id FROM chain_flags) GROUP BY loop_id)
  AND loop_id NOT IN (SELECT loop_id FROM chain_loops_changed)
UNION ALL
SELECT loop_id, seq, chosen_verdict AS verdict, chosen_detail AS detail, chosen_kind AS kind, chosen_time AS time,
       chosen_time_text AS time_text, chosen_hash AS carried_hash, chosen_computed AS expected_hash,
       chosen_payload AS payload, chosen_evidence AS evidence,
       kafka_topic, kafka_partition, kafka_offset, chosen_ingested AS ingested_at,
       chosen_class AS kind_class, chosen_cost AS cost_pico, chosen_model AS model_name
FROM
(
    SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset,
           argMax(verdict, stored_order) AS chosen_verdict, argMax(detail, stored_order) AS chosen_detail,
           argMax(kind, stored_order) AS chosen_kind, argMax(time, stored_order) AS chosen_time,
           argMax(time_text, stored_order) AS chosen_time_text, argMax(hash, stored_order) AS chosen_hash,
           argMax(computed_hash, stored_order) AS chosen_computed, argMax(payload, stored_order) AS chosen_payload,
           argMax(evidence, stored_order) AS chosen_evidence, argMax(ingested_at, stored_order) AS chosen_ingested,
           argMax(kind_class, stored_order) AS chosen_class, argMax(cost_pico, stored_order) AS chosen_cost,
           argMax(model_name, stored_order) AS chosen_model
    FROM
    (
        SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset, verdict, detail, kind, time, time_text,
               hash, computed_hash, payload, evidence, ingested_at, kind_class, cost_pico, model_name,
               (splitByChar('_', _part)[1], toUInt64(splitByChar('_', _part)[2])) AS stored_order
        FROM envelopes
        PREWHERE verdict != 'ok' AND loop_id IN (SELECT loop_id FROM chain_loops_changed)
        UNION ALL
        SELECT loop_id, seq, kafka_topic, kafka_partition, kafka_offset, verdict, '' AS detail, '' AS kind,
               toDateTime(0, 'UTC') AS time, '' AS time_text, '' AS hash, '' AS computed_hash, '' AS payload,
               '' AS evidence, toDateTime(0, 'UTC') AS ingested_at, '' AS kind_class, toInt64(0) AS cost_pico,
               '' AS model_name,
               (splitByChar('_', _part)[1], toUInt64(splitByChar('_', _part)[2])) AS stored_order
        FROM envelopes
        PREWHERE loop_id IN (SELECT loop_id FROM chain_loops_changed)
        WHERE verdict = 'ok'
    ) AS copies
    GROUP BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset
) AS kept
WHERE chosen_verdict != 'ok';

-- Per loop, its keys (distinct records stored, as FINAL keeps one row per
-- key): kept for the loops not changed since the mark, counted by primary key
-- for the others. `report`'s 'ok' counts are these less the flags.
CREATE VIEW IF NOT EXISTS chain_loop_keys_now AS
SELECT loop_id, current_keys AS keys
FROM chain_flag_current
WHERE loop_id NOT IN (SELECT loop_id FROM chain_loops_changed)
UNION ALL
SELECT loop_id, uniqExact(seq, kafka_topic, kafka_partition, kafka_offset) AS keys
FROM envelopes
WHERE loop_id IN (SELECT loop_id FROM chain_loops_changed)
GROUP BY loop_id;

-- Per forked loop, the last seq its fork replays: loop_forks' rule (0009)
-- without FINAL (its ForkedFrom rows found by a PREWHERE on the kind, their
-- copies alike), as the page's chain cards and unverified_spend_now read it.
CREATE VIEW IF NOT EXISTS loop_replays AS
SELECT loop_id, max(fork_at_seq) AS replayed_to
FROM envelopes
PREWHERE kind_class = 'ForkedFrom'
WHERE verdict NOT IN ('malformed', 'fork')
GROUP BY loop_id;

-- unverified_spend (0017) from the kept flags: a ModelCalled whose own link
-- did not verify (runtime_spend's `verified`: not ok, gap or time_regression;
-- malformed rows are not spend) is a flagged row, so its rows are among
-- chain_violations_now's; a fork's replays aside (seq up to the loop's
-- replayed_to: loop_replays). Same columns, rows and exact text.
CREATE VIEW IF NOT EXISTS unverified_spend_now AS
WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT loop_id, verdict, calls,
       if(abs(cost_total) < e18, toString(cost_total - intDiv(cost_total, e18) * e18),
          concat(toString(intDiv(cost_total, e18)), substring(toString(abs(cost_total - intDiv(cost_total, e18) * e18) + e18), 2))) AS cost_pico_usd,
       first_time,
       last_time
FROM
(
    SELECT loop_id, flag_verdict AS verdict, count() AS calls,
           sum(toDecimal128(flag_cost, 0)) AS cost_total,
           min(flag_time) AS first_time,
           max(flag_time) AS last_time
    FROM
    (
        SELECT loop_id, seq, verdict AS flag_verdict, cost_pico AS flag_cost, time AS flag_time
        FROM chain_violations_now
        WHERE kind_class = 'ModelCalled' AND verdict NOT IN ('ok', 'gap', 'time_regression', 'malformed')
    ) AS flagged
    ANY LEFT JOIN (SELECT loop_id, replayed_to FROM loop_replays) AS forks USING loop_id
    WHERE seq > replayed_to
    GROUP BY loop_id, flag_verdict
) AS sums;
