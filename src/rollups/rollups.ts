/**
 * Hour rollups of counted spend and events (migrations 0013, 0015, docs/spend.md
 * "Rollups"): whole hours recomputed from deduplicated rows, each recompute
 * under a new version and committed per hour once its rows are written; and
 * each touched loop's reconciliation ledgers, under the same version. Two
 * entry points share every step:
 * - sweep(): the hours touched since the last finished sweep (new spend rows,
 *   a late ForkedFrom, a loop whose root or name changed), run by
 *   `agentledger worker` on a schedule and by `agentledger rollups sweep`;
 * - rebuild(): every hour of a range, by `agentledger rollups rebuild`.
 * Both are idempotent: run twice, killed at any step, run concurrently, the
 * committed rollups end equal to the live views (spend_by_hour).
 * The steps live beside this file: the version (claim.ts), the loop tree
 * (loop-roots.ts), the hours and ledgers (recompute.ts), the loop summaries
 * (loop-summaries.ts), the chain flags (chain.ts); what no reader takes any
 * more is dropped by compact.ts.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { Lease } from '../jobs/lease.js';
import { ONE_SERVER, type StateSql } from '../clickhouse/replicas.js';
import { queryRows } from './queries.js';
import { refreshChainFlags } from './chain.js';
import { claimVersion } from './claim.js';
import type { RollupDeps } from './deps.js';
import { refreshRoots } from './loop-roots.js';
import { refreshLoopSummaries } from './loop-summaries.js';
import { HOURS_PER_STEP, hoursOf, hoursOfLoops, recompute, recomputeLedgers } from './recompute.js';
import { exec } from './statements.js';

export interface RollupResult {
  readonly version: bigint;
  /** Hours recomputed (committed under `version`). */
  readonly hours: number;
  /** Loops whose root or name changed (their hours are among `hours`). */
  readonly treeChanges: number;
  /** True when another sweep held the sweep lease: this one did nothing. */
  readonly skipped?: boolean;
}

const rows = queryRows;

/** How long a sweep's lease lasts without renewal (renewed every third of it while the sweep runs). */
export const SWEEP_LEASE_MS = 10_000;
const sweepLeaseKey = (prefix: string): string => `${prefix}:rollups:sweep-lease`;

interface Watermarks {
  /** The newest ingest stamp the last finished sweep saw (Unix seconds, 0: none). */
  readonly sweptThrough: number;
  /** The last finished sweep's version (0: none). */
  readonly sweptVersion: bigint;
  /** The newest ingest stamp stored now. */
  readonly storedThrough: number;
  readonly topVersion: bigint;
}

/** Reads the watermarks: what a worker checks at start (the tables exist, the user may read them). */
export async function watermarks(ch: ClickHouseClient, state: StateSql = ONE_SERVER): Promise<Watermarks> {
  const [w] = await rows<{ swept_through: number | string; swept_version: string | number; stored_through: number | string; top_version: string | number }>(
    ch,
    'rollup_watermarks',
    {},
    state,
  );
  return { sweptThrough: Number(w?.swept_through ?? 0), sweptVersion: BigInt(w?.swept_version ?? 0), storedThrough: Number(w?.stored_through ?? 0), topVersion: BigInt(w?.top_version ?? 0) };
}

/**
 * One sweep: the hours touched by rows ingested since the last finished sweep
 * (less `lateMs`, for inserts seen late and clocks that lag), recomputed.
 * The first sweep of a database covers everything stored.
 */
export async function sweep(deps: RollupDeps, lateMs: number): Promise<RollupResult> {
  // One sweep at a time across every worker and CLI: a BullMQ job handed
  // on while its first worker still runs it finds the lease taken.
  const lease = await Lease.acquire(deps.redis, sweepLeaseKey(deps.prefix), SWEEP_LEASE_MS);
  if (lease === undefined) return { version: 0n, hours: 0, treeChanges: 0, skipped: true };
  try {
    return await sweepLeased(deps, lateMs, lease);
  } finally {
    await lease.release();
  }
}

