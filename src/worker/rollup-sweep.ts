/**
 * The rollups queue's processor: one sweep (src/rollups), and every
 * AGENTLEDGER_ROLLUP_COMPACT_MS the obsolete versions and old sweep records
 * dropped, when the migrator's rights are there.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { SWEEP_SCHEDULER, sweepPayload } from '../jobs/queues.js';
import { pruneChainFlags } from '../rollups/chain.js';
import { compact, pruneSweepRecords, type Admin } from '../rollups/compact.js';
import { sweep } from '../rollups/rollups.js';
import type { StateSql } from '../clickhouse/replicas.js';
import type { JobContext } from './job-context.js';

export interface RollupSweepDeps {
  readonly ch: ClickHouseClient;
  readonly redis: Redis;
  readonly prefix: string;
  readonly scanLoops: number;
  readonly lateMs: number;
  readonly compactMs: number;
  /** A client with the migrator's rights, or undefined (nothing is dropped). */
  readonly admin: Admin | undefined;
  /** How the bookkeeping reads go (RollupDeps.state): every replica on a cluster. */
  readonly state: StateSql;
}

export function rollupSweepProcessor(ctx: JobContext, deps: RollupSweepDeps): (job: Job, token?: string) => Promise<unknown> {
  const { log, signal } = ctx;
  const sweepDeps = { ch: deps.ch, redis: deps.redis, prefix: deps.prefix, log, scanLoops: deps.scanLoops, signal, state: deps.state };
  let compacted = 0;
  return async (job, token) => {
    sweepPayload.parse(job.data);
    const started = Date.now();
    let r;
    try {
      r = await ctx.measured(SWEEP_SCHEDULER, () => sweep(sweepDeps, deps.lateMs));
    } catch (err) {
      if (signal.aborted) return ctx.handBack(job, token, SWEEP_SCHEDULER);
      throw err;
    }
    if (r.skipped) {
      log.info('rollup sweep skipped: another sweep holds the lease', { ms: Date.now() - started });
      return { skipped: true };
    }
    log.info('rollup sweep done', { version: r.version.toString(), hours: r.hours, treeChanges: r.treeChanges, ms: Date.now() - started });
    if (deps.admin && Date.now() - compacted >= deps.compactMs && !signal.aborted) {
      compacted = Date.now();
      log.info('obsolete rollup versions dropped', { hours: await compact(deps.ch, deps.admin) });
      log.info('old sweep records dropped', await pruneSweepRecords(deps.ch, deps.admin, Date.now()));
      log.info('obsolete chain flags dropped', { loops: await pruneChainFlags(deps.ch, deps.admin) });
    }
    return { version: r.version.toString(), hours: r.hours };
  };
}
