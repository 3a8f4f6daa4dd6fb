/**
 * Two rollup recomputes forced to overlap on the same hours (issue 20): one
 * held inside its work by a hook while the other runs, with the Redis
 * version counter lost in between, as a Redis that restarted without its
 * last writes (or failed over) loses it. Readers take each hour's highest
 * committed version whole, so two writers under one version would be read
 * summed: after every commit, each committed hour's rollups must equal the
 * live view, never twice it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Redis } from 'ioredis';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { DATETIME_MAX_SECONDS } from '../../src/decode/time.js';
import { createRedis } from '../../src/jobs/redis.js';
import { createLogger } from '../../src/observability/logger.js';
import { migratorSettings } from '../../src/config/index.js';
import { RollupOvertaken } from '../../src/rollups/claim.js';
import { pruneSweepRecords } from '../../src/rollups/compact.js';
import type { RollupDeps, RollupHooks } from '../../src/rollups/deps.js';
import { rebuild, sweep } from '../../src/rollups/rollups.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { migrate } from '../../src/migrate/migrate.js';
import { querySql } from '../../src/rollups/queries.js';
import { command, query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { chain } from '../support/envelope-chain.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { runCli, sleep } from '../support/processes.js';

const log = createLogger('error');
let ctx: TestContext;
let ch: ClickHouseClient;
let redis: Redis;

const versionKey = (): string => `${ctx.config.redis.queuePrefix}:rollups:version`;
const leaseKey = (): string => `${ctx.config.redis.queuePrefix}:rollups:sweep-lease`;

const deps = (hooks: RollupHooks = {}): RollupDeps => ({ ch, redis, prefix: ctx.config.redis.queuePrefix, scanLoops: 4000, log, hooks });

/** A point a recompute stops at until opened; `arrived` resolves when it got there. */
function gate(): { hold: () => Promise<void>; arrived: Promise<void>; open: () => void } {
  let open!: () => void;
  let reached!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const arrived = new Promise<void>((r) => (reached = r));
  return {
    hold: async () => {
      reached();
      await opened;
    },
    arrived,
    open,
  };
}

/** Per committed hour, calls and cost from each rollup table's reader view, and from the live view. */
async function committedHours(): Promise<{ hourly: string[]; byRoot: string[]; byModel: string[]; live: string[] }> {
  const read = async (view: string): Promise<string[]> =>
    (
      await query<{ h: string; n: string; c: string }>(
        ctx,
        `SELECT toString(hour) AS h, toString(sum(calls_sum)) AS n, toString(sum(cost_pico_sum)) AS c FROM ${view}
         WHERE hour IN (SELECT hour FROM rollup_commits) GROUP BY hour ORDER BY hour`,
      )
    ).map((r) => `${r.h} ${r.n} ${r.c}`);
  const liveRows = await query<{ h: string; n: string; c: string }>(
    ctx,
    'SELECT toString(hour) AS h, toString(calls) AS n, cost_pico_usd AS c FROM spend_by_hour WHERE hour IN (SELECT hour FROM rollup_commits)',
  );
  const live = new Map<string, [bigint, bigint]>();
  for (const r of liveRows) {
    const [n, c] = live.get(r.h) ?? [0n, 0n];
    live.set(r.h, [n + BigInt(r.n), c + BigInt(r.c)]);
  }
  return {
    hourly: await read('spend_rollup_hourly'),
    byRoot: await read('spend_rollup_root_hourly'),
    byModel: await read('spend_rollup_model_hourly'),
    live: [...live].sort(([a], [b]) => (a < b ? -1 : 1)).map(([h, [n, c]]) => `${h} ${n} ${c}`),
  };
}

/** Every committed hour's rollups equal the live view (checked after every commit). */
async function assertExact(when: string): Promise<void> {
  const r = await committedHours();
  assert.ok(r.live.length > 0, `${when}: some hour is committed`);
  assert.deepEqual(r.hourly, r.live, `${when}: spend_rollup_hourly = spend_by_hour per committed hour`);
  assert.deepEqual(r.byRoot, r.live, `${when}: spend_rollup_root_hourly = spend_by_hour per committed hour`);
  assert.deepEqual(r.byModel, r.live, `${when}: spend_rollup_model_hourly = spend_by_hour per committed hour`);
}