async function sweepLeased(deps: RollupDeps, lateMs: number, lease: Lease): Promise<RollupResult> {
  const { ch } = deps;
  const marks = await watermarks(ch, deps.state);
  const claim = await claimVersion(deps, marks.topVersion, lease);
  const { version } = claim;
  const since = marks.sweptThrough === 0 ? 0 : Math.max(0, marks.sweptThrough - Math.ceil(lateMs / 1000));
  const hours = new Set(hoursOf(await rows<{ h: number }>(ch, 'rollup_hours_ingested', { since })));
  const [tree] = await rows<{ n: string | number }>(ch, 'rollup_tree_changes', { since });
  const changed = Number(tree?.n ?? 0) > 0 ? await refreshRoots(deps, version) : [];
  // The fold can take seconds on a big tree: a stop or a lost lease is taken here too.
  await claim.check();
  const forks = (await rows<{ loop_id: string }>(ch, 'rollup_fork_loops', { since })).map((r) => r.loop_id);
  // Moved by a sweep that died before recomputing their hours (loop_roots already says so, so the fold sees no change).
  const unswept = (await rows<{ loop_id: string }>(ch, 'rollup_roots_unswept', { since_version: marks.sweptVersion })).map((r) => r.loop_id);
  for (const h of await hoursOfLoops(ch, [...new Set([...changed, ...forks, ...unswept])])) hours.add(h);
  await recompute(deps, [...hours], claim, HOURS_PER_STEP);
  await recomputeLedgers(deps, (await rows<{ loop_id: string }>(ch, 'rollup_ledger_loops', { since })).map((r) => r.loop_id), version);
  await refreshLoopSummaries(deps, claim, lateMs, marks.storedThrough);
  await refreshChainFlags(deps, claim, lateMs, marks.storedThrough);
  await claim.check();
  await exec(ch, 'rollup_sweep_done', { version, seen_through: marks.storedThrough, hours: hours.size });
  return { version, hours: hours.size, treeChanges: changed.length };
}

/**
 * Every hour in [from, until) (Unix seconds) recomputed from the raw tables,
 * after the loop tree is refolded whole; a loop whose root or name was wrong
 * has its hours recomputed too, inside the range or not. A rebuild of every
 * hour (`everything`) is a sweep of all stored rows and is recorded as one,
 * so the next sweep starts from it; a partial range is not.
 */
export async function rebuild(
  deps: RollupDeps,
  range: { readonly from: number; readonly until: number; readonly everything: boolean; readonly lateMs: number },
  progress?: (done: number, total: number) => void,
): Promise<RollupResult> {
  const { from, until } = range;
  const { ch } = deps;
  const marks = await watermarks(ch, deps.state);
  // No lease: a rebuild may run for long beside the sweeps, under its own version.
  const claim = await claimVersion(deps, marks.topVersion, undefined);
  const { version } = claim;
  const changed = await refreshRoots(deps, version);
  const hours = new Set(hoursOf(await rows<{ h: number }>(ch, 'rollup_hours_between', { from, until })));
  for (const h of await hoursOfLoops(ch, changed)) hours.add(h);
  // A week per step: one read of the table per week when loops are many.
  await recompute(deps, [...hours], claim, 7 * HOURS_PER_STEP, progress);
  // Ledgers and loop summaries are per loop, not per hour: every loop's, whatever the range.
  await recomputeLedgers(deps, 'all', version);
  // Chain flags too (0021), so a dropped partition or a row stored late is
  // seen; each recorded as its mark, with the margin readers take
  // (AGENTLEDGER_ROLLUP_LATE_MS).
  await refreshLoopSummaries(deps, claim, range.lateMs, marks.storedThrough, 'all');
  await refreshChainFlags(deps, claim, range.lateMs, marks.storedThrough, 'all');
  await claim.check();
  if (range.everything) await exec(ch, 'rollup_sweep_done', { version, seen_through: marks.storedThrough, hours: hours.size });
  return { version, hours: hours.size, treeChanges: changed.length };
}
