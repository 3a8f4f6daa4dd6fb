/**
 * Per-loop summaries (migration 0020, docs/spend.md "How `loops` reads"):
 * each runtime loop's row as runtime_loop_rows.sql computes it and the
 * children it spawned, kept by the rollup sweep so that `loops` reads one row
 * per loop instead of every loop's envelopes. A loop's row and children
 * depend on its own envelopes only, so a loop needs recomputing only when a
 * row of its own is ingested; the sweep step recomputes every loop with a row
 * ingested since the last summary mark (less AGENTLEDGER_ROLLUP_LATE_MS, the
 * margin the rollups take for inserts seen late), under the sweep's version,
 * then writes its own mark. The highest version of a loop wins: a version is
 * taken after the stamp its step starts from is read, so a higher version
 * read every row a lower one had to.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { loopRow, runtimeLoopRows, runtimeLoopRowsOf, type RuntimeLoopJson, type RuntimeLoopRow } from './loop-reads.js';
import { byBytes, type Int64Json } from '../clickhouse/read-values.js';
import { inListChunks, renderSql } from '../clickhouse/sql.js';
import { queryRows, querySql } from './queries.js';
import type { Claim } from './claim.js';
import type { RollupDeps } from './deps.js';
import { everyLoopSql } from './statements.js';

/** loop_ids appears twice in loop_children_of.sql, once in loop_summaries_of.sql; max_query_size is 262,144 bytes. */
const LOOP_LIST_BYTES = 60_000;
/** Rows per insert into loop_summaries. */
const INSERT_ROWS = 20_000;


/** Runs a per-loop query (`loop_id IN {loop_ids}`) for these loops, a chunk at a time, or its every-loop form. */
async function perLoop<T>(ch: ClickHouseClient, name: string, loops: readonly string[] | 'all'): Promise<T[]> {
  if (loops === 'all') return ch.query({ query: renderSql(everyLoopSql(name), {}), format: 'JSONEachRow' }).then((r) => r.json<T>());
  const out: T[] = [];
  for (const chunk of inListChunks([...new Set(loops)].sort(byBytes), LOOP_LIST_BYTES)) out.push(...(await queryRows<T>(ch, name, { loop_ids: chunk })));
  return out;
}

/** The children each of these loops (or every loop) spawned, as the view loop_spawns links them (loop_children_of.sql). */
export async function loopChildren(ch: ClickHouseClient, loops: readonly string[] | 'all'): Promise<Map<string, string[]>> {
  const rows = await perLoop<{ loop_id: string; children: string[] }>(ch, 'loop_children_of', loops);
  return new Map(rows.map((r) => [r.loop_id, [...r.children].sort(byBytes)]));
}

/** A loop_summaries row: runtime_loop_rows.sql's columns and the children. */
interface SummaryJson extends RuntimeLoopJson {
  children: string[];
}

/** A loop's stored summary: its row as runtimeLoopRows() gives it, and the children it spawned. */
export interface StoredSummary {
  readonly row: RuntimeLoopRow;
  readonly children: readonly string[];
}

/**
 * The summaries loop_summaries holds (highest version, loops with a row in
 * runtime_loops) for these loops or every loop, by loop id. Exact for a loop
 * only while it has no row ingested since the summary mark less the margin.
 */
export async function storedSummaries(ch: ClickHouseClient, loops: readonly string[] | 'all'): Promise<StoredSummary[]> {
  const rows = await perLoop<SummaryJson>(ch, 'loop_summaries_of', loops);
  // Chunks of sorted ids, each answered in id order: concatenated, still in id order.
  return rows.map((r) => ({
    row: loopRow(r),
    children: r.children,
  }));
}

/** One loop_summaries row under `version`; `row` undefined: the loop has no row in runtime_loops now. */
function summaryValues(loopId: string, row: RuntimeLoopRow | undefined, children: readonly string[], version: bigint): Record<string, string | number | readonly string[]> {
  const v = version.toString();
  if (row === undefined) return { loop_id: loopId, version: v, present: 0, children: [] };
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
export async function loopsStoredSinceMark(ch: ClickHouseClient, mark: string, lateMs: number): Promise<string[] | 'all'> {
  const [m] = await queryRows<{ seen_through: Int64Json; marks: Int64Json }>(ch, mark);
  if (Number(m?.marks ?? 0) === 0) return 'all';
  const since = Math.max(0, Number(m?.seen_through ?? 0) - Math.ceil(lateMs / 1000));
  return (await queryRows<{ loop_id: string }>(ch, 'loops_stored_since', { since })).map((r) => r.loop_id);
}

/** What a sweep's summary step did: loops recomputed ('all' when it read every loop). */
export interface SummaryStep {
  readonly loops: number;
  readonly all: boolean;
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
export async function refreshLoopSummaries(
  deps: RollupDeps,
  claim: Claim,
  lateMs: number,
  storedThrough: number,
  loops?: 'all',
): Promise<SummaryStep> {
  const { ch } = deps;
  const changed = loops ?? (await loopsStoredSinceMark(ch, 'loop_summary_mark', lateMs));
  const wide = changed === 'all' || changed.length > deps.scanLoops;
  const rows = wide ? await runtimeLoopRows(ch) : await runtimeLoopRowsOf(ch, changed);
  const children = await loopChildren(ch, wide ? 'all' : changed);
  const byId = new Map(rows.map((r) => [r.loopId, r]));
  // Every loop recomputed, and, reading every loop, every loop summarized
  // before: one that lost its row (present 0) must not keep an old one.
  const ids = new Set(changed === 'all' ? byId.keys() : changed);
  if (changed === 'all') for (const s of await storedSummaries(ch, 'all')) ids.add(s.row.loopId);
  const values = [...ids].map((id) => summaryValues(id, byId.get(id), children.get(id) ?? [], claim.version));
  for (let i = 0; i < values.length; i += INSERT_ROWS) {
    await ch.insert({ table: 'loop_summaries', values: values.slice(i, i + INSERT_ROWS), format: 'JSONEachRow', ...(deps.signal ? { abort_signal: deps.signal } : {}) });
  }
  // Overtaken or told to stop: no mark, the next step redoes these loops.
  await claim.check();
  await ch.command({ query: renderSql(querySql('loop_summary_mark_done'), { version: claim.version, seen_through: storedThrough }) });
  return { loops: ids.size, all: changed === 'all' };
}
