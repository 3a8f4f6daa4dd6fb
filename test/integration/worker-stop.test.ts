/**
 * A worker told to stop, and a worker killed, in the middle of an alert
 * sweep over a backlog of loops (issue 20): the stopped one exits within
 * its grace, handing the sweep back; the next worker goes on from the
 * sweep's cursor; a killed one's sweep is taken over within about 10 s; a
 * broken chain ingested meanwhile is alerted within seconds, while the
 * backlog is still being worked; and every alert is notified once.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Redis } from 'ioredis';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { envelopeJson } from '../../src/demo/traffic/envelope.js';
import { createRedis } from '../../src/jobs/redis.js';
import { createLogger } from '../../src/observability/logger.js';
import { migrate } from '../../src/migrate/migrate.js';
import { query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { chain } from '../support/envelope-chain.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { runCli, until } from '../support/processes.js';

const log = createLogger('error');
let ctx: TestContext;
let redis: Redis;

const at = (ms: number): string => new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z');
const BACKLOG = 1500;
const GRACE_MS = 10_000;

/** The backlog sweep's progress: the last loop its cursor has done, undefined when no sweep is in progress. */
async function cursorAfter(): Promise<string | undefined> {
  const text = await redis.get(`${ctx.config.redis.queuePrefix}:alerts:sweep-cursor`);
  return text === null ? undefined : (JSON.parse(text) as { after: string }).after;
}


const fired = async (rule: string): Promise<{ n: string; subjects: string }[]> =>
  query<{ n: string; subjects: string }>(ctx, `SELECT toString(count()) AS n, toString(uniqExact(subject)) AS subjects FROM alerts FINAL WHERE rule = '${rule}' AND notification = 'fired'`);

// Chunks of 5 loops: the second worker's sweep must still be under way when
// the kill comes, after the fresh alert's ingest; with chunks of 10 it had
// finished the backlog by then in one suite run (2026-12-07, 1 of 10).
const workerEnv = (): Record<string, string> => ({ ...ctx.env, AGENTLEDGER_LOG_LEVEL: 'info', AGENTLEDGER_ALERT_CHUNK_LOOPS: '5', AGENTLEDGER_ALERT_SWEEP_MS: '1000', AGENTLEDGER_ROLLUP_SWEEP_MS: '3600000' });

before(async () => {
  // The backlog is ingested without asking for evaluations: only the sweep sees it.
  ctx = await testContext('worker_stop', { AGENTLEDGER_ALERT_EVALUATE_ON_INGEST: 'false' });
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  redis = createRedis(ctx.config.redis.url);
  const t0 = Date.now();
  const records = [];
  for (let l = 0; l < BACKLOG; l++) {
    const loop = `backlog-${String(l).padStart(4, '0')}`;
    records.push(...chain(loop, [
      [at(t0 - 20_000), 'LoopStarted', JSON.stringify({ name: loop })],
      [at(t0 - 10_000), 'LoopFinished', JSON.stringify({ outcome_kind: 'Stuck' })],
    ]));
  }
  await produceEnvelopes(ctx, records);
  const ingest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], ctx.env);
  assert.equal(await ingest.exited, 0, ingest.stderr());
});

after(async () => {
  redis.disconnect();
  await ctx.cleanup();
});

