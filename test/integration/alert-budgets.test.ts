/**
 * The spend behind the `spend_budget` rule (src/alerts/budgets.ts) against
 * the real stack: two runtime trees (one with a sub-agent and a fork of that
 * sub-agent, whose replays are the sub-agent's money), a whale tree past
 * 10^21 picodollars in one day, and craze sessions of two projects go through
 * Kafka, `craze push` and `ingest`; one rollup sweep; then budgetSpend must
 * give, per scope, the exact picodollars worked out by hand below and what
 * the live views (runtime_spend and runtime_loops of 0009, craze_spend and
 * craze_sessions of 0004) say for the same scope, and spendBudget must fire
 * for the scopes above their budget only. A fork's replays counted twice
 * would put root A, name `reviewer` and the day above their sums (and root
 * A and `reviewer` above their budgets, which equal their true spend).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ClickHouseClient } from '@clickhouse/client';
import { budgetsAt, budgetSpend, parseBudgets } from '../../src/alerts/budgets.js';
import type { SpendRow } from '../../src/alerts/rule-rows.js';
import { spendBudget } from '../../src/alerts/rules.js';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createRedis } from '../../src/jobs/redis.js';
import { createLogger } from '../../src/observability/logger.js';
import { sweep } from '../../src/rollups/rollups.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { migrate } from '../../src/migrate/migrate.js';
import { createKafka, ensureTopics, TOPIC_CONFIG } from '../../src/kafka/client.js';
import { query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { chain } from '../support/envelope-chain.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { runCli } from '../support/processes.js';

const log = createLogger('error');
let ctx: TestContext;
let ch: ClickHouseClient;
let journals: string;

const USD = 1_000_000_000_000n;
/** The UTC day of the test and `now` on it: 12:30, so hour 12 is the last one a per-day scope reads. */
const DAY = '2026-03-10';
const PREVIOUS_DAY = '2026-03-09';
const NOW = Date.parse(`${DAY}T12:30:00Z`);
const at = (day: string, time: string): string => `${day}T${time}Z`;
const call = (usd: string): string => `{"model":"m-budget","provider":"p-budget","usage":{"cost_usd":${usd},"in":10,"out":2}}`;

// Root A (task-a): a call the day before and one today; its sub-agent C
// (reviewer) two calls today; F, a fork of C, replays C's LoopStarted and two
// calls (C's money), then says so and makes one call of its own.
const childStarted = '{"name":"reviewer","parent_id":"bud-root-a","depth":1}';
const rootA = chain('bud-root-a', [
  [at(PREVIOUS_DAY, '23:00:00'), 'LoopStarted', '{"name":"task-a"}'],
  [at(PREVIOUS_DAY, '23:30:00'), 'ModelCalled', call('1.5')],
  [at(DAY, '09:00:00'), 'ModelCalled', call('2.25')],
]);
const childC = chain('bud-child-c', [
  [at(DAY, '09:10:00'), 'LoopStarted', childStarted],
  [at(DAY, '09:20:00'), 'ModelCalled', call('4')],
  [at(DAY, '09:30:00'), 'ModelCalled', call('0.5')],
]);
const forkF = chain('bud-fork-f', [
  [at(DAY, '09:10:00'), 'LoopStarted', childStarted],
  [at(DAY, '09:20:00'), 'ModelCalled', call('4')],
  [at(DAY, '09:30:00'), 'ModelCalled', call('0.5')],
  [at(DAY, '10:00:00'), 'ForkedFrom', '{"at_seq":3,"source_loop_id":"bud-child-c"}'],
  [at(DAY, '10:05:00'), 'ModelCalled', call('0.25')],
]);
// Root B (task-b): a call this morning and one this evening, after now.
const rootB = chain('bud-root-b', [
  [at(DAY, '08:00:00'), 'LoopStarted', '{"name":"task-b"}'],
  [at(DAY, '08:30:00'), 'ModelCalled', call('3')],
  [at(DAY, '18:00:00'), 'ModelCalled', call('7')],
]);
// A whale: 120 calls of $9,000,000 (9 * 10^18 picodollars, near Int64) today: 1.08 * 10^21 picodollars.
const WHALE_CALLS = 120;
const whale = chain('bud-whale', [
  [at(DAY, '11:00:00'), 'LoopStarted', '{"name":"whale"}'],
  ...Array.from({ length: WHALE_CALLS }, (_, i): [string, string, string] => [
    new Date(Date.parse(at(DAY, '11:00:00')) + (i + 1) * 5000).toISOString().replace('.000Z', 'Z'),
    'ModelCalled',
    call('9000000'),
  ]),
]);

