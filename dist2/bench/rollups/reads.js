import { median } from '../support.js';
import { END, RUNS, TARGET_MS } from './options.js';
import { loopId } from './data.js';
/** Each dashboard view as a dashboard reads it (docs/spend.md, "Views for dashboards"): the last day or week where the view has a time. */
export const VIEW_QUERIES = [
    {
        view: 'spend_calls',
        sql: `SELECT time, source, provider, model, input_tokens, output_tokens, cost_pico FROM spend_calls WHERE time >= ${END} - 86400 AND time < ${END} ORDER BY time DESC LIMIT 100`,
    },
    {
        view: 'spend_by_hour',
        sql: `SELECT hour, source, provider, model, calls, cost_pico_usd FROM spend_by_hour WHERE hour >= ${END} - 86400 AND hour < ${END} ORDER BY hour, source, provider, model`,
    },
    {
        view: 'spend_by_day',
        sql: `SELECT day, source, provider, model, calls, cost_pico_usd FROM spend_by_day WHERE day >= toDate(${END}) - 7 AND day < toDate(${END}) ORDER BY day, source, provider, model`,
    },
    { view: 'spend_by_loop_name', sql: 'SELECT name, loops, calls, cost_pico_usd FROM spend_by_loop_name ORDER BY toDecimal128(cost_pico_usd, 0) DESC LIMIT 10' },
    { view: 'subagent_outcomes', sql: "SELECT definition, outcome, subagents FROM subagent_outcomes WHERE outcome != 'Completed' ORDER BY subagents DESC" },
    { view: 'tool_error_rates', sql: 'SELECT tool, calls, errors, round(error_share * 100, 1) AS error_pct FROM tool_error_rates ORDER BY error_share DESC' },
    {
        view: 'convergence_warnings',
        sql: `SELECT day, detector, warnings, loops FROM convergence_warnings WHERE day >= toDate(${END}) - 7 AND day < toDate(${END}) ORDER BY day, detector`,
    },
    { view: 'unverified_spend', sql: 'SELECT loop_id, verdict, calls, cost_pico_usd FROM unverified_spend ORDER BY loop_id, verdict LIMIT 100' },
    {
        view: 'loop_reconciliation',
        sql: 'SELECT loop_id, model_minus_model_budget_pico, budget_minus_total_spend_pico, budget_minus_child_spend_pico FROM loop_reconciliation WHERE disagrees ORDER BY loop_id LIMIT 100',
    },
    {
        view: 'runtime_loops',
        sql: `SELECT loop_id, name, started_parent, finished_outcome, first_time, last_time, envelope_count FROM runtime_loops WHERE last_time >= ${END} - 86400 ORDER BY last_time DESC, loop_id LIMIT 100`,
    },
    // A tree's drill-down: the sub-agents one root spawned.
    { view: 'loop_spawns', sql: `SELECT child, spawned_by, spawn_definition FROM loop_spawns WHERE spawned_by = '${loopId(1)}' ORDER BY child` },
];
/**
 * The views of the rollup job's migrations (0013-0015), read after the
 * rebuild: the rollups for the same questions as spend_by_hour, spend_by_day,
 * a top-roots list; the tasks whose ledgers disagree, and one root's tree
 * (both placed by loop_roots, which the job fills). They are looked up after
 * migrating: a view that is missing is left out; one whose columns are not
 * the ones expected here is read whole (LIMIT 100) and marked so.
 */