const checkEveryCommit = (who: string): RollupHooks => ({ afterCommit: async (v) => assertExact(`after ${who}'s commit of version ${v}`) });

before(async () => {
  ctx = await testContext('rollup_overlap');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  ch = createClickHouse(ctx.config.clickhouse);
  redis = createRedis(ctx.config.redis.url);
  const call = (usd: string): string => `{"model":"m-o","provider":"p-o","usage":{"cost_usd":${usd},"in":10,"out":2}}`;
  const records = [];
  for (let loop = 0; loop < 3; loop++) {
    const links: [string, string, string][] = [['2026-04-01T08:00:00Z', 'LoopStarted', `{"name":"overlap-${loop}"}`]];
    for (let h = 8; h < 14; h++) links.push([`2026-04-01T${String(h).padStart(2, '0')}:10:00Z`, 'ModelCalled', call(`${loop + 1}.25`)]);
    records.push(...chain(`overlap-${loop}`, links));
  }
  await produceEnvelopes(ctx, records);
  const ingest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], ctx.env);
  assert.equal(await ingest.exited, 0, ingest.stderr());
  await sweep(deps(checkEveryCommit('the first sweep')), 900_000);
});

after(async () => {
  redis.disconnect();
  await ch.close();
  await ctx.cleanup();
});

test('a sweep held before its commit while Redis loses the counter and the lease: the next sweep gets a fresh version, the held one drops its work', async () => {
  const held = gate();
  let heldVersion = 0n;
  const a = sweep(
    deps({
      beforeCommit: async (v) => {
        heldVersion = v;
        await held.hold();
      },
      ...checkEveryCommit('the held sweep'),
    }),
    900_000,
  );
  await held.arrived;
  // The held sweep's rows are written under its version, nothing committed.
  const [written] = await query<{ n: string }>(ctx, `SELECT toString(count()) AS n FROM spend_rollup_root_hour WHERE version = ${heldVersion}`);
  assert.ok(Number(written?.n) > 0, 'the held sweep wrote its rows');
  // Redis restarted without its last writes: neither the counter nor the lease is there.
  await redis.del(versionKey(), leaseKey());
  const b = await sweep(deps(checkEveryCommit('the second sweep')), 900_000);
  assert.equal(b.skipped, undefined, 'the lease was gone: the second sweep ran');
  assert.ok(b.version > heldVersion, `the second sweep's version ${b.version} is above the held one's ${heldVersion}`);
  held.open();
  await assert.rejects(a, RollupOvertaken, 'the held sweep, its lease taken over, committed nothing');
  await assertExact('after both');
  const [commits] = await query<{ n: string }>(ctx, `SELECT toString(count()) AS n FROM rollup_commits WHERE version = ${heldVersion}`);
  assert.equal(commits?.n, '0', 'the overtaken version is committed nowhere');
});

test('a version handed out twice (taken, not yet claimed, when Redis lost the counter): the later claimant drops its work', async () => {
  const held = gate();
  let heldVersion = 0n;
  // A rebuild takes no lease: only the claim keeps it from sharing a version with a sweep.
  const a = rebuild(
    deps({
      taken: async (v) => {
        heldVersion = v;
        await held.hold();
      },
      ...checkEveryCommit('the held rebuild'),
    }),
    { from: 0, until: DATETIME_MAX_SECONDS + 1, everything: true, lateMs: 900_000 },
  );
  await held.arrived;
  await redis.del(versionKey());
  const b = await sweep(deps(checkEveryCommit('the sweep')), 900_000);
  assert.equal(b.version, heldVersion, 'the counter handed the same version out twice (the case under test)');
  held.open();
  await assert.rejects(a, RollupOvertaken, 'the rebuild found the sweep\'s claim on its version and wrote nothing');
  await assertExact('after both');
  const [rows] = await query<{ n: string }>(ctx, `SELECT toString(count()) AS n FROM spend_rollup_hour WHERE version = ${heldVersion} AND hour NOT IN (SELECT hour FROM rollup_commits WHERE version = ${heldVersion})`);
  assert.equal(rows?.n, '0', 'no rows under the shared version but the sweep\'s');
  // And the rebuild, run again, takes a fresh version and completes.
  const again = await rebuild(deps(checkEveryCommit('the second rebuild')), { from: 0, until: DATETIME_MAX_SECONDS + 1, everything: true, lateMs: 900_000 });
  assert.ok(again.version > heldVersion);
});