// craze: S1 and S2 in /work/alpha, S3 in /work/beta. Each usage report
// carries the session's running totals; its spend is the growth.
interface Report {
  readonly at: string;
  readonly sessionCostPico: bigint;
}
const SESSIONS = [
  { id: '01960000-0000-7000-8000-0000000000a1', incarnation: '01960000-0000-7000-8000-0000000001a1', cwd: '/work/alpha', reports: [{ at: at(PREVIOUS_DAY, '22:00:00'), sessionCostPico: 1n * USD }, { at: at(DAY, '10:00:00'), sessionCostPico: 3n * USD }] },
  { id: '01960000-0000-7000-8000-0000000000a2', incarnation: '01960000-0000-7000-8000-0000000001a2', cwd: '/work/alpha', reports: [{ at: at(DAY, '11:00:00'), sessionCostPico: USD / 2n }] },
  { id: '01960000-0000-7000-8000-0000000000b1', incarnation: '01960000-0000-7000-8000-0000000001b1', cwd: '/work/beta', reports: [{ at: at(DAY, '11:30:00'), sessionCostPico: 6n * USD }] },
] as const;

/** A craze journal file: header (incarnation, cwd), the craze_session diag line, the model, then the usage reports. */
function journal(s: { id: string; incarnation: string; cwd: string; reports: readonly Report[] }): string {
  const first = s.reports[0]!.at;
  const usage = (cost: bigint): string => `{"input":100,"output":10,"reasoning":0,"cacheRead":0,"cacheCreation":0,"costPicoUsd":${cost},"unpriced":false}`;
  const lines = [
    JSON.stringify({ ts: first, type: 'header', format: 1, eventCodec: 1, incarnation: s.incarnation, crazeVersion: '0.9.2', provider: 'native', cwd: s.cwd }),
    JSON.stringify({ ts: first, type: 'diag', kind: 'craze_session', fields: { crazeSessionId: s.id } }),
    JSON.stringify({ ts: first, type: 'event', seq: 1, at: first, eventType: 'meta', event: { type: 'meta', state: { model: 'm-craze' }, at: first } }),
    // Written by hand: costPicoUsd is an int64, never a float.
    ...s.reports.map(
      (r, i) =>
        `{"ts":"${r.at}","type":"event","seq":${i + 2},"at":"${r.at}","eventType":"meta","event":{"type":"meta","state":{"usage":{"contextTokens":1000,"contextWindow":200000,"turn":${usage(r.sessionCostPico)},"session":${usage(r.sessionCostPico)}}},"at":"${r.at}"}}`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

/** The spend worked out by hand, per scope. */
const EXPECTED: Record<string, bigint> = {
  // All time: 1.5 + 2.25 (A) + 4 + 0.5 (C) + 0.25 (F's own call; its replays are C's).
  'root:bud-root-a': 8n * USD + USD / 2n,
  // All time, the call after now included.
  'root:bud-root-b': 10n * USD,
  'root:bud-whale': BigInt(WHALE_CALLS) * 9_000_000n * USD,
  // A craze session is its own root: S1 all time, $3.
  [`root:${SESSIONS[0].id}`]: 3n * USD,
  // Today up to now: C's 4 + 0.5 and F's own 0.25.
  'name:reviewer': 4n * USD + (3n * USD) / 4n,
  // Today: yesterday's 1.5 left out.
  'name:task-a': (9n * USD) / 4n,
  // Today up to now: the 18:00 call left out.
  'name:task-b': 3n * USD,
  // Today: S1's growth from $1 to $3, and S2's $0.5.
  'project:/work/alpha': 2n * USD + USD / 2n,
  'project:/work/beta': 6n * USD,
  // Today up to now, every source: runtime 2.25 + 4.5 + 0.25 + 3 + the whale, craze 2.5 + 6.
  [`day:${DAY}`]: BigInt(WHALE_CALLS) * 9_000_000n * USD + 18n * USD + USD / 2n,
};

/** A Decimal128 sum `c` of a live-view query, read exactly on 18.16 too (two parts below 10^20). */
async function liveSum(sql: string): Promise<bigint> {
  const [r] = await query<{ hi: string; lo: string }>(
    ctx,
    `WITH toDecimal128('1000000000000000000', 0) AS e18 SELECT toString(intDiv(c, e18)) AS hi, toString(c - intDiv(c, e18) * e18) AS lo FROM (${sql})`,
  );
  return BigInt(r!.hi) * 10n ** 18n + BigInt(r!.lo);
}

const since = Date.parse(`${DAY}T00:00:00Z`) / 1000;
const until = NOW / 1000;
const runtimeCost = (where: string): string =>
  `SELECT sum(toDecimal128(cost_pico, 0)) AS c FROM runtime_spend WHERE kind_class = 'ModelCalled' AND verified AND NOT replayed AND ${where}`;
const crazeCost = (where: string): string => `SELECT sum(toDecimal128(cost_pico, 0)) AS c FROM craze_spend WHERE ${where}`;
const today = (column: string): string => `${column} >= toDateTime(${since}) AND ${column} <= toDateTime(${until})`;

/** What the live views (0009, 0004) say for each scope, read from envelopes FINAL and craze_events FINAL. */
async function live(): Promise<Record<string, bigint>> {
  const tree = async (root: string, loops: readonly string[]): Promise<[string, bigint]> => {
    // The tree as the live views place it: the root, and the loops whose LoopStarted names it as parent.
    const placed = await query<{ loop_id: string }>(ctx, `SELECT loop_id FROM runtime_loops WHERE loop_id = '${root}' OR started_parent = '${root}' ORDER BY loop_id`);
    assert.deepEqual(placed.map((p) => p.loop_id), [...loops].sort());
    return [`root:${root}`, await liveSum(runtimeCost(`loop_id IN (${loops.map((l) => `'${l}'`).join(', ')})`))];
  };
  const name = async (n: string): Promise<[string, bigint]> => [`name:${n}`, await liveSum(runtimeCost(`loop_id IN (SELECT loop_id FROM runtime_loops WHERE name = '${n}') AND ${today('time')}`))];
  const project = async (cwd: string): Promise<[string, bigint]> => [
    `project:${cwd}`,
    await liveSum(crazeCost(`session_id IN (SELECT session_id FROM craze_sessions WHERE cwd = '${cwd}') AND ${today('at')}`)),
  ];
  return Object.fromEntries([
    await tree('bud-root-a', ['bud-root-a', 'bud-child-c', 'bud-fork-f']),
    await tree('bud-root-b', ['bud-root-b']),
    await tree('bud-whale', ['bud-whale']),
    [`root:${SESSIONS[0].id}`, await liveSum(crazeCost(`session_id = '${SESSIONS[0].id}'`))],
    await name('reviewer'),
    await name('task-a'),
    await name('task-b'),
    await project('/work/alpha'),
    await project('/work/beta'),
    [`day:${DAY}`, (await liveSum(runtimeCost(today('time')))) + (await liveSum(crazeCost(today('at'))))],
  ]);
}

/** Spend rows summed per subject, as spendBudget sums them. */
function bySubject(rows: readonly SpendRow[]): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const r of rows) out[`${r.kind}:${r.key}`] = (out[`${r.kind}:${r.key}`] ?? 0n) + r.spentPico;
  return out;
}

const BUDGETS = parseBudgets(
  JSON.stringify({
    // Far below the whale: fires.
    daily: '1000',
    roots: {
      // Exactly its spend: not above, so not firing (replays counted twice would fire it).
      'bud-root-a': '8.5',
      // A picodollar short: fires.
      'bud-root-b': '9.999999999999',
      // No spend at all.
      'bud-nobody': '1',
    },
    names: { reviewer: '4.75', 'task-b': '2', 'no-such-name': '0' },
    projects: { '/work/alpha': '2.5', '/work/beta': '5.999999999999', '/work/idle': '0' },
  }),
  'test',
);

before(async () => {
  ctx = await testContext('alert_budgets');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  await ensureTopics(createKafka(ctx.config.kafka, log), [{ topic: ctx.config.kafka.topics.craze, numPartitions: 3, configEntries: TOPIC_CONFIG }]);
  await produceEnvelopes(ctx, [...rootA, ...childC, ...forkF, ...rootB, ...whale]);
  journals = await mkdtemp(join(tmpdir(), 'alert-budgets-'));
  for (const s of SESSIONS) await writeFile(join(journals, `${s.incarnation}.jsonl`), journal(s));
  const push = runCli(['craze', 'push', journals], ctx.env);
  assert.equal(await push.exited, 0, push.stderr());
  const ingest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], ctx.env);
  assert.equal(await ingest.exited, 0, ingest.stderr());

  ch = createClickHouse(ctx.config.clickhouse);
  const redis = createRedis(ctx.config.redis.url);
  try {
    await sweep({ ch, redis, prefix: ctx.config.redis.queuePrefix, scanLoops: ctx.config.rollups.scanLoops, log }, ctx.config.rollups.lateMs);
  } finally {
    redis.disconnect();
  }
});
after(async () => {
  await ch?.close();
  if (journals !== undefined) await rm(journals, { recursive: true, force: true });
  await ctx?.cleanup();
});

