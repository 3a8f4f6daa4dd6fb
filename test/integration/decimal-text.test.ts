/**
 * Sums of 21 digits and more, as exact text (migrations 0012 and 0017, and the reader
 * queries): ClickHouse 18.16's toString(Decimal128) garbles them (NUL bytes,
 * lost digits), so every view and query renders a sum as intDiv(d, 10^18)
 * and the 18 digits below it. Against the real server: rows stored as the
 * consumers store them (costs and tokens near the Int64 maximum, thousands
 * per group, so sums pass 10^21 and 10^22) must read back, through every
 * affected view and through `loops`, `spend` and `sessions --json`, as the
 * exact BigInt totals this file computes. craze sessions built to sum to
 * chosen edge values (0, ±1, 10^18 - 1, 10^18, 10^21, …) check the rendering
 * through a real view; the full Decimal128 range (to 10^38 - 1, no table sum
 * gets there) is checked on literals with the expression the SQL files ship,
 * which this file first finds in each of them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { decimalTextSql, expandIncludes } from '../../src/clickhouse/sql.js';
import { queryFiles, queryPath, querySql } from '../support/query-files.js';
import { migrate } from '../../src/migrate/migrate.js';
import { query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { BIN, prng } from '../support/processes.js';
import { foldRow } from '../../src/rows/envelope-facts.js';

const log = createLogger('error');
let ctx: TestContext;

const INT64_MAX = 2n ** 63n - 1n;
const E18 = 10n ** 18n;
const rng = prng(0xdec128);

/** A random integer in [lo, hi], from four 16-bit draws (hi - lo < 2^64). */
function between(lo: bigint, hi: bigint): bigint {
  let r = 0n;
  for (let i = 0; i < 4; i++) r = (r << 16n) | BigInt(Math.floor(rng() * 65_536));
  return lo + (r % (hi - lo + 1n));
}
const sum = (xs: readonly bigint[]): bigint => xs.reduce((a, b) => a + b, 0n);

// ---- The loop runtime: envelopes rows with their facts (migration 0008). ----

type EnvelopeRow = Record<string, string | number>;
const envelopes: EnvelopeRow[] = [];
let offset = 0;

function envelope(loopId: string, seq: number, kindClass: string, facts: Record<string, string | number>, verdict = 'ok'): void {
  // All in one UTC hour, so each (provider, model) is one group of spend_by_hour too.
  const time = `2026-12-01 10:${String(Math.floor((seq % 3600) / 60)).padStart(2, '0')}:${String(seq % 60).padStart(2, '0')}`;
  envelopes.push({
    loop_id: loopId, seq, time, time_text: '', kind: kindClass, kind_class: kindClass, hash: '', computed_hash: '', payload: '{}',
    verdict, detail: '', evidence: '', kafka_topic: 'decimal-text', kafka_partition: 0, kafka_offset: String(offset++), ingested_at: '2026-12-01 12:00:00',
    ...facts,
  });
}

/** What one loop's own rows add up to (as loops, spend and the views count them). */
interface LoopTotals {
  calls: number;
  input: bigint;
  output: bigint;
  cost: bigint;
  /** BudgetCharged usd of action_type 'model'; `budget` is every BudgetCharged. */
  modelBudget: bigint;
  budget: bigint;
  unverifiedCalls: number;
  unverifiedCost: bigint;
  totalSpend: bigint;
}

const ROOT = { loopId: 'dt-root', name: 'dt-task', provider: 'dt-provider', model: 'dt-whale' };
const CHILD = { loopId: 'dt-child', name: 'dt-sub', provider: 'dt-provider', model: 'dt-minnow' };
const CHILD_SPEND_REPORTED = between(0n, INT64_MAX);

/**
 * A loop's rows: LoopStarted, `calls` ModelCalled each followed by its
 * BudgetCharged (the charge `overcharge` above the cost), `tampered`
 * ModelCalled that did not verify, a tool charge, and LoopFinished.
 */
