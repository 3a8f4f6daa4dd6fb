/**
 * The chain violations kept by the rollup sweep (migration 0021,
 * docs/dashboards.md "How the chain reads read"), as loop_summaries keeps
 * each loop's row (src/rollups/loop-summaries.ts): per loop, under the
 * sweep's version, the rows chain_violations (0019) holds for it and its
 * number of keys, so readers (the *_now views) read those for the loops not
 * stored since the mark and the 0019 logic, by primary key, for the others.
 *
 * A loop's violations depend on its own envelopes only, so the step
 * recomputes every loop with a row ingested since the last chain-flag mark
 * less the margin (every loop when none is stored, and at a rebuild): its
 * flagged rows written under the version, then its commit row
 * (chain_flag_loops), then the mark. Readers take per loop only the highest
 * committed version, so a loop whose flags are gone drops them, and a
 * recompute that read earlier data (a lower version) never wins.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { inListChunks, renderSql, type SqlValue } from '../clickhouse/sql.js';
import { queryRows, querySql } from './queries.js';
import type { Claim } from './claim.js';
import { mutate, type Admin } from './compact.js';
import type { RollupDeps } from './deps.js';
import { loopsStoredSinceMark } from './loop-summaries.js';
import { everyLoopSql } from './statements.js';

/** loop_ids appears three times in chain_flags_insert.sql; max_query_size is 262,144 bytes. */
const LOOP_LIST_BYTES = 60_000;

async function exec(ch: ClickHouseClient, sql: string, params: Record<string, SqlValue>, signal?: AbortSignal): Promise<void> {
  await ch.command({ query: renderSql(sql, params), ...(signal ? { abort_signal: signal } : {}) });
}

/**
 * Recomputes the kept chain flags of these loops, or of every loop, under
 * `claim.version`: per chunk of loops (the primary key finds them) or, for
 * many, in one read of the whole table (then the loops with no envelope any
 * more are committed with none). A chunk's commit rows are written only
 * after its flags, and only while the version is still held: a recompute
 * overtaken part-way leaves rows no reader takes.
 */
export async function recomputeChainFlags(deps: RollupDeps, loops: readonly string[] | 'all', claim: Claim): Promise<void> {
  const { ch, signal } = deps;
  const { version } = claim;
  if (loops === 'all' || loops.length > deps.scanLoops) {
    await exec(ch, everyLoopSql('chain_flags_insert'), { version }, signal);
    await claim.check();
    await exec(ch, everyLoopSql('chain_flags_commit'), { version }, signal);
    await exec(ch, querySql('chain_flags_commit_gone'), { version }, signal);
    return;
  }
  for (const chunk of inListChunks(loops, LOOP_LIST_BYTES)) {
    await exec(ch, querySql('chain_flags_insert'), { loop_ids: chunk, version }, signal);
    await claim.check();
    await exec(ch, querySql('chain_flags_commit'), { loop_ids: chunk, version }, signal);
  }
}

/** What a chain-flag step did: loops recomputed ('all' when it read every loop). */
export interface ChainFlagStep {
  readonly loops: number | 'all';
}

/**
 * The chain-flag step of a sweep or a rebuild (`loops` 'all'): every loop
 * with a row ingested since the last chain-flag mark less `lateMs` (every
 * loop when none is stored) recomputed under `claim.version`, then the mark
 * `storedThrough` (the newest ingest stamp, read before the version was
 * taken) with the margin. Overtaken or stopped before its mark: the next
 * step redoes these loops under a higher version.
 */
export async function refreshChainFlags(deps: RollupDeps, claim: Claim, lateMs: number, storedThrough: number, loops?: 'all'): Promise<ChainFlagStep> {
  const { ch } = deps;
  const changed = loops ?? (await loopsStoredSinceMark(ch, 'chain_flag_mark', lateMs));
  if (changed === 'all' || changed.length > 0) await recomputeChainFlags(deps, changed, claim);
  await claim.check();
  await exec(ch, querySql('chain_flag_mark_done'), { version: claim.version, seen_through: storedThrough, late_s: Math.ceil(lateMs / 1000) });
  return { loops: changed === 'all' ? 'all' : changed.length };
}

/**
 * Drops the chain flags below each loop's committed version: chain_flags is
 * a MergeTree, every recompute of a loop writes its flags again (a running
 * loop with a violation, once per sweep), and readers take only the
 * committed version's. Rows of a recompute not committed yet (above it) and
 * of loops never committed stay. One mutation per chunk of loops, run with
 * the rollup compaction (`admin`: the migrator's rights). Returns the loops
 * pruned.
 */
export async function pruneChainFlags(ch: ClickHouseClient, admin: Admin): Promise<number> {
  const obsolete = await queryRows<{ loop_id: string; top: string | number }>(ch, 'chain_flags_obsolete');
  const tops = new Map(obsolete.map((r) => [r.loop_id, BigInt(r.top)]));
  for (const chunk of inListChunks(obsolete.map((r) => r.loop_id))) {
    await mutate(admin, 'chain_flags_prune', { loop_ids: chunk, tops: chunk.map((l) => tops.get(l) ?? 0n) });
  }
  return obsolete.length;
}