test('the fork\'s replays are stored and flagged, so counting them twice would show', async () => {
  const [r] = await query<{ replays: string; own: string }>(
    ctx,
    "SELECT toString(countIf(replayed)) AS replays, toString(countIf(NOT replayed)) AS own FROM runtime_spend WHERE kind_class = 'ModelCalled' AND loop_id = 'bud-fork-f'",
  );
  assert.deepEqual(r, { replays: '2', own: '1' });
});

test('budgetSpend gives each scope\'s exact picodollars, equal to the live views, past 10^21 picodollars', async () => {
  const spend = bySubject(await budgetSpend(ch, budgetsAt(BUDGETS, NOW), NOW));
  // Scopes without spend give no row (spendBudget reads them as 0): root bud-nobody, name no-such-name, project /work/idle.
  const budgeted = [`day:${DAY}`, 'root:bud-root-a', 'root:bud-root-b', 'name:reviewer', 'name:task-b', 'project:/work/alpha', 'project:/work/beta'];
  assert.deepEqual(spend, Object.fromEntries(budgeted.map((s) => [s, EXPECTED[s]!])));
  assert.ok(EXPECTED[`day:${DAY}`]! > 10n ** 21n, 'the day passes 10^21 picodollars');

  // Every scope worked out above (the whale's, task-a's and a craze session's too) against the live views.
  const every = bySubject(
    await budgetSpend(
      ch,
      Object.keys(EXPECTED).map((s) => {
        const [kind, ...key] = s.split(':');
        return { kind: kind as SpendRow['kind'], key: key.join(':'), limitPico: 0n };
      }),
      NOW,
    ),
  );
  assert.deepEqual(every, EXPECTED, 'budgetSpend = the hand-worked sums');
  assert.deepEqual(await live(), EXPECTED, 'the live views = the hand-worked sums');
});

