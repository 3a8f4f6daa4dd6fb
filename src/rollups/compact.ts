/**
 * What the rollups drop with the migrator's rights, now and then rather than
 * per sweep (18.16 runs mutations one after another and has no TTL): the
 * rollup rows and commits no reader takes any more, and the per-sweep
 * records older than a day. Without those rights nothing is dropped and the
 * rollups stay exact; they only keep their old versions.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { Logger } from '../observability/logger.js';
import { failureMessage } from '../errors/errors.js';
import { mutationSql, type ClusterTarget } from '../clickhouse/cluster.js';
import { queryRows, querySql } from './queries.js';
import { renderSql, type SqlValue } from '../clickhouse/sql.js';
import { ROLLUP_TABLES } from './recompute.js';

/**
 * The migrator's client, which may run the compaction's mutations, and where
 * they go: on a cluster each to its table's local halves, ON CLUSTER
 * (mutationSql).
 */
export interface Admin {
  readonly ch: ClickHouseClient;
  readonly cluster: ClusterTarget | undefined;
}

/** Runs the mutation `name` (a query file) as `admin`. */
export async function mutate(admin: Admin, name: string, params: Record<string, SqlValue>): Promise<void> {
  await admin.ch.command({ query: mutationSql(renderSql(querySql(name), params), admin.cluster) });
}

/**
 * The admin if it may drop obsolete versions (a mutation that matches
 * nothing is tried), else undefined, said once: the rollups stay exact
 * without it, they only keep their old versions.
 */
export async function compactor(ch: ClickHouseClient, cluster: ClusterTarget | undefined, log: Logger): Promise<Admin | undefined> {
  const admin = { ch, cluster };
  try {
    await mutate(admin, 'rollup_compact_rows', { rollup_table: ROLLUP_TABLES[0], hours: [0], tops: [0] });
    return admin;
  } catch (err) {
    log.warn('old rollup versions are kept: the migrator user cannot drop them (set AGENTLEDGER_CLICKHOUSE_MIGRATOR_*)', {
      error: failureMessage(err),
    });
    return undefined;
  }
}

const rows = queryRows;

/**
 * Drops every rollup row and commit below its hour's highest committed
 * version, in every rollup table: never read again. One mutation per table
 * per 2000 hours, so run it now and then (the worker: every AGENTLEDGER_ROLLUP_COMPACT_MS), not per sweep:
 * 18.16 runs mutations one after another. Returns the hours compacted.
 */
export async function compact(ch: ClickHouseClient, admin: Admin): Promise<number> {
  const obsolete = await rows<{ h: number | string; top: number | string }>(ch, 'rollup_obsolete');
  for (let i = 0; i < obsolete.length; i += 2000) {
    const chunk = obsolete.slice(i, i + 2000);
    const params = { hours: chunk.map((r) => Number(r.h)), tops: chunk.map((r) => BigInt(r.top)) };
    for (const table of [...ROLLUP_TABLES, 'rollup_commits']) await mutate(admin, 'rollup_compact_rows', { ...params, rollup_table: table });
  }
  return obsolete.length;
}

/** How long the per-sweep records (rollup_sweeps, rollup_claims, alert_sweeps) are kept: a day of history for operators. */
export const SWEEP_RECORDS_KEPT_MS = 24 * 3600 * 1000;

/**
 * Drops the per-sweep records older than SWEEP_RECORDS_KEPT_MS before `now`
 * (ms) from rollup_sweeps, rollup_claims and alert_sweeps, each of which
 * gains a row per sweep (the alerts' with the rollups', as the one place
 * the worker holds the migrator's rights), keeping the rows recovery reads:
 * the highest sweep version and swept stamp, the highest claim, the newest
 * alert sweep. 18.16 has no TTL: mutations, one per table and only when it
 * has rows to drop, run with the compaction. Returns the rows dropped.
 */
export async function pruneSweepRecords(ch: ClickHouseClient, admin: Admin, now: number): Promise<{ sweeps: number; claims: number; alertSweeps: number }> {
  const before = Math.floor((now - SWEEP_RECORDS_KEPT_MS) / 1000);
  const [t] = await rows<Record<string, string | number>>(ch, 'sweep_records_tops', { before });
  const n = (k: string): number => Number(t?.[k] ?? 0);
  const big = (k: string): bigint => BigInt(t?.[k] ?? 0);
  const dropped = { sweeps: n('old_sweeps'), claims: n('old_claims'), alertSweeps: n('old_alert_sweeps') };
  if (dropped.sweeps > 0) await mutate(admin, 'rollup_sweeps_prune', { before, top_version: big('sweep_version'), top_through: n('sweep_through') });
  if (dropped.claims > 0) await mutate(admin, 'rollup_claims_prune', { before, top_version: big('claim_version') });
  if (dropped.alertSweeps > 0) await mutate(admin, 'alert_sweeps_prune', { before, top_through: n('alert_through') });
  return dropped;
}