test('SIGTERM mid-sweep: the worker exits within its grace, the next one goes on from the cursor, a killed one is taken over within ~10 s, a fresh alert is not held back, each alert notified once', { timeout: 300_000 }, async () => {
  const first = runCli(['worker'], workerEnv());
  const begun = await until('the backlog sweep under way', 60_000, async () => {
    const c = await cursorAfter();
    return c !== undefined && c !== '' ? c : undefined;
  }, [first]);
  const stoppedAt = Date.now();
  first.child.kill('SIGTERM');
  assert.equal(await first.exited, 0, first.stderr());
  const stopMs = Date.now() - stoppedAt;
  assert.ok(stopMs < GRACE_MS, `stopped in ${stopMs} ms, within the ${GRACE_MS} ms grace`);
  assert.match(first.stderr(), /job handed back to the queue/, 'the sweep was handed back, not left to lapse');
  assert.doesNotMatch(first.stderr(), /stopped before its jobs in hand did/);
  const left = await cursorAfter();
  assert.ok(left !== undefined && left >= begun, `the cursor stays where the stopped sweep left it (${left})`);
  const [partial] = await fired('stuck_loop');
  assert.ok(Number(partial!.n) > 0 && Number(partial!.n) < BACKLOG, `part of the backlog alerted before the stop (${partial!.n})`);

  // The next worker goes on from the cursor, not from the start.
  const second = runCli(['worker'], workerEnv());
  await until('the sweep going on past the stopped one\'s cursor', 60_000, async () => {
    const c = await cursorAfter();
    return c !== undefined && c > left ? true : undefined;
  }, [second]);

  // A broken chain while the backlog is worked: alerted by ingest's evaluation within seconds.
  const t1 = Date.now();
  const tampered = chain('tampered', [
    [at(t1 - 3000), 'LoopStarted', '{"name":"tampered"}'],
    [at(t1 - 2000), 'IterationStarted', '{"iteration":1}'],
    [at(t1 - 1000), 'IterationStarted', '{"iteration":2}'],
  ]);
  const original = JSON.parse(tampered[1]!.value.toString()) as { Hash: number[] };
  tampered[1] = { key: 'tampered', value: Buffer.from(envelopeJson('tampered', 2, at(t1 - 2000), 'IterationStarted', Buffer.from('{"iteration":99}'), Buffer.from(original.Hash))) };
  await produceEnvelopes(ctx, tampered);
  const ingested = Date.now();
  const ingest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '1000'], { ...ctx.env, AGENTLEDGER_ALERT_EVALUATE_ON_INGEST: 'true' });
  await until('the tampered loop alerted', 30_000, async () => (Number((await fired('chain_integrity'))[0]!.n) > 0 ? true : undefined), [second]);
  const latency = Date.now() - ingested;
  const during = await cursorAfter();
  assert.ok(during !== undefined, 'the backlog sweep was still under way when the fresh alert fired');
  assert.ok(latency < 15_000, `the fresh alert fired ${latency} ms after its rows were produced (ingest's start included)`);
  assert.equal(await ingest.exited, 0, ingest.stderr());

  // A kill mid-sweep: its lock lapses and another worker takes the sweep over from the cursor.
  const beforeKill = await cursorAfter();
  assert.ok(beforeKill !== undefined, 'still under way');
  second.child.kill('SIGKILL');
  await second.exited;
  const killedAt = Date.now();
  const killedCursor = (await cursorAfter()) ?? '';
  const third = runCli(['worker'], workerEnv());
  await until('the killed worker\'s sweep taken over', 30_000, async () => {
    const c = await cursorAfter();
    return c === undefined || c > killedCursor ? true : undefined;
  }, [third]);
  const takeover = Date.now() - killedAt;
  assert.ok(takeover < 15_000, `taken over ${takeover} ms after the kill (lock 5 s, stalled check every 2.5 s, the new worker's start)`);

  await until('the backlog sweep finished', 120_000, async () => ((await cursorAfter()) === undefined && Number((await fired('stuck_loop'))[0]!.n) >= BACKLOG ? true : undefined), [third]);
  third.child.kill('SIGTERM');
  assert.equal(await third.exited, 0, third.stderr());
  assert.deepEqual(await fired('stuck_loop'), [{ n: String(BACKLOG), subjects: String(BACKLOG) }], 'each backlog loop notified once');
  assert.deepEqual(await fired('chain_integrity'), [{ n: '1', subjects: '1' }], 'the broken chain notified once');
  const [transitions] = await query<{ keys: string; rows: string }>(ctx, 'SELECT toString(uniqExact(transition_key)) AS keys, toString(count()) AS rows FROM alerts FINAL');
  assert.equal(transitions!.keys, transitions!.rows, 'one row per transition');
  process.stderr.write(`worker-stop: stop ${stopMs} ms, fresh alert ${latency} ms, takeover after SIGKILL ${takeover} ms\n`);
});
