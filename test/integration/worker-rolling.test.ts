/**
 * A rolling restart of two `agentledger worker` processes (issue 20): a
 * worker is sent SIGTERM in the middle of a rollup sweep while another one
 * runs (and, once, with the Redis version counter and the sweep lease lost
 * just before, as a Redis that restarted without its last writes loses
 * them), a new worker is started, and so on. Throughout, every committed
 * hour's rollups must equal the live view, and the `spend_budget` verdicts
 * the live figures: a root spending exactly its budget never fires (read
 * twice it would), one above it fires once. Each stopped worker exits
 * within its grace, handing its sweep back to the queue. Then two workers
 * under different queue prefixes on the one database, each with its own
 * version counter and lease (a deploy pointed at another Redis): both count
 * on from what ClickHouse holds, and only the claims keep two sweeps from
 * writing one version (with the old allocation the hours read twice).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Redis } from 'ioredis';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createRedis } from '../../src/jobs/redis.js';
import { createLogger } from '../../src/observability/logger.js';
import { migrate } from '../../src/migrate/migrate.js';
import { query } from '../support/clickhouse.js';
import { rollupMismatches } from '../support/rollup-check.js';
import { testContext, type TestContext } from '../support/context.js';
import { chain } from '../support/envelope-chain.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { runCli, sleep, until, type Running } from '../support/processes.js';

const log = createLogger('error');
let ctx: TestContext;
let redis: Redis;
const DAYS = 30;
const GRACE_MS = 10_000;


const mismatches = (): Promise<string[]> => rollupMismatches(ctx);

const budgetFired = async (subject: string): Promise<number> =>
  Number((await query<{ n: string }>(ctx, `SELECT toString(count()) AS n FROM alerts FINAL WHERE rule = 'spend_budget' AND subject = '${subject}' AND notification = 'fired'`))[0]!.n);

/** The sweep in flight: its version once it has committed at least `atLeast` steps and not all, else undefined. */
async function sweepMidway(atLeast: number): Promise<bigint | undefined> {
  const [r] = await query<{ claimed: string; swept: string }>(
    ctx,
    'SELECT toString((SELECT max(version) FROM rollup_claims)) AS claimed, toString((SELECT max(version) FROM rollup_sweeps)) AS swept',
  );
  const claimed = BigInt(r!.claimed);
  const [c] = await query<{ n: string }>(ctx, `SELECT toString(count()) AS n FROM rollup_commits WHERE version = ${claimed}`);
  const commits = Number(c!.n);
  return claimed > BigInt(r!.swept) && commits >= atLeast && commits < DAYS * 24 - 12 * 24 ? claimed : undefined;
}

const sweptBeyond = async (version: bigint): Promise<true | undefined> =>
  BigInt((await query<{ v: string }>(ctx, 'SELECT toString(max(version)) AS v FROM rollup_sweeps'))[0]!.v) > version ? true : undefined;

let env: Record<string, string>;

before(async () => {
  ctx = await testContext('worker_rolling');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  redis = createRedis(ctx.config.redis.url);
  // Two roots, a call an hour for 30 days at $0.01: $7.20 each, over 30 rollup steps of a day.
  const call = '{"model":"m-roll","provider":"p-roll","usage":{"cost_usd":0.01,"in":5,"out":1}}';
  const start = Date.parse('2026-05-01T00:00:00Z');
  const records = [];
  for (const root of ['roll-0', 'roll-1']) {
    const links: [string, string, string][] = [[new Date(start).toISOString(), 'LoopStarted', `{"name":"${root}"}`]];
    for (let h = 0; h < DAYS * 24; h++) links.push([new Date(start + h * 3_600_000 + 60_000).toISOString(), 'ModelCalled', call]);
    records.push(...chain(root, links));
  }
  await produceEnvelopes(ctx, records);
  const ingest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], ctx.env);
  assert.equal(await ingest.exited, 0, ingest.stderr());
  const dir = mkdtempSync(join(tmpdir(), 'agentledger-rolling-'));
  // roll-0 spends exactly its budget (fires only if read above it), roll-1 more than its own.
  writeFileSync(join(dir, 'budgets.json'), JSON.stringify({ roots: { 'roll-0': '7.2', 'roll-1': '7' } }));
  env = {
    ...ctx.env,
    AGENTLEDGER_LOG_LEVEL: 'info',
    AGENTLEDGER_ROLLUP_SWEEP_MS: '300',
    AGENTLEDGER_ALERT_SWEEP_MS: '300',
    AGENTLEDGER_ALERT_BUDGETS_FILE: join(dir, 'budgets.json'),
  };
});

after(async () => {
  redis.disconnect();
  await ctx.cleanup();
});