function loop(l: typeof ROOT, parent: string, calls: number, cost: [bigint, bigint], overcharge: [bigint, bigint], tampered: number): LoopTotals {
  const t: LoopTotals = { calls, input: 0n, output: 0n, cost: 0n, modelBudget: 0n, budget: 0n, unverifiedCalls: tampered, unverifiedCost: 0n, totalSpend: between(0n, INT64_MAX) };
  let seq = 1;
  envelope(l.loopId, seq++, 'LoopStarted', { loop_name: l.name, parent_loop_id: parent, depth: parent === '' ? '0' : '1' });
  for (let i = 0; i < calls; i++) {
    const c = between(...cost);
    const input = between(8n * E18, INT64_MAX);
    const output = between(6n * E18, INT64_MAX);
    const charge = c + between(...overcharge);
    envelope(l.loopId, seq++, 'ModelCalled', { model_provider: l.provider, model_name: l.model, cost_pico: String(c), input_tokens: String(input), output_tokens: String(output) });
    envelope(l.loopId, seq++, 'BudgetCharged', { budget_pico: String(charge), action_type: 'model' });
    t.cost += c;
    t.input += input;
    t.output += output;
    t.modelBudget += charge;
  }
  for (let i = 0; i < tampered; i++) {
    const c = between(8n * E18, INT64_MAX);
    envelope(l.loopId, seq++, 'ModelCalled', { model_provider: l.provider, model_name: l.model, cost_pico: String(c), input_tokens: '1', output_tokens: '1' }, 'mismatch');
    t.unverifiedCost += c;
  }
  const tool = between(0n, INT64_MAX);
  envelope(l.loopId, seq++, 'BudgetCharged', { budget_pico: String(tool), action_type: 'tool' });
  t.budget = t.modelBudget + tool;
  if (parent === '') {
    envelope(l.loopId, seq++, 'SubAgentSpawned', { child_loop_id: CHILD.loopId, definition: CHILD.name });
    envelope(l.loopId, seq++, 'SubAgentCompleted', { child_loop_id: CHILD.loopId, definition: CHILD.name, outcome: 'Completed', spend_raw: '{"usd":"x"}', spend_pico: String(CHILD_SPEND_REPORTED) });
  }
  envelope(l.loopId, seq++, 'LoopFinished', { outcome: 'Completed', spend_raw: '{"usd":"x"}', spend_pico: String(t.totalSpend) });
  return t;
}

// The root: 2000 calls past 10^22 in cost and tokens, charged more than each
// call cost (its model ledger short by more than 10^21), 130 tampered calls
// past 10^21. The child: 150 calls, between 10^21 and 10^22, charged exactly.
const root = loop(ROOT, '', 2000, [5n * E18, 7n * E18], [E18, 2n * E18], 130);
const child = loop(CHILD, ROOT.loopId, 150, [7n * E18, INT64_MAX], [0n, 0n], 0);

// ---- craze: craze_events rows as the craze consumer stores them. ----

type CrazeRow = Record<string, string | number>;
const crazeRows: CrazeRow[] = [];
const TOKENS = ['input_tokens', 'output_tokens', 'reasoning_tokens', 'cache_read_tokens', 'cache_creation_tokens'] as const;
type Token = (typeof TOKENS)[number];

interface SessionTotals {
  reports: number;
  cost: bigint;
  tokens: Record<Token, bigint>;
}

function crazeRow(session: string, seq: number, report: number, provider: string, model: string, cost: bigint, tokens: Record<Token, bigint>): void {
  crazeRows.push({
    session_id: session, incarnation: 'i1', seq, at: `2026-12-01 11:${String(Math.floor((seq % 3600) / 60)).padStart(2, '0')}:${String(seq % 60).padStart(2, '0')}`,
    provider, model, report, cost_pico: String(cost), ...Object.fromEntries(TOKENS.map((k) => [k, String(tokens[k])])), unpriced: 0, verdict: 'ok',
    kafka_topic: 'decimal-text', kafka_partition: 0, kafka_offset: String(offset++), ingested_at: '2026-12-01 12:00:00',
  });
}

