/**
 * What the alert sweep tests share: loops that finished Stuck, ingested
 * through the real consumer, and the sweep's dependencies for a test context.
 */
import assert from 'node:assert/strict';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { AlertSweepDeps } from '../../src/alerts/sweep-deps.js';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import type { Logger } from '../../src/observability/logger.js';
import { migrate } from '../../src/migrate/migrate.js';
import type { TestContext } from './context.js';
import { chain } from './envelope-chain.js';
import { produceEnvelopes } from './envelope-topic.js';
import { runCli } from './processes.js';

const at = (ms: number): string => new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z');

/** Migrates the context's database and ingests `loops`, each started 20 s ago and finished Stuck 10 s ago. */
export async function ingestStuckLoops(ctx: TestContext, loops: readonly string[], log: Logger): Promise<void> {
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  const t0 = Date.now();
  await produceEnvelopes(
    ctx,
    loops.flatMap((loop) =>
      chain(loop, [
        [at(t0 - 20_000), 'LoopStarted', JSON.stringify({ name: loop })],
        [at(t0 - 10_000), 'LoopFinished', JSON.stringify({ outcome_kind: 'Stuck' })],
      ]),
    ),
  );
  const ingest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], ctx.env);
  assert.equal(await ingest.exited, 0, ingest.stderr());
}

/** A sweep's dependencies in the context: its rules, an hour between reminders. */
export function sweepDeps(ctx: TestContext, ch: ClickHouseClient, redis: Redis, deliveries: Queue, log: Logger): AlertSweepDeps {
  return { ch, redis, prefix: ctx.config.redis.queuePrefix, deliveries, rules: ctx.config.alerts.rules, renotifyMs: 3_600_000, lateMs: ctx.config.rollups.lateMs, log };
}