test('spendBudget on that spend fires for the scopes above their budget, not for those at or below it', async () => {
  const conditions = spendBudget(budgetsAt(BUDGETS, NOW), await budgetSpend(ch, budgetsAt(BUDGETS, NOW), NOW));
  const firing = conditions.filter((c) => c.firing).map((c) => c.subject).sort();
  const quiet = conditions.filter((c) => !c.firing).map((c) => c.subject).sort();
  assert.deepEqual(firing, [`day:${DAY}`, 'name:task-b', 'project:/work/beta', 'root:bud-root-b']);
  assert.deepEqual(quiet, ['name:no-such-name', 'name:reviewer', 'project:/work/alpha', 'project:/work/idle', 'root:bud-nobody', 'root:bud-root-a']);
  const rootB = conditions.find((c) => c.subject === 'root:bud-root-b')!;
  assert.equal(rootB.detail, 'spent $10.00 of a $9.999999999999 budget, $0.000000000001 over');
});

test('a day key other than now\'s reads that whole day; no budgets, no spend', async () => {
  const rows = await budgetSpend(ch, [{ kind: 'day', key: PREVIOUS_DAY, limitPico: 0n }], NOW);
  // The day before: A's $1.5 call and S1's first $1.
  assert.deepEqual(rows, [{ kind: 'day', key: PREVIOUS_DAY, spentPico: USD + USD + USD / 2n }]);
  assert.deepEqual(await budgetSpend(ch, [], NOW), []);
});

