/**
 * A sweep's transitions are recorded together (issue 11, exactly once per
 * transition, at ingest speed): all their rows in one insert and all their
 * delivery jobs in one addBulk — and a sweep that dies in that step leaves
 * every transition marked pending, which the next sweep records and queues,
 * once each.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ClickHouseClient } from '@clickhouse/client';
import { Queue } from 'bullmq';
import { alertSweep } from '../../src/alerts/sweep.js';
import { ALERT_DELIVERIES_QUEUE } from '../../src/jobs/queues.js';
import { createRedis } from '../../src/jobs/redis.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { query } from '../support/clickhouse.js';
import { ingestStuckLoops, sweepDeps } from '../support/alert-sweeps.js';
import { testContext, type TestContext } from '../support/context.js';

const log = createLogger('error');
let ctx: TestContext;

const LOOPS = Array.from({ length: 12 }, (_, i) => `batch-stuck-${i}`);

before(async () => {
  ctx = await testContext('alert_batch', { AGENTLEDGER_ALERT_EVALUATE_ON_INGEST: 'false' });
  await ingestStuckLoops(ctx, LOOPS, log);
});
after(() => ctx.cleanup());

/** The client with its alerts inserts counted, and refused while `refuse` says so. */
function watched(ch: ClickHouseClient, refuse: () => boolean): { ch: ClickHouseClient; inserts: () => number } {
  let inserts = 0;
  const command: ClickHouseClient['command'] = async (params) => {
    if (/^\s*INSERT INTO alerts\b/.test(params.query)) {
      inserts++;
      if (refuse()) throw new Error('planted: the alerts insert failed');
    }
    return ch.command(params);
  };
  return { ch: new Proxy(ch, { get: (target, p, r): unknown => (p === 'command' ? command : Reflect.get(target, p, r)) }), inserts: () => inserts };
}

test('one insert and one addBulk per sweep; a sweep that dies recording leaves them pending, and the next records each once', { timeout: 120_000 }, async () => {
  const real = createClickHouse(ctx.config.clickhouse);
  const redis = createRedis(ctx.config.redis.url);
  const deliveries = new Queue(ALERT_DELIVERIES_QUEUE, { connection: redis, prefix: ctx.config.redis.queuePrefix });
  let refuse = true;
  const { ch, inserts } = watched(real, () => refuse);
  const stateKey = `${ctx.config.redis.queuePrefix}:alerts:state`;
  const pending = async (): Promise<number> =>
    (await redis.hvals(stateKey)).filter((s) => (JSON.parse(s) as { pending?: unknown }).pending !== undefined).length;
  const stuckRows = async (): Promise<string> =>
    (await query<{ n: string }>(ctx, "SELECT toString(count()) AS n FROM alerts FINAL WHERE rule = 'stuck_loop'"))[0]!.n;
  try {
    const deps = sweepDeps(ctx, ch, redis, deliveries, log);
    const now = Date.now();
    await assert.rejects(alertSweep(deps, now), /planted: the alerts insert failed/);
    assert.equal(inserts(), 1, 'the dead sweep tried one insert for all of its transitions');
    assert.equal(await pending(), LOOPS.length, 'every transition is left marked pending');
    assert.equal(await stuckRows(), '0', 'nothing recorded');
    assert.equal((await deliveries.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed', 'prioritized'])).length, 0, 'nothing queued');

    refuse = false;
    const next = await alertSweep(deps, now + 1000);
    assert.equal(next.notified, LOOPS.length, 'the next sweep finishes the pending transitions (and makes no new ones)');
    assert.equal(inserts(), 2, 'in one insert');
    assert.equal(await pending(), 0, 'no transition left pending');
    const fired = await query<{ subject: string; n: string }>(
      ctx,
      "SELECT subject, toString(count()) AS n FROM alerts FINAL WHERE rule = 'stuck_loop' GROUP BY subject ORDER BY subject",
    );
    assert.deepEqual(fired, [...LOOPS].sort().map((subject) => ({ subject, n: '1' })), 'one fired row per loop');
    const jobs = await deliveries.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed', 'prioritized']);
    assert.equal(jobs.length, LOOPS.length, 'one delivery job per transition');
    assert.equal(new Set(jobs.map((j) => j.id)).size, LOOPS.length);

    await alertSweep(deps, now + 2000);
    assert.equal(inserts(), 2, 'a sweep with no transition inserts nothing');
    assert.equal(await stuckRows(), String(LOOPS.length));
  } finally {
    await deliveries.close();
    redis.disconnect();
    await real.close();
  }
});
