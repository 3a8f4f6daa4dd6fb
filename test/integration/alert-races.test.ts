/**
 * Alert sweeps and evaluations racing each other (issue 11, "two workers
 * never notify twice"): BullMQ runs one alert job at a time, but a worker
 * whose lock expired mid-sweep (a stalled job handed to another worker) runs
 * beside the new one. Here eight sweeps and evaluations run at once, in one
 * process, against the same Redis and ClickHouse, twice over: each
 * transition must be recorded once and queued for delivery once.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Queue } from 'bullmq';
import { PRUNE_RESOLVED_AFTER_MS } from '../../src/alerts/state-store.js';
import { alertEvaluate, alertSweep } from '../../src/alerts/sweep.js';
import { ALERT_DELIVERIES_QUEUE } from '../../src/jobs/queues.js';
import { createRedis } from '../../src/jobs/redis.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { query } from '../support/clickhouse.js';
import { ingestStuckLoops, sweepDeps } from '../support/alert-sweeps.js';
import { testContext, type TestContext } from '../support/context.js';
import { chain } from '../support/envelope-chain.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { runCli } from '../support/processes.js';

const log = createLogger('error');
let ctx: TestContext;

const LOOPS = Array.from({ length: 12 }, (_, i) => `stuck-${i}`);

before(async () => {
  ctx = await testContext('alert_races', { AGENTLEDGER_ALERT_EVALUATE_ON_INGEST: 'false' });
  await ingestStuckLoops(ctx, LOOPS, log);
});
after(() => ctx.cleanup());

test('eight sweeps and evaluations at once record and queue each transition once, though each racer has its own clock', { timeout: 120_000 }, async () => {
  const ch = createClickHouse(ctx.config.clickhouse);
  const redis = createRedis(ctx.config.redis.url);
  const deliveries = new Queue(ALERT_DELIVERIES_QUEUE, { connection: redis, prefix: ctx.config.redis.queuePrefix });
  try {
    const deps = sweepDeps(ctx, ch, redis, deliveries, log);
    // Each racer's own instant: a transition made twice would have two keys
    // (its time is in the key), so only the compare-and-set keeps it one.
    const race = async (now: number): Promise<number> => {
      const results = await Promise.all([
        ...Array.from({ length: 4 }, (_, i) => alertSweep(deps, now + i)),
        ...Array.from({ length: 4 }, (_, i) => alertEvaluate(deps, LOOPS, true, now + 4 + i)),
      ]);
      return results.reduce((n, r) => n + r.notified, 0);
    };
    const now = Date.now();
    assert.ok((await race(now)) >= LOOPS.length, 'the transitions were made');
    // A second round a little later: nothing new.
    await race(now + 1000);
    const fired = await query<{ subject: string; n: string }>(
      ctx,
      "SELECT subject, toString(count()) AS n FROM alerts FINAL WHERE rule = 'stuck_loop' GROUP BY subject ORDER BY subject",
    );
    assert.deepEqual(fired, [...LOOPS].sort().map((subject) => ({ subject, n: '1' })), 'one fired row per loop');
    const raw = await query<{ n: string }>(ctx, "SELECT toString(uniqExact(transition_key)) AS n FROM alerts WHERE rule = 'stuck_loop'");
    assert.equal(raw[0]!.n, String(LOOPS.length), 'one transition key per loop, however many rows repeated it');
    const jobs = await deliveries.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed', 'prioritized']);
    assert.equal(jobs.length, LOOPS.length, 'one delivery job per transition');
    assert.equal(new Set(jobs.map((j) => j.id)).size, LOOPS.length);
    const states = await redis.hvals(`${ctx.config.redis.queuePrefix}:alerts:state`);
    assert.equal(states.filter((s) => (JSON.parse(s) as { pending?: unknown }).pending !== undefined).length, 0, 'no notification left pending');
  } finally {
    await deliveries.close();
    redis.disconnect();
    await ch.close();
  }
});

test('resolved states are dropped from Redis a day after they resolved, not before; a refill keeps the firing ones', { timeout: 60_000 }, async () => {
  const ch = createClickHouse(ctx.config.clickhouse);
  const redis = createRedis(ctx.config.redis.url);
  const deliveries = new Queue(ALERT_DELIVERIES_QUEUE, { connection: redis, prefix: ctx.config.redis.queuePrefix });
  const key = `${ctx.config.redis.queuePrefix}:alerts:state`;
  try {
    const deps = sweepDeps(ctx, ch, redis, deliveries, log);
    const now = Date.now();
    const resolved = (subject: string, resolvedAt: number): string =>
      JSON.stringify({ rule: 'convergence', subject, state: 'resolved', severity: 'info', firedAt: resolvedAt - 1000, resolvedAt, lastNotifiedAt: resolvedAt, notifications: 2, detail: 'quiet' });
    await redis.hset(key, JSON.stringify(['convergence', 'old']), resolved('old', now - PRUNE_RESOLVED_AFTER_MS - 1));
    await redis.hset(key, JSON.stringify(['convergence', 'recent']), resolved('recent', now - PRUNE_RESOLVED_AFTER_MS + 60_000));
    await alertSweep(deps, now);
    const fields = (await redis.hkeys(key)).map((f) => JSON.parse(f) as [string, string]);
    assert.deepEqual(fields.filter(([rule]) => rule === 'convergence').map(([, s]) => s), ['recent'], 'the old resolved state is gone, the recent one stays');
    assert.equal(fields.filter(([rule]) => rule === 'stuck_loop').length, LOOPS.length, 'the firing ones stay');

    // Redis loses the states: the refill brings back the firing ones, and nothing fires again.
    await redis.del(key, `${ctx.config.redis.queuePrefix}:alerts:seeded`);
    await alertSweep(deps, now + 2000);
    const refilled = (await redis.hvals(key)).map((v) => JSON.parse(v) as { rule: string; state: string });
    assert.equal(refilled.filter((s) => s.rule === 'stuck_loop' && s.state === 'firing').length, LOOPS.length);
    const [rows] = await query<{ n: string }>(ctx, "SELECT toString(count()) AS n FROM alerts FINAL WHERE rule = 'stuck_loop'");
    assert.equal(rows!.n, String(LOOPS.length), 'no second notification');
  } finally {
    await deliveries.close();
    redis.disconnect();
    await ch.close();
  }
});

test('a sweep in chunks judges a child its parent reported Stuck as stuck, though the two fall in different chunks', { timeout: 60_000 }, async () => {
  const t0 = Date.now();
  const at = (ms: number): string => new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z');
  // The parent sorts before the child: one chunk each (chunks of one loop), the parent's first.
  await produceEnvelopes(ctx, [
    ...chain('p-parent', [
      [at(t0 - 20_000), 'LoopStarted', '{"name":"p-parent"}'],
      [at(t0 - 15_000), 'SubAgentCompleted', JSON.stringify({ child_loop_id: 's-child', definition: 'worker', outcome_kind: 'Stuck' })],
    ]),
    ...chain('s-child', [
      [at(t0 - 19_000), 'LoopStarted', '{"name":"s-child","parent_id":"p-parent","depth":1}'],
      [at(t0 - 16_000), 'IterationStarted', '{"iteration":1}'],
    ]),
  ]);
  const ingest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], ctx.env);
  assert.equal(await ingest.exited, 0, ingest.stderr());
  const ch = createClickHouse(ctx.config.clickhouse);
  const redis = createRedis(ctx.config.redis.url);
  const deliveries = new Queue(ALERT_DELIVERIES_QUEUE, { connection: redis, prefix: ctx.config.redis.queuePrefix });
  try {
    const deps = { ...sweepDeps(ctx, ch, redis, deliveries, log), chunkLoops: 1 };
    await alertSweep(deps, Date.now());
    await alertSweep(deps, Date.now() + 1000);
    const rows = await query<{ notification: string }>(ctx, "SELECT notification FROM alerts FINAL WHERE rule = 'stuck_loop' AND subject = 's-child' ORDER BY at_ms");
    assert.deepEqual(rows.map((r) => r.notification), ['fired'], 'fired once, never resolved by its own chunk');
  } finally {
    await deliveries.close();
    redis.disconnect();
    await ch.close();
  }
});