test('the worker reads the budgets file: a root above its budget fires, at its budget does not, a budget removed resolves; a bad file stops it in one line', { timeout: 180_000 }, async () => {
  const file = join(journals, 'budgets.json');
  const env = { ...ctx.env, AGENTLEDGER_ALERT_BUDGETS_FILE: file, AGENTLEDGER_ALERT_SWEEP_MS: '300' };
  const budgetAlerts = async (): Promise<string[]> =>
    (await query<{ s: string }>(ctx, "SELECT concat(subject, ' ', state) AS s FROM alerts_current WHERE rule = 'spend_budget' ORDER BY s")).map((r) => r.s);
  const until = async (what: string, want: string[], worker: ReturnType<typeof runCli>): Promise<void> => {
    for (let i = 0; i < 600 && JSON.stringify(await budgetAlerts()) !== JSON.stringify(want); i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await budgetAlerts(), want, `${what}; worker: ${worker.stderr().slice(-2000)}`);
  };

  await writeFile(file, JSON.stringify({ roots: { 'bud-root-a': '8.5', 'bud-root-b': '9.99' } }));
  let worker = runCli(['worker'], env);
  await until('root B ($10 of $9.99) fires, root A ($8.50 of $8.50) does not', ['root:bud-root-b firing'], worker);
  worker.child.kill('SIGTERM');
  assert.equal(await worker.exited, 0, worker.stderr());

  await writeFile(file, JSON.stringify({ roots: { 'bud-root-a': '8.5' } }));
  worker = runCli(['worker'], env);
  await until('root B resolves once its budget is gone', ['root:bud-root-b resolved'], worker);
  worker.child.kill('SIGTERM');
  assert.equal(await worker.exited, 0, worker.stderr());

  await writeFile(file, JSON.stringify({ roots: { 'bud-root-a': 8.5 } }));
  const refused = runCli(['worker'], env);
  assert.notEqual(await refused.exited, 0);
  const lines = refused.stderr().trim().split('\n');
  assert.equal(lines.length, 1, refused.stderr());
  // The log line escapes the message's quotes.
  assert.match(lines[0]!, /AGENTLEDGER_ALERT_BUDGETS_FILE \(.*budgets\.json\): roots\[\\"bud-root-a\\"\]: 8\.5 is a JSON number with a fraction/);
});