/** The whale session: 1300 counted reports past 10^22 in cost and every token field, and 20 reports that do not count. */
const WHALE = { session: 'dt-craze-whale', provider: 'dt-craze-provider', model: 'dt-craze-model' };
const whale: SessionTotals = { reports: 1300, cost: 0n, tokens: { input_tokens: 0n, output_tokens: 0n, reasoning_tokens: 0n, cache_read_tokens: 0n, cache_creation_tokens: 0n } };
for (let seq = 1; seq <= 1320; seq++) {
  const counted = seq <= whale.reports;
  const cost = between(8n * E18, INT64_MAX);
  const tokens = Object.fromEntries(TOKENS.map((k) => [k, between(8n * E18, INT64_MAX)])) as Record<Token, bigint>;
  crazeRow(WHALE.session, seq, counted ? 1 : 0, WHALE.provider, WHALE.model, cost, tokens);
  if (!counted) continue;
  whale.cost += cost;
  for (const k of TOKENS) whale.tokens[k] += tokens[k];
}

/**
 * Sessions whose counted cost sums to a chosen value, and whose input tokens
 * sum to its absolute value: the edges of the two pieces the SQL writes (an
 * 18-digit low part, its padding, its sign) through the craze_sessions view.
 */
const EDGES: readonly bigint[] = [
  0n, 1n, -1n, E18 - 1n, -(E18 - 1n), E18, -E18, E18 + 1n, -(E18 + 1n), 10n * E18 + 7n, 10n ** 20n - 1n, 10n ** 20n,
  10n ** 21n - 1n, 10n ** 21n, -(10n ** 21n), 10n ** 21n + 1n, -(10n ** 21n + 1n), 10n ** 22n - 1n, 10n ** 22n, -(10n ** 22n + 7n),
  12_345_678_901_234_567_890_123n, 10n ** 23n + E18 - 1n, between(10n ** 19n, 10n ** 20n), -between(10n ** 21n, 10n ** 22n), between(10n ** 22n, 10n ** 23n),
];
const LITERAL = { provider: 'dt-lit-provider', model: 'dt-lit-model' };
const edgeSession = (i: number): string => `dt-edge-${String(i).padStart(2, '0')}`;
/** A row's part of a total: at most this much, so each piece is an Int64. */
const PIECE = 9n * E18;
EDGES.forEach((target, i) => {
  const sign = target < 0n ? -1n : 1n;
  let rest = target * sign;
  let seq = 1;
  do {
    const piece = rest < PIECE ? rest : PIECE;
    crazeRow(edgeSession(i), seq++, 1, LITERAL.provider, LITERAL.model, sign * piece, { input_tokens: piece, output_tokens: 0n, reasoning_tokens: 0n, cache_read_tokens: 0n, cache_creation_tokens: 0n });
    rest -= piece;
  } while (rest > 0n);
});
const abs = (x: bigint): bigint => (x < 0n ? -x : x);

// ---- The shipped rendering. ----

/**
 * The one rendering of a Decimal128 sum `d` as text (migration 0017), whitespace
 * aside. Neither branch writes a value of more than 20 digits: 18.16's writer
 * overruns a stack array on those, and if() evaluates both branches.
 */
const rendering = (d: string): string =>
  `if(abs(${d}) < e18, toString(${d} - intDiv(${d}, e18) * e18), concat(toString(intDiv(${d}, e18)), substring(toString(abs(${d} - intDiv(${d}, e18) * e18) + e18), 2)))`;
const E18_DEFINITION = "WITH toDecimal128('1000000000000000000', 0) AS e18";

before(async () => {
  ctx = await testContext('decimal_text');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    for (let i = 0; i < envelopes.length; i += 5_000) await ch.insert({ table: 'envelopes', values: envelopes.slice(i, i + 5_000).map(foldRow), format: 'JSONEachRow' });
    for (let i = 0; i < crazeRows.length; i += 5_000) await ch.insert({ table: 'craze_events', values: crazeRows.slice(i, i + 5_000), format: 'JSONEachRow' });
  } finally {
    await ch.close();
  }
});
after(async () => {
  await ctx.cleanup();
});

/** A view read as the dashboard reads it: readonly=1. */
async function readView<T>(view: string): Promise<T[]> {
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    return await ch.query({ query: `SELECT * FROM ${view}`, format: 'JSONEachRow', clickhouse_settings: { readonly: '1' } }).then((r) => r.json<T>());
  } finally {
    await ch.close();
  }
}

