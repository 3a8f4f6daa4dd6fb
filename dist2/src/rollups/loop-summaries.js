import { loopRow, runtimeLoopRows, runtimeLoopRowsOf } from '../sink/clickhouse/loop-reads.js';
import { byBytes } from '../sink/clickhouse/read-values.js';
import { inListChunks, queryRows, querySql, renderSql } from '../sink/clickhouse/sql.js';
import { everyLoopSql } from './rollups.js';
/** loop_ids appears twice in loop_children_of.sql, once in loop_summaries_of.sql; max_query_size is 262,144 bytes. */
const LOOP_LIST_BYTES = 60_000;
/** Rows per insert into loop_summaries. */
const INSERT_ROWS = 20_000;
/** Runs a per-loop query (`loop_id IN {loop_ids}`) for these loops, a chunk at a time, or its every-loop form. */
async function perLoop(ch, name, loops) {
    if (loops === 'all')
        return ch.query({ query: renderSql(everyLoopSql(name), {}), format: 'JSONEachRow' }).then((r) => r.json());
    const out = [];
    for (const chunk of inListChunks([...new Set(loops)].sort(byBytes), LOOP_LIST_BYTES))
        out.push(...(await queryRows(ch, name, { loop_ids: chunk })));
    return out;
}
/** The children each of these loops (or every loop) spawned, as the view loop_spawns links them (loop_children_of.sql). */
export async function loopChildren(ch, loops) {
    const rows = await perLoop(ch, 'loop_children_of', loops);
    return new Map(rows.map((r) => [r.loop_id, [...r.children].sort(byBytes)]));
}
/**
 * The summaries loop_summaries holds (highest version, loops with a row in
 * runtime_loops) for these loops or every loop, by loop id. Exact for a loop
 * only while it has no row ingested since the summary mark less the margin.
 */
export async function storedSummaries(ch, loops) {
    const rows = await perLoop(ch, 'loop_summaries_of', loops);
    // Chunks of sorted ids, each answered in id order: concatenated, still in id order.
    return rows.map((r) => ({
        row: loopRow(r),
        children: r.children,
    }));
}
/** One loop_summaries row under `version`; `row` undefined: the loop has no row in runtime_loops now. */
function summaryValues(loopId, row, children, version) {
    const v = version.toString();
    if (row === undefined)
        return { loop_id: loopId, version: v, present: 0, children: [] };
    return {
        loop_id: loopId,
        version: v,
        present: 1,
        name: row.name,
        started_parent: row.startedParent,
        started_depth: (row.startedDepth ?? 0n).toString(),
        started: row.startedDepth === undefined ? 0 : 1,
        finished_outcome: row.outcome,
        finished_error: row.error,
        iterations: row.iterations,
        subagents_spawned: row.subagentsSpawned,
        subagents_completed: row.subagentsCompleted,
        subagents_failed: row.subagentsFailed,
        forked_from: row.forkedFrom,
        forked_at_seq: row.forkedAtSeq.toString(),
        first_time_text: row.firstTime,
        last_time_text: row.lastTime,
        model_calls: row.modelCalls,
        input_tokens_sum: row.inputTokens.toString(),
        output_tokens_sum: row.outputTokens.toString(),
        model_cost: row.modelCostPico.toString(),
        budget_cost: row.budgetPico.toString(),
        unverified_model_cost: row.unverifiedModelCostPico.toString(),
        children,
    };
}
/**
 * The loops a per-loop step recomputes: those with a row ingested at or
 * after its last mark (`mark`: a query answering seen_through and marks, as
 * loop_summary_mark.sql) less `lateMs`, or 'all' when no mark is stored.
 */
export async function loopsStoredSinceMark(ch, mark, lateMs) {
    const [m] = await queryRows(ch, mark);
    if (Number(m?.marks ?? 0) === 0)
        return 'all';
    const since = Math.max(0, Number(m?.seen_through ?? 0) - Math.ceil(lateMs / 1000));
    return (await queryRows(ch, 'loops_stored_since', { since })).map((r) => r.loop_id);
}
/**
 * The sweep's summary step: recomputes, under `claim.version`, every loop
 * with a row ingested since the last summary mark less `lateMs` (every loop
 * when no step has finished), then records the mark `storedThrough` (the
 * newest ingest stamp, read before the version was taken). A loop that no
 * longer has a row in runtime_loops gets a row saying so (present 0). A step
 * overtaken or stopped before its mark leaves rows the next step writes again
 * under a higher version. `loops` 'all': every loop, whatever the mark (a rebuild:
 * rows stored later than their stamp by more than the margin were missed).
 */
export async function refreshLoopSummaries(deps, claim, lateMs, storedThrough, loops) {
    const { ch } = deps;
    const changed = loops ?? (await loopsStoredSinceMark(ch, 'loop_summary_mark', lateMs));
    const wide = changed === 'all' || changed.length > deps.scanLoops;
    const rows = wide ? await runtimeLoopRows(ch) : await runtimeLoopRowsOf(ch, changed);
    const children = await loopChildren(ch, wide ? 'all' : changed);
    const byId = new Map(rows.map((r) => [r.loopId, r]));
    // Every loop recomputed, and, reading every loop, every loop summarized
    // before: one that lost its row (present 0) must not keep an old one.
    const ids = new Set(changed === 'all' ? byId.keys() : changed);
    if (changed === 'all')
        for (const s of await storedSummaries(ch, 'all'))
            ids.add(s.row.loopId);
    const values = [...ids].map((id) => summaryValues(id, byId.get(id), children.get(id) ?? [], claim.version));
    for (let i = 0; i < values.length; i += INSERT_ROWS) {
        await ch.insert({ table: 'loop_summaries', values: values.slice(i, i + INSERT_ROWS), format: 'JSONEachRow', ...(deps.signal ? { abort_signal: deps.signal } : {}) });
    }
    // Overtaken or told to stop: no mark, the next step redoes these loops.
    await claim.check();
    await ch.command({ query: renderSql(querySql('loop_summary_mark_done'), { version: claim.version, seen_through: storedThrough }) });
    return { loops: ids.size, all: changed === 'all' };
}
//# sourceMappingURL=loop-summaries.js.map