test('one sweep at a time: a sweep while another holds the lease does nothing; one whose lease was taken over commits nothing', async () => {
  const held = gate();
  const a = sweep(deps({ beforeCommit: held.hold, ...checkEveryCommit('the lease holder') }), 900_000);
  await held.arrived;
  const b = await sweep(deps(checkEveryCommit('the second sweep')), 900_000);
  assert.equal(b.skipped, true, 'the second sweep found the lease held and did nothing');
  held.open();
  const done = await a;
  assert.ok(done.hours > 0);
  await assertExact('after the holder');
  // A holder frozen past its lease: another took it meanwhile.
  const frozen = gate();
  const c = sweep(deps({ beforeCommit: frozen.hold }), 900_000);
  await frozen.arrived;
  await redis.set(leaseKey(), 'someone-else', 'PX', 60_000);
  frozen.open();
  await assert.rejects(c, RollupOvertaken);
  await redis.del(leaseKey());
  await assertExact('after the frozen holder');
});

test('the per-sweep records older than a day are dropped, but the ones recovery reads', async () => {
  const day = 86_400;
  const old = Math.floor(Date.now() / 1000) - 2 * day;
  const [top] = await query<{ v: string; through: string }>(ctx, 'SELECT toString(max(version)) AS v, toString(toUInt32(max(seen_through))) AS through FROM rollup_sweeps');
  // A day's worth of history from before: sweeps, claims and alert sweeps two days old.
  await command(ctx, `INSERT INTO rollup_sweeps (version, seen_through, hours, finished_at) VALUES (1000001, toDateTime(${old}), 1, toDateTime(${old})), (1000002, toDateTime(${old}), 1, toDateTime(${old}))`);
  await command(ctx, `INSERT INTO rollup_claims (version, claimant, claimed_at) VALUES (0, 'old-a', toDateTime(${old})), (1, 'old-b', toDateTime(${old}))`);
  await command(ctx, `INSERT INTO alert_sweeps (seen_through, evaluated, transitions, finished_at) VALUES (toDateTime(${old}), 1, 0, toDateTime(${old})), (toDateTime(${old + 60}), 1, 0, toDateTime(${old}))`);
  const marksBefore = await query(ctx, querySql('rollup_watermarks'));
  const admin = createClickHouse(migratorSettings(ctx.config.clickhouse));
  try {
    const dropped = await pruneSweepRecords(ch, { ch: admin, cluster: undefined }, Date.now());
    // The two old sweeps have versions above every real one: the highest is kept, as recovery reads it.
    assert.deepEqual(dropped, { sweeps: 1, claims: 2, alertSweeps: 1 });
  } finally {
    await admin.close();
  }
  for (let i = 0; ; i++) {
    const [left] = await query<{ s: string; c: string; a: string }>(
      ctx,
      `SELECT toString((SELECT count() FROM rollup_sweeps WHERE finished_at = toDateTime(${old}))) AS s,
              toString((SELECT count() FROM rollup_claims WHERE claimed_at = toDateTime(${old}))) AS c,
              toString((SELECT count() FROM alert_sweeps WHERE finished_at = toDateTime(${old}))) AS a`,
    );
    if (left!.s === '1' && left!.c === '0' && left!.a === '1') break;
    assert.ok(i < 600, `the prune's mutations done in 60 s: ${JSON.stringify(left)}`);
    await sleep(100);
  }
  assert.deepEqual(await query(ctx, querySql('rollup_watermarks')), marksBefore, 'the watermarks recovery reads are unchanged');
  const [kept] = await query<{ v: string }>(ctx, 'SELECT toString(max(version)) AS v FROM rollup_sweeps');
  assert.equal(kept!.v, '1000002');
  assert.ok(BigInt(top!.v) > 0n);
  const [recent] = await query<{ n: string }>(ctx, `SELECT toString(count()) AS n FROM rollup_sweeps WHERE version = ${top!.v}`);
  assert.equal(recent!.n, '1', 'a sweep of today stays');
});