function cli<T>(args: string[]): T {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: { PATH: process.env['PATH'] ?? '', ...ctx.env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as T;
}

const sortRows = (rows: unknown[][]): unknown[][] => rows.map((r) => JSON.stringify(r)).sort().map((r) => JSON.parse(r) as unknown[]);

test('the data passes 10^21 and 10^22 in every kind of sum', () => {
  for (const x of [root.cost, root.input, root.output, root.modelBudget, whale.cost, ...Object.values(whale.tokens)]) assert.ok(x > 10n ** 22n, String(x));
  for (const x of [child.cost, root.unverifiedCost, root.modelBudget - root.cost]) assert.ok(x > 10n ** 21n && x < 10n ** 22n, String(x));
});

test('migration 0017 renders every sum with the one expression, and no sum with toString alone', () => {
  const sql = readFileSync(join(MIGRATIONS_DIR, '0017_decimal_text_no_overflow.sql'), 'utf8')
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('--'))
    .join(' ')
    .replace(/\s+/g, ' ');
  const names = [...sql.matchAll(/if\(abs\((\w+)\) < e18, /g)].map((m) => m[1]!);
  assert.equal(names.length, 24, 'sums rendered');
  for (const d of names) assert.ok(sql.includes(rendering(d)), `${d} is rendered otherwise`);
  // What is left is toString of dates and times only.
  const rest = names.reduce((text, d) => text.split(rendering(d)).join(''), sql);
  for (const [, arg] of rest.matchAll(/toString\((\w+)/g)) assert.ok(['toDate', 'first_time', 'last_time'].includes(arg!), `toString(${arg}`);
  assert.equal(sql.split(E18_DEFINITION).length - 1, (sql.match(/\bAS e18\b/g) ?? []).length, 'e18 is 10^18');
});

test('the query files render every sum with decimal_text(), and no sum with toString alone', () => {
  const files = queryFiles();
  let rendered = 0;
  for (const file of files) {
    const sql = querySql(file.replace(/\.sql$/, '')).replace(/\s+/g, ' ');
    const names = [...expandIncludes(readFileSync(queryPath(file), 'utf8')).matchAll(/\bdecimal_text\((\w+)\)/g)].map((m) => m[1]!);
    rendered += names.length;
    const rest = names.reduce((text, d) => text.split(decimalTextSql(d)).join(''), sql);
    assert.ok(!rest.includes('decimal_text('), `${file}: decimal_text() of something other than a column or alias`);
    // What is left is toString of counts, dates and times: no Decimal128 sum (the names say which).
    for (const [, arg] of rest.matchAll(/toString\((\w+)/g)) assert.doesNotMatch(arg!, /cost|total|tokens|sum|spend|budget/i, `${file}: toString(${arg}`);
  }
  assert.ok(rendered >= 40, `${rendered} sums rendered by decimal_text()`);
});

test('the rendering is exact across Decimal128 on this server: edges, every length, both signs, one row and many', async () => {
  const values: bigint[] = [0n, 1n, -1n, E18 - 1n, E18, E18 + 1n, -E18, -(E18 - 1n), -(E18 + 1n), 10n ** 20n - 1n, 10n ** 20n, 10n ** 21n, -(10n ** 21n), 10n ** 37n, -(10n ** 37n), 10n ** 38n - 1n, -(10n ** 38n - 1n), 2n ** 64n, 2n ** 126n];
  for (let digits = 1; digits <= 38; digits++) {
    for (let i = 0; i < 6; i++) {
      // A random value of exactly this many digits, drawn in two halves when it is wider than 64 bits.
      const lo = 10n ** BigInt(digits - 1);
      const span = 10n ** BigInt(digits) - lo;
      const v = lo + ((between(0n, 2n ** 64n - 1n) * 2n ** 64n + between(0n, 2n ** 64n - 1n)) % span);
      values.push(i % 2 === 0 ? v : -v);
    }
  }
  const literal = (v: bigint): string => `toDecimal128('${v}', 0)`;
  // Migration 0017's expression and the query files' decimal_text(), on the same values.
  for (const expression of [`${E18_DEFINITION} SELECT ${rendering('d')}`, `SELECT ${decimalTextSql('d')}`]) {
    const rendered = (from: string): Promise<{ text: string }[]> => query<{ text: string }>(ctx, `${expression} AS text FROM (${from})`);
    const many = await rendered(`SELECT arrayJoin([${values.map(literal).join(', ')}]) AS d`);
    assert.deepEqual(many.map((r) => r.text), values.map(String));
    // One row at a time: a short result is where 18.16's own toString breaks.
    for (const v of values.filter((_, i) => i < 19 || i % 7 === 0)) {
      assert.deepEqual((await rendered(`SELECT ${literal(v)} AS d`)).map((r) => r.text), [String(v)]);
    }
  }
});

test('craze_sessions: each session\'s spend and tokens exact, the edge sums included', async () => {
  const rows = await readView<{ session_id: string; cost_pico: string } & Record<Token, string>>('craze_sessions');
  assert.deepEqual(
    rows.map((r) => [r.session_id, r.cost_pico, ...TOKENS.map((k) => r[k])]).sort(),
    [
      [WHALE.session, String(whale.cost), ...TOKENS.map((k) => String(whale.tokens[k]))],
      ...EDGES.map((t, i) => [edgeSession(i), String(t), String(abs(t)), '0', '0', '0', '0']),
    ].sort(),
  );
});

test('spend_by_hour and spend_by_day: per source, provider and model, exact', async () => {
  const want = [
    ['runtime', ROOT.provider, ROOT.model, root.calls, String(root.input), String(root.output), String(root.cost), 0],
    ['runtime', CHILD.provider, CHILD.model, child.calls, String(child.input), String(child.output), String(child.cost), 0],
    ['craze', WHALE.provider, WHALE.model, whale.reports, String(whale.tokens.input_tokens), String(whale.tokens.output_tokens), String(whale.cost), 0],
    ['craze', LITERAL.provider, LITERAL.model, crazeRows.length - 1320, String(sum(EDGES.map(abs))), '0', String(sum(EDGES)), 0],
  ];
  for (const view of ['spend_by_hour', 'spend_by_day']) {
    const rows = await readView<{ source: string; provider: string; model: string; calls: string; input_tokens_sum: string; output_tokens_sum: string; cost_pico_usd: string; unpriced_calls: string }>(view);
    assert.deepEqual(
      sortRows(rows.map((r) => [r.source, r.provider, r.model, Number(r.calls), r.input_tokens_sum, r.output_tokens_sum, r.cost_pico_usd, Number(r.unpriced_calls)])),
      sortRows(want),
      view,
    );
  }
});

test('spend_by_loop_name and unverified_spend: exact', async () => {
  const names = await readView<{ name: string; loops: string; calls: string; input_tokens_sum: string; output_tokens_sum: string; cost_pico_usd: string }>('spend_by_loop_name');
  assert.deepEqual(
    sortRows(names.map((r) => [r.name, Number(r.loops), Number(r.calls), r.input_tokens_sum, r.output_tokens_sum, r.cost_pico_usd])),
    sortRows([ROOT, CHILD].map((l, i) => {
      const t = i === 0 ? root : child;
      return [l.name, 1, t.calls, String(t.input), String(t.output), String(t.cost)];
    })),
  );
  const unverified = await readView<{ loop_id: string; verdict: string; calls: string; cost_pico_usd: string }>('unverified_spend');
  assert.deepEqual(unverified.map((r) => [r.loop_id, r.verdict, Number(r.calls), r.cost_pico_usd]), [[ROOT.loopId, 'mismatch', root.unverifiedCalls, String(root.unverifiedCost)]]);
});

test('loop_reconciliation: every ledger and difference exact, a negative one past 10^21 included', async () => {
  const rows = await readView<Record<string, string | number>>('loop_reconciliation');
  const columns = ['loop_id', 'model_cost_pico', 'model_budget_pico', 'budget_pico', 'has_total_spend', 'total_spend_pico', 'has_child_spend', 'child_spend_pico', 'model_minus_model_budget_pico', 'budget_minus_total_spend_pico', 'budget_minus_child_spend_pico'];
  const want = (id: string, t: LoopTotals, childSpend: bigint | undefined): unknown[] => [
    id, String(t.cost), String(t.modelBudget), String(t.budget), 1, String(t.totalSpend), childSpend === undefined ? 0 : 1, String(childSpend ?? 0n),
    String(t.cost - t.modelBudget), String(t.budget - t.totalSpend), String(t.budget - (childSpend ?? 0n)),
  ];
  assert.deepEqual(
    sortRows(rows.map((r) => columns.map((c) => (typeof r[c] === 'number' ? r[c] : String(r[c]))))),
    sortRows([want(ROOT.loopId, root, undefined), want(CHILD.loopId, child, CHILD_SPEND_REPORTED)]),
  );
  assert.ok(root.cost - root.modelBudget < -(10n ** 21n));
});

test('loops --json: own, budget, unverified and subtree spend exact', () => {
  const loops = cli<Record<string, unknown>[]>(['loops', '--json']);
  const keys = ['loopId', 'parentLoopId', 'rootLoopId', 'name', 'modelCalls', 'inputTokens', 'outputTokens', 'modelCostPicoUsd', 'budgetPicoUsd', 'unverifiedModelCostPicoUsd', 'subtreeModelCostPicoUsd'];
  assert.deepEqual(
    loops.map((l) => keys.map((k) => l[k])).sort(),
    [
      [ROOT.loopId, '', ROOT.loopId, ROOT.name, root.calls, String(root.input), String(root.output), String(root.cost), String(root.budget), String(root.unverifiedCost), String(root.cost + child.cost)],
      [CHILD.loopId, ROOT.loopId, ROOT.loopId, CHILD.name, child.calls, String(child.input), String(child.output), String(child.cost), String(child.budget), '0', String(child.cost)],
    ].sort(),
  );
});

test('spend --json: by model and by source, both sources, exact', () => {
  type Row = { source: string; provider: string; model: string; calls: number; inputTokens: string; outputTokens: string; costPicoUsd: string };
  const byModel = cli<Row[]>(['spend', '--json', '--by', 'model']);
  assert.deepEqual(
    sortRows(byModel.map((r) => [r.source, r.provider, r.model, r.calls, r.inputTokens, r.outputTokens, r.costPicoUsd])),
    sortRows([
      ['runtime', ROOT.provider, ROOT.model, root.calls, String(root.input), String(root.output), String(root.cost)],
      ['runtime', CHILD.provider, CHILD.model, child.calls, String(child.input), String(child.output), String(child.cost)],
      ['craze', WHALE.provider, WHALE.model, whale.reports, String(whale.tokens.input_tokens), String(whale.tokens.output_tokens), String(whale.cost)],
      ['craze', LITERAL.provider, LITERAL.model, crazeRows.length - 1320, String(sum(EDGES.map(abs))), '0', String(sum(EDGES))],
    ]),
  );
  const bySource = cli<Row[]>(['spend', '--json', '--by', 'source']);
  assert.deepEqual(
    sortRows(bySource.map((r) => [r.source, r.costPicoUsd, r.inputTokens])),
    sortRows([
      ['runtime', String(root.cost + child.cost), String(root.input + child.input)],
      ['craze', String(whale.cost + sum(EDGES)), String(whale.tokens.input_tokens + sum(EDGES.map(abs)))],
    ]),
  );
});

test('sessions --json: each session\'s spend and tokens exact, costliest first', () => {
  const sessions = cli<Record<string, unknown>[]>(['sessions', '--json']);
  const keys = ['sessionId', 'costPicoUsd', 'inputTokens', 'outputTokens', 'reasoningTokens', 'cacheReadTokens', 'cacheCreationTokens'];
  const want = [
    { cost: whale.cost, row: [WHALE.session, String(whale.cost), ...TOKENS.map((k) => String(whale.tokens[k]))] },
    ...EDGES.map((t, i) => ({ cost: t, row: [edgeSession(i), String(t), String(abs(t)), '0', '0', '0', '0'] })),
  ]
    .sort((a, b) => (a.cost !== b.cost ? (a.cost > b.cost ? -1 : 1) : (a.row[0]! < b.row[0]! ? -1 : 1)))
    .map((w) => w.row);
  // Token sums up to 2^53 - 1 are JSON numbers (documented): compared as text.
  assert.deepEqual(sessions.map((s) => keys.map((k) => String(s[k]))), want);
});