export const ROLLUP_QUERIES = [
    {
        view: 'spend_rollup_hourly',
        columns: ['hour', 'source', 'provider', 'model', 'calls_sum', 'cost_pico_sum'],
        sql: `SELECT hour, source, provider, model, sum(calls_sum) AS hour_calls, toString(sum(cost_pico_sum)) AS hour_cost_pico
FROM spend_rollup_hourly WHERE hour >= ${END} - 86400 AND hour < ${END} GROUP BY hour, source, provider, model ORDER BY hour, source, provider, model`,
    },
    {
        view: 'spend_rollup_daily',
        columns: ['day', 'source', 'provider', 'model', 'calls', 'cost_pico'],
        sql: `SELECT day, source, provider, model, sum(calls) AS day_calls, toString(sum(cost_pico)) AS day_cost_pico
FROM spend_rollup_daily WHERE day >= toDate(${END}) - 7 AND day < toDate(${END}) GROUP BY day, source, provider, model ORDER BY day, source, provider, model`,
    },
    {
        view: 'top_roots',
        columns: ['source', 'root_loop_id', 'calls', 'cost_pico', 'first_hour', 'last_hour'],
        // Ordered by the Decimal alone: 18.16 sorts (Decimal128, more keys) with LIMIT over 50k rows in ~1.5 s, by the Decimal alone in ~50 ms (docs/spend.md, "Rollups").
        sql: 'SELECT source, root_loop_id, calls, toString(cost_pico) AS root_cost_pico, first_hour, last_hour FROM top_roots ORDER BY cost_pico DESC LIMIT 100',
    },
    // The last day with the open hours live (0015): the rollups, plus a filtered read of envelopes FINAL.
    {
        view: 'spend_hourly_now',
        columns: ['hour', 'source', 'provider', 'model', 'loop_name', 'calls_sum', 'cost_pico_sum'],
        sql: `SELECT hour, source, provider, model, sum(calls_sum) AS hour_calls, toString(sum(cost_pico_sum)) AS hour_cost_pico
FROM spend_hourly_now WHERE hour >= ${END} - 86400 AND hour < ${END} GROUP BY hour, source, provider, model ORDER BY hour, source, provider, model`,
    },
    // Top loop names, and the event questions of 0010 from the rollups (0015).
    {
        view: 'spend_rollup_by_name',
        columns: ['loop_name', 'calls', 'cost_pico'],
        sql: 'SELECT loop_name, calls, toString(cost_pico) AS name_cost_pico FROM spend_rollup_by_name ORDER BY cost_pico DESC LIMIT 10',
    },
    {
        view: 'tool_errors_hourly',
        columns: ['hour', 'tool', 'calls', 'errors'],
        sql: `SELECT tool, sum(calls) AS tool_calls, sum(errors) AS tool_errors, round(sum(errors) / sum(calls) * 100, 1) AS error_pct
FROM tool_errors_hourly WHERE hour >= ${END} - 86400 AND hour < ${END} GROUP BY tool ORDER BY error_pct DESC, tool`,
    },
    {
        view: 'convergence_warnings_daily',
        columns: ['detector', 'day', 'warnings', 'loops'],
        sql: `SELECT day, detector, warnings, loops FROM convergence_warnings_daily WHERE day >= toDate(${END}) - 7 AND day < toDate(${END}) ORDER BY day, detector`,
    },
    {
        view: 'subagent_outcomes_daily',
        columns: ['day', 'definition', 'outcome', 'subagents'],
        sql: `SELECT definition, outcome, sum(subagents) AS n FROM subagent_outcomes_daily WHERE outcome != 'Completed' GROUP BY definition, outcome ORDER BY n DESC, definition, outcome`,
    },
    // The loops and tasks whose ledgers disagree, from the reconciliation rollups (0015).
    {
        view: 'loop_reconciliation_rollup',
        columns: ['loop_id', 'model_minus_model_budget_pico', 'budget_minus_total_spend_pico', 'budget_minus_child_spend_pico', 'disagrees'],
        sql: 'SELECT loop_id, toString(model_minus_model_budget_pico) AS m, toString(budget_minus_total_spend_pico) AS t, toString(budget_minus_child_spend_pico) AS c FROM loop_reconciliation_rollup WHERE disagrees ORDER BY loop_id LIMIT 100',
    },
    {
        view: 'root_reconciliation_rollup',
        columns: ['root_loop_id', 'loops', 'tree_model_cost_pico', 'loops_disagreeing'],
        sql: 'SELECT root_loop_id, loops, toString(tree_model_cost_pico) AS tree_cost, loops_disagreeing FROM root_reconciliation_rollup WHERE loops_disagreeing > 0 ORDER BY root_loop_id LIMIT 100',
    },
    // The tasks whose ledgers disagree somewhere in their tree (0014): through loop_reconciliation, so not a rollup read.
    {
        view: 'root_reconciliation',
        columns: ['root_loop_id', 'loops', 'tree_model_cost_pico', 'loops_disagreeing'],
        sql: 'SELECT root_loop_id, loops, toString(tree_model_cost_pico) AS tree_cost, loops_disagreeing FROM root_reconciliation WHERE loops_disagreeing > 0 ORDER BY root_loop_id LIMIT 100',
    },
    // A task's drill-down: one root's tree with its subtree costs.
    {
        view: 'loop_tree',
        columns: ['loop_id', 'parent_loop_id', 'root_loop_id', 'loop_name', 'depth', 'own_cost_pico', 'subtree_cost_pico'],
        sql: `SELECT loop_id, parent_loop_id, loop_name, depth, toString(own_cost_pico) AS own_cost, toString(subtree_cost_pico) AS subtree_cost FROM loop_tree WHERE root_loop_id = '${loopId(1)}' ORDER BY depth, loop_id`,
    },
];
/**
 * The floor of an exact answer at query time: what any raw `spend` must do at
 * least, whatever its SQL, when it reads the stored envelopes when asked. The
 * table is a ReplacingMergeTree (a redelivered record is a second row until a
 * merge, which may never come), so every ModelCalled row must be read and
 * deduplicated by the sort key before its cost can count; the verdicts, the
 * forks' replays and the grouping come on top. From a scan of one column to
 * the deduplicated cost sum; timed on both engines (step 4, and 6), printed
 * beside the raw spend endpoints.
 */