test('SIGTERM to a worker mid-sweep while another runs, a new one started, twice: the rollups and every budget verdict equal the live figures throughout', { timeout: 300_000 }, async () => {
  // Watches the tables from start to end: every committed hour exact, roll-0 never over budget.
  const seen: string[] = [];
  let checks = 0;
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      seen.push(...(await mismatches()));
      if ((await budgetFired('root:roll-0')) > 0) seen.push('spend_budget fired for roll-0, which spends exactly its budget');
      checks++;
    }
  })();

  const stop = async (w: Running, what: string): Promise<number> => {
    const at = Date.now();
    w.child.kill('SIGTERM');
    assert.equal(await w.exited, 0, w.stderr());
    const ms = Date.now() - at;
    assert.ok(ms < GRACE_MS, `${what} stopped in ${ms} ms, within the ${GRACE_MS} ms grace`);
    assert.match(w.stderr(), /job handed back to the queue: this worker is stopping job=rollup-sweep/, `${what} handed its sweep back`);
    return ms;
  };

  let stopA = 0;
  let stopB = 0;
  let stopC = 0;
  try {
    const a = runCli(['worker'], env);
    const aVersion = await until('a first sweep half-way', 60_000, () => sweepMidway(3), [a]);
    // The new worker of the deploy comes up with the counter and the lease lost (Redis restarted without its last writes).
    await redis.del(`${ctx.config.redis.queuePrefix}:rollups:version`, `${ctx.config.redis.queuePrefix}:rollups:sweep-lease`);
    const b = runCli(['worker'], env);
    stopA = await stop(a, 'the first worker');
    await until('a sweep finished by the second worker', 60_000, () => sweptBeyond(aVersion), [b]);

    const bVersion = await until('a sweep of the second worker half-way', 60_000, () => sweepMidway(3), [b]);
    const c = runCli(['worker'], env);
    stopB = await stop(b, 'the second worker');
    await until('a sweep finished by the third worker', 60_000, () => sweptBeyond(bVersion), [c]);
    await until('roll-1 over its budget, alerted', 60_000, async () => ((await budgetFired('root:roll-1')) > 0 ? true : undefined), [c]);
    await sleep(1000);
    const at = Date.now();
    c.child.kill('SIGTERM');
    assert.equal(await c.exited, 0, c.stderr());
    stopC = Date.now() - at;
  } finally {
    watching = false;
    await watcher;
  }

  assert.deepEqual(seen.slice(0, 10), [], 'never a committed hour off the live view, never a false budget alert');
  assert.ok(checks > 10, `the watcher looked ${checks} times`);
  const [hours] = await query<{ n: string }>(ctx, 'SELECT toString(uniqExact(hour)) AS n FROM rollup_commits');
  assert.equal(hours!.n, String(DAYS * 24), 'every hour committed');
  assert.deepEqual(await mismatches(), []);
  assert.equal(await budgetFired('root:roll-1'), 1, 'roll-1 over budget notified once');
  const [twice] = await query<{ n: string }>(ctx, 'SELECT toString(count()) AS n FROM (SELECT version FROM rollup_commits GROUP BY hour, version HAVING count() > 1)');
  assert.equal(twice!.n, '0', 'no hour committed twice under one version');
  process.stderr.write(`worker-rolling: stops ${stopA} ms and ${stopB} ms, last ${stopC} ms, ${checks} checks\n`);
});

test('two workers on one database under different queue prefixes (each its own counter and lease, as after a deploy pointed at another Redis): no two sweeps write one version, every committed hour equals the live view', { timeout: 120_000 }, async () => {
  const envA = Object.fromEntries(Object.entries({ ...env, AGENTLEDGER_ALERT_SWEEP_MS: '86400000' }).filter(([k]) => k !== 'AGENTLEDGER_ALERT_BUDGETS_FILE'));
  const envB = { ...envA, AGENTLEDGER_QUEUE_PREFIX: `${ctx.config.redis.queuePrefix}_b` };
  const seen: string[] = [];
  let watching = true;
  const watcher = (async () => {
    while (watching) seen.push(...(await mismatches()));
  })();
  const sweeps = async (): Promise<number> => Number((await query<{ n: string }>(ctx, 'SELECT toString(count()) AS n FROM rollup_sweeps'))[0]!.n);
  const before = await sweeps();
  const workers = [runCli(['worker'], envA), runCli(['worker'], envB)];
  let swept: unknown;
  try {
    swept = await until('ten more sweeps finished', 90_000, async () => ((await sweeps()) >= before + 10 ? true : undefined), workers).catch((err: unknown) => err);
  } finally {
    for (const w of workers) w.child.kill('SIGTERM');
    for (const w of workers) await w.exited;
    watching = false;
    await watcher;
  }
  assert.deepEqual(seen.slice(0, 10), [], 'never a committed hour off the live view');
  if (swept !== true) throw swept;
  // Both counters count on from what ClickHouse holds: a number may come up on both sides (told, not required).
  const [shared] = await query<{ n: string }>(ctx, 'SELECT toString(count()) AS n FROM (SELECT version FROM rollup_claims GROUP BY version HAVING count() > 1)');
  assert.deepEqual(await mismatches(), []);
  const [twice] = await query<{ n: string }>(ctx, 'SELECT toString(count()) AS n FROM (SELECT version FROM rollup_sweeps GROUP BY version HAVING count() > 1)');
  assert.equal(twice!.n, '0', 'no version recorded by two sweeps');
  process.stderr.write(`worker-rolling: ${shared!.n} version(s) handed out on both sides, each written by one sweep\n`);
});
