/**
 * `spend --rollups` against the raw `spend` (every stored envelope) after a
 * sweep, for every --by (root included) and every --since/--until form:
 * spend trees with forks, redeliveries and a tampered call in three closed
 * hours and the open one (which the rollup read answers live), craze usage
 * reports, and a grandchild loop ingested and swept before its parent and
 * the rest of its tree (its root placed once the chain up is stored); the
 * whale calls take the sums past 2^64 picodollars (10^20 by source). The
 * rollups count every hour a window overlaps, whole, so each is compared
 * with the raw read of that window widened to whole hours.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { generateSpendTraffic } from '../../src/demo/traffic/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { migrate } from '../../src/migrate/migrate.js';
import { runToEnd } from '../support/cli-run.js';
import { testContext, type TestContext } from '../support/context.js';
import { CRAZE_FIXTURES } from '../support/craze-events.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { runCli } from '../support/processes.js';

const HOUR_MS = 3_600_000;
const BY = ['model', 'day', 'name', 'root', 'source'] as const;

let ctx: TestContext;
/** The start of the hour the data's last traffic is in (open after the sweep: answered live). */
const openHour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000', '');
/** Three closed hours of trees and the open one, each traffic's loops their own (the seed names them). */
const traffics = [3, 2, 1, 0].map((back, i) => generateSpendTraffic({ seed: 2701 + i, roots: 4, startTime: iso(openHour - back * HOUR_MS + 60_000) }));
/** A grandchild of the first traffic: ingested and swept before its parent. */
const early = traffics[0]!.expected.loops.find((l) => l.depth === 2)!;

async function cli(args: readonly string[]): Promise<string> {
  const r = await runToEnd(args, ctx.env);
  assert.equal(r.code, 0, `agentledger ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function ingest(): Promise<void> {
  const run = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], ctx.env);
  assert.equal(await run.exited, 0, run.stderr());
}

before(async () => {
  ctx = await testContext('spend_rollups');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, createLogger('warn'));
  const records = traffics.flatMap((t) => t.records);
  await produceEnvelopes(ctx, records.filter((r) => r.key === early.loopId));
  await ingest();
  await cli(['rollups', 'sweep']);
  // Alone, the grandchild is under the loop its LoopStarted names, not yet under its root: the raw read says so too.
  const alone = await cli(['spend', '--json', '--by', 'root', '--rollups', '--source', 'runtime']);
  assert.deepEqual((JSON.parse(alone) as { rootLoopId: string }[]).map((r) => r.rootLoopId), [early.parentLoopId]);
  assert.equal(alone, await cli(['spend', '--json', '--by', 'root', '--source', 'runtime']));
  await produceEnvelopes(ctx, records.filter((r) => r.key !== early.loopId));
  await cli(['craze', 'push', CRAZE_FIXTURES]);
  await ingest();
  await cli(['rollups', 'sweep']);
});

after(async () => {
  await ctx?.cleanup();
});

/** Both reads of one window, for every --by: the rollups' and the raw one over the window's whole hours. */
async function assertSame(rollupWindow: readonly string[], rawWindow: readonly string[], what: string): Promise<Record<string, string>> {
  const answers: Record<string, string> = {};
  for (const by of BY) {
    const raw = await cli(['spend', '--json', '--by', by, ...rawWindow]);
    assert.equal(await cli(['spend', '--json', '--by', by, '--rollups', ...rollupWindow]), raw, `--by ${by} ${what}`);
    answers[by] = raw;
  }
  return answers;
}

test('--rollups after a sweep equals the raw read for every --by, the root of a loop ingested before its parent, forks and trees included', async () => {
  const all = await assertSame([], [], 'all time');
  const roots = JSON.parse(all['root']!) as { source: string; rootLoopId: string; calls: number; costPicoUsd: string }[];
  const expected = traffics.flatMap((t) => t.expected.roots.filter((r) => r.modelCalls > 0).map((r) => `${r.rootLoopId} ${r.modelCalls} ${r.modelCostPicoUsd}`));
  assert.deepEqual(roots.filter((r) => r.source === 'runtime').map((r) => `${r.rootLoopId} ${r.calls} ${r.costPicoUsd}`).sort(), expected.sort(), 'per root: the generators\' trees');
  assert.ok(roots.some((r) => r.rootLoopId === early.rootLoopId) && !roots.some((r) => r.rootLoopId === early.loopId), 'the early grandchild is under its true root');
  assert.ok(roots.some((r) => r.source === 'craze'), 'craze sessions are roots too');
  assert.ok(traffics.every((t) => t.expected.loops.some((l) => l.forkedFrom !== '')), 'every traffic has forks');
  const days = JSON.parse(all['day']!) as unknown[];
  assert.ok(days.length >= 2, 'runtime and craze days');
  for (const source of ['runtime', 'craze']) await assertSame(['--source', source], ['--source', source], `--source ${source}`);
});

test('--rollups --since and --until count every hour they overlap, whole: RFC 3339 inside an hour, a day, spans back from now', async () => {
  const inside = openHour - 2 * HOUR_MS + 17 * 60_000 + 30_000;
  const cut = await assertSame(['--since', iso(inside)], ['--since', iso(openHour - 2 * HOUR_MS)], '--since inside an hour');
  const all = JSON.parse(await cli(['spend', '--json', '--by', 'source'])) as { calls: number }[];
  const since = JSON.parse(cut['source']!) as { source: string; calls: number }[];
  assert.ok(since.reduce((n, r) => n + r.calls, 0) < all.reduce((n, r) => n + r.calls, 0), 'the window leaves spend out');
  assert.ok(since.some((r) => r.source === 'runtime' && r.calls > 0), 'and keeps some');
  await assertSame(['--until', iso(inside)], ['--until', iso(openHour - HOUR_MS)], '--until inside an hour (its hour is in)');
  await assertSame(['--until', iso(openHour - HOUR_MS)], ['--until', iso(openHour - HOUR_MS)], '--until on an hour (that hour is out)');
  await assertSame(['--since', iso(inside), '--until', iso(openHour + 60_000)], ['--since', iso(openHour - 2 * HOUR_MS), '--until', iso(openHour + HOUR_MS)], '--since and --until, the open hour in');
  const today = iso(Math.floor(Date.now() / 86_400_000) * 86_400_000).slice(0, 10);
  await assertSame(['--since', today], ['--since', today], '--since YYYY-MM-DD');
  for (const span of ['90m', '24h', '7d']) {
    const ms = { m: 60_000, h: HOUR_MS, d: 86_400_000 }[span.slice(-1) as 'm' | 'h' | 'd'] * Number(span.slice(0, -1));
    // The span's hour as the rollups take it; taken again after the reads, so an hour boundary passed meanwhile is a retry, not a failure.
    for (let attempt = 0; ; attempt++) {
      const hour = Math.floor((Date.now() - ms) / HOUR_MS) * HOUR_MS;
      try {
        await assertSame(['--since', span], ['--since', iso(hour)], `--since ${span}`);
        break;
      } catch (err) {
        if (attempt > 0 || Math.floor((Date.now() - ms) / HOUR_MS) * HOUR_MS === hour) throw err;
      }
    }
  }
});