export const FLOOR_QUERIES = [
    { view: 'floor: scan (ModelCalled rows)', sql: "SELECT count() FROM envelopes WHERE kind_class = 'ModelCalled'" },
    { view: 'floor: uniqExact(key)', sql: "SELECT uniqExact(loop_id, seq, kafka_topic, kafka_partition, kafka_offset) FROM envelopes WHERE kind_class = 'ModelCalled'" },
    {
        view: 'floor: dedup by key (GROUP BY)',
        sql: "SELECT count() FROM (SELECT loop_id, seq FROM envelopes WHERE kind_class = 'ModelCalled' GROUP BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset)",
    },
    {
        view: 'floor: dedup + cost sum',
        sql: "SELECT toString(sum(toDecimal128(c, 0))) FROM (SELECT any(cost_pico) AS c FROM envelopes WHERE kind_class = 'ModelCalled' GROUP BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset)",
    },
];
/** A view read slower than this in its warm-up gets one timed run, not --runs: the verdict is the same and the run stays within its time. */
export const SLOW_WARMUP_MS = 8_000;
/** One warm-up and RUNS timed runs of a read, wall time at the client (the HTTP round trip included, as a dashboard sees it). */
export async function timeRead(ch, sql, settings) {
    const once = async () => {
        const t = performance.now();
        const rows = await ch.query({ query: sql, format: 'JSONEachRow', clickhouse_settings: settings }).then((r) => r.json());
        return { ms: performance.now() - t, rows: rows.length };
    };
    try {
        const warm = await once();
        const runs = warm.ms > SLOW_WARMUP_MS ? 1 : RUNS;
        const ms = [];
        let rows = warm.rows;
        for (let i = 0; i < runs; i++) {
            const r = await once();
            ms.push(r.ms);
            rows = r.rows;
        }
        return { ms, medianMs: median(ms), warmupMs: warm.ms, rows };
    }
    catch (err) {
        return { ms: [], medianMs: NaN, warmupMs: NaN, rows: 0, error: err instanceof Error ? err.message.split('\n')[0].slice(0, 200) : String(err) };
    }
}
export const fmtMs = (t) => (t === undefined ? '-' : t.error !== undefined ? 'error' : `${Math.round(t.medianMs)}${t.ms.length === 1 && RUNS > 1 ? '*' : ''}`);
export const panelVerdict = (t) => (t === undefined ? '' : t.error !== undefined ? 'error' : t.medianMs < TARGET_MS ? '< 1 s' : 'NOT MET');
export const apiVerdict = (t) => (t.missing ? 'missing' : panelVerdict(t));
export const verdict = (t) => (t === undefined || t.error !== undefined ? '' : t.medianMs < TARGET_MS ? 'PASS' : 'over');
//# sourceMappingURL=reads.js.map