/**
 * The dashboard views of migration 0010 (docs/spend.md, "Views for dashboards"),
 * against the real stack: generated loop-runtime spend traffic (forks whose
 * replays arrive before their ForkedFrom, redeliveries, a tampered ModelCalled
 * and a second version) goes through Kafka and `ingest` once, and every view
 * must give what this file derives on its own: spend from the generator's
 * exact totals (src/demo/traffic/spend-expected.ts), tools, sub-agent
 * outcomes and convergence warnings from the generated records decoded here
 * (src/decode/envelope.ts), each (loop, seq) once and a fork's replays left
 * to its source.
 *
 * Every view is read with readonly=1, the one limit of the dashboard user's
 * profile (infra/clickhouse/users.d/agentledger.xml): that user is confined
 * to the real `agentledger` database, so the views are read here, in this
 * file's own database, by the test user under the same readonly=1.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { decodeEnvelope, type Envelope } from '../../src/decode/envelope.js';
import { generateSpendTraffic } from '../../src/demo/traffic/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { migrate } from '../../src/migrate/migrate.js';
import { command } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { runCli } from '../support/processes.js';

const log = createLogger('error');
let ctx: TestContext;
const traffic = generateSpendTraffic({ seed: 1, roots: 4 });
const { expected } = traffic;

/**
 * A craze session's usage reports, stored as the craze consumer stores them
 * (counted when report = 1; an unpriced one's cost is a floor): the craze
 * half of the spend views.
 */
const CRAZE = { session: 'dash-craze-1', provider: 'craze-provider', model: 'craze-model' };
const CRAZE_REPORTS = [
  { seq: 1, at: '2026-12-01 00:30:00', report: 1, costPico: 5_000_000_000_000n, input: 100, output: 20, unpriced: 0 },
  { seq: 2, at: '2026-12-01 00:45:00', report: 1, costPico: 0n, input: 7, output: 3, unpriced: 1 },
  { seq: 3, at: '2026-12-01 00:50:00', report: 0, costPico: 999n, input: 1, output: 1, unpriced: 0 },
] as const;

const VIEWS = ['spend_calls', 'spend_by_hour', 'spend_by_day', 'spend_by_loop_name', 'subagent_outcomes', 'tool_error_rates', 'convergence_warnings', 'unverified_spend'] as const;

before(async () => {
  ctx = await testContext('dashboard_views');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  await produceEnvelopes(ctx, traffic.records);
  await command(
    ctx,
    `INSERT INTO craze_events (session_id, incarnation, seq, at, provider, model, report, cost_pico, input_tokens, output_tokens, unpriced, verdict) VALUES ${CRAZE_REPORTS.map(
      (r) => `('${CRAZE.session}', 'i1', ${r.seq}, '${r.at}', '${CRAZE.provider}', '${CRAZE.model}', ${r.report}, ${r.costPico}, ${r.input}, ${r.output}, ${r.unpriced}, 'ok')`,
    ).join(', ')}`,
  );
  const ingest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], ctx.env);
  assert.equal(await ingest.exited, 0, ingest.stderr());
});
after(async () => {
  await ctx.cleanup();
});

/** A view read as the dashboard reads it: readonly=1 (no writes, no setting changes). */
async function readView<T>(view: (typeof VIEWS)[number]): Promise<T[]> {
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    return await ch.query({ query: `SELECT * FROM ${view}`, format: 'JSONEachRow', clickhouse_settings: { readonly: '1' } }).then((r) => r.json<T>());
  } finally {
    await ch.close();
  }
}

/**
 * The envelopes as stored: each (loop, seq) once, as it first arrived (a
 * redelivery is the same bytes; a later, other version is a second version,
 * not counted), a fork's replays (seq <= ForkedFrom.at_seq) left out.
 */
function ownEnvelopes(): Envelope[] {
  const replayedTo = new Map(expected.planted.forks.map((f) => [f.loopId, f.atSeq]));
  const seen = new Set<string>();
  const own: Envelope[] = [];
  for (const r of traffic.records) {
    const d = decodeEnvelope(r.value);
    assert.ok(d.ok, 'the generator writes decodable envelopes');
    const e = d.value;
    const key = `${e.loopId}\n${e.seq}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (e.seq <= (replayedTo.get(e.loopId) ?? 0)) continue;
    own.push(e);
  }
  return own;
}

function countBy(keys: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
}
const sortedEntries = <V>(m: Map<string, V>): [string, V][] => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
const sum = (xs: bigint[]): bigint => xs.reduce((a, b) => a + b, 0n);

interface SpendRow {
  source: string;
  provider: string;
  model: string;
  calls: string;
  input_tokens_sum: string;
  output_tokens_sum: string;
  cost_pico_usd: string;
  unpriced_calls: string;
}

test('the traffic plants what the views must leave out', () => {
  assert.ok(expected.planted.tampered.length > 0 && expected.planted.secondVersions.length > 0 && expected.planted.redeliveries.length > 0);
  // Fork replays of every kind the views below count, so leaving them out is tested.
  const replayedTo = new Map(expected.planted.forks.map((f) => [f.loopId, f.atSeq]));
  const replayed = new Set(
    traffic.records.flatMap((r) => {
      const d = decodeEnvelope(r.value);
      return d.ok && d.value.seq <= (replayedTo.get(d.value.loopId) ?? 0) ? [d.value.kindClass] : [];
    }),
  );
  for (const kind of ['ModelCalled', 'SubAgentCompleted', 'ToolCalled', 'ConvergenceWarning'] as const) assert.ok(replayed.has(kind), `a fork replays a ${kind}`);
});

test('spend_by_day: per UTC day the generator\'s counted model spend', async () => {
  const rows = (await readView<SpendRow & { day: string }>('spend_by_day')).filter((r) => r.source === 'runtime');
  assert.ok(rows.every((r) => Number(r.unpriced_calls) === 0), 'a ModelCalled always carries its cost');
  const perDay = new Map<string, { calls: number; input: bigint; output: bigint; cost: bigint }>();
  for (const r of rows) {
    const d = perDay.get(r.day) ?? { calls: 0, input: 0n, output: 0n, cost: 0n };
    perDay.set(r.day, { calls: d.calls + Number(r.calls), input: d.input + BigInt(r.input_tokens_sum), output: d.output + BigInt(r.output_tokens_sum), cost: d.cost + BigInt(r.cost_pico_usd) });
  }
  const days = expected.days.filter((d) => d.modelCalls > 0);
  assert.ok(days.length >= 2, 'the traffic crosses a UTC midnight');
  assert.deepEqual(
    sortedEntries(perDay).map(([day, d]) => [day, d.calls, String(d.input), String(d.output), String(d.cost)]),
    days.map((d) => [d.day, d.modelCalls, String(d.inputTokens), String(d.outputTokens), d.modelCostPicoUsd]),
  );
});

test('spend_by_hour and spend_by_day: per provider and model the generator\'s totals, past 2^64 picodollars', async () => {
  for (const view of ['spend_by_hour', 'spend_by_day'] as const) {
    const rows = (await readView<SpendRow>(view)).filter((r) => r.source === 'runtime');
    const perModel = new Map<string, SpendRow[]>();
    for (const r of rows) perModel.set(`${r.provider}\n${r.model}`, [...(perModel.get(`${r.provider}\n${r.model}`) ?? []), r]);
    assert.deepEqual(
      sortedEntries(perModel).map(([key, rs]) => [
        ...key.split('\n'),
        rs.reduce((n, r) => n + Number(r.calls), 0),
        String(sum(rs.map((r) => BigInt(r.input_tokens_sum)))),
        String(sum(rs.map((r) => BigInt(r.output_tokens_sum)))),
        String(sum(rs.map((r) => BigInt(r.cost_pico_usd)))),
      ]),
      expected.models.filter((m) => m.calls > 0).map((m) => [m.provider, m.model, m.calls, String(m.inputTokens), String(m.outputTokens), m.costPicoUsd]),
      view,
    );
    const whale = rows.filter((r) => r.model === expected.planted.whale.model);
    assert.ok(sum(whale.map((r) => BigInt(r.cost_pico_usd))) > 2n ** 64n, `${view}: the whale model passes 2^64 picodollars`);
  }
  // Hours are the start of a UTC hour.
  const hours = await readView<{ hour: string }>('spend_by_hour');
  assert.ok(hours.every((r) => /^\d{4}-\d{2}-\d{2} \d{2}:00:00$/.test(r.hour)), JSON.stringify(hours.map((r) => r.hour)));
});

test('spend_by_hour and spend_by_day: craze\'s counted usage reports, its session\'s provider, the unpriced ones counted', async () => {
  const counted = CRAZE_REPORTS.filter((r) => r.report === 1);
  const want = [CRAZE.provider, CRAZE.model, counted.length, String(counted.reduce((n, r) => n + r.input, 0)), String(counted.reduce((n, r) => n + r.output, 0)), String(sum(counted.map((r) => r.costPico))), counted.filter((r) => r.unpriced === 1).length];
  const craze = (r: SpendRow): unknown[] => [r.provider, r.model, Number(r.calls), r.input_tokens_sum, r.output_tokens_sum, r.cost_pico_usd, Number(r.unpriced_calls)];
  const byHour = (await readView<SpendRow & { hour: string }>('spend_by_hour')).filter((r) => r.source === 'craze');
  assert.deepEqual(byHour.map((r) => [r.hour, ...craze(r)]), [['2026-12-01 00:00:00', ...want]]);
  const byDay = (await readView<SpendRow & { day: string }>('spend_by_day')).filter((r) => r.source === 'craze');
  assert.deepEqual(byDay.map((r) => [r.day, ...craze(r)]), [['2026-12-01', ...want]]);
});

test('spend_by_loop_name: per LoopStarted name its loops and their counted model spend', async () => {
  const rows = await readView<{ name: string; loops: string; calls: string; input_tokens_sum: string; output_tokens_sum: string; cost_pico_usd: string }>('spend_by_loop_name');
  const want = new Map<string, { loops: number; calls: number; input: number; output: number; cost: bigint }>();
  for (const l of expected.loops) {
    const w = want.get(l.name) ?? { loops: 0, calls: 0, input: 0, output: 0, cost: 0n };
    want.set(l.name, { loops: w.loops + 1, calls: w.calls + l.modelCalls, input: w.input + l.inputTokens, output: w.output + l.outputTokens, cost: w.cost + BigInt(l.modelCostPicoUsd) });
  }
  assert.deepEqual(
    rows.map((r) => [r.name, Number(r.loops), Number(r.calls), r.input_tokens_sum, r.output_tokens_sum, r.cost_pico_usd]).sort(),
    sortedEntries(want).map(([name, w]) => [name, w.loops, w.calls, String(w.input), String(w.output), String(w.cost)]).sort(),
  );
});

test('subagent_outcomes: SubAgentCompleted per definition and outcome, a fork\'s replays aside', async () => {
  const rows = await readView<{ definition: string; outcome: string; subagents: string }>('subagent_outcomes');
  const want = countBy(ownEnvelopes().flatMap((e) => (e.body?.kind === 'SubAgentCompleted' ? [`${e.body.definition}\n${e.body.outcome_kind}`] : [])));
  assert.ok([...want.keys()].some((k) => !k.endsWith('\nCompleted')), 'some sub-agents fail');
  assert.deepEqual(
    rows.map((r) => [`${r.definition}\n${r.outcome}`, Number(r.subagents)]).sort(),
    sortedEntries(want).sort(),
  );
});

test('tool_error_rates: ToolCalled per tool, those with is_error and their share, a fork\'s replays aside', async () => {
  const rows = await readView<{ tool: string; calls: string; errors: string; error_share: number }>('tool_error_rates');
  const tools = ownEnvelopes().flatMap((e) => (e.body?.kind === 'ToolCalled' ? [e.body] : []));
  const calls = countBy(tools.map((t) => t.tool));
  const errors = countBy(tools.filter((t) => t.is_error).map((t) => t.tool));
  assert.ok(errors.size > 0, 'some tool calls fail');
  assert.deepEqual(
    rows.map((r) => [r.tool, Number(r.calls), Number(r.errors), r.error_share]).sort(),
    sortedEntries(calls).map(([tool, n]) => [tool, n, errors.get(tool) ?? 0, (errors.get(tool) ?? 0) / n]).sort(),
  );
});

test('convergence_warnings: per detector and UTC day, warnings and distinct loops, a fork\'s replays aside', async () => {
  const rows = await readView<{ detector: string; day: string; warnings: string; loops: string }>('convergence_warnings');
  const warned = ownEnvelopes().flatMap((e) => (e.body?.kind === 'ConvergenceWarning' ? [{ key: `${e.body.detector}\n${new Date(e.time.seconds * 1000).toISOString().slice(0, 10)}`, loopId: e.loopId }] : []));
  assert.ok(warned.length > 0, 'the traffic has convergence warnings');
  const loops = new Map<string, Set<string>>();
  for (const w of warned) loops.set(w.key, (loops.get(w.key) ?? new Set()).add(w.loopId));
  assert.deepEqual(
    rows.map((r) => [`${r.detector}\n${r.day}`, Number(r.warnings), Number(r.loops)]).sort(),
    sortedEntries(countBy(warned.map((w) => w.key))).map(([key, n]) => [key, n, loops.get(key)!.size]).sort(),
  );
});

test('unverified_spend: the tampered call and the second version, per loop with their verdicts and uncounted cost', async () => {
  const rows = await readView<{ loop_id: string; verdict: string; calls: string; cost_pico_usd: string }>('unverified_spend');
  const verdictOf = new Map(expected.violations.map((v) => [v.loopId, v.verdict]));
  const want = expected.loops
    .filter((l) => l.unverifiedModelCalls > 0)
    .map((l) => [l.loopId, verdictOf.get(l.loopId), l.unverifiedModelCalls, l.unverifiedModelCostPicoUsd]);
  assert.deepEqual(want.map(([, verdict]) => verdict).sort(), ['fork', 'mismatch']);
  assert.deepEqual(rows.map((r) => [r.loop_id, r.verdict, Number(r.calls), r.cost_pico_usd]).sort(), want.sort());
});

test('spend_hourly_now, before any rollup sweep, answers every hour live: spend_by_hour per hour, source, provider and model', async () => {
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    // Exact on 18.16 too, whose Decimal128 text breaks from about 10^21: as two parts under 10^20.
    const e18 = "toDecimal128('1000000000000000000', 0)";
    const split = (x: string): string => `toString(intDiv(${x}, ${e18})) AS ${x}_hi, toString(${x} - intDiv(${x}, ${e18}) * ${e18}) AS ${x}_lo`;
    const sums = ['calls', 'input', 'output', 'cost', 'unpriced'];
    const now = await ch
      .query({
        query: `SELECT toString(hour) AS h, source, provider, model, ${sums.map(split).join(', ')}
                FROM (SELECT hour, source, provider, model, toDecimal128(sum(calls_sum), 0) AS calls, sum(input_tokens_sum) AS input,
                             sum(output_tokens_sum) AS output, sum(cost_pico_sum) AS cost, toDecimal128(sum(unpriced_calls_sum), 0) AS unpriced
                      FROM spend_hourly_now GROUP BY hour, source, provider, model)`,
        format: 'JSONEachRow',
        clickhouse_settings: { readonly: '1' },
      })
      .then((r) => r.json<Record<string, string>>());
    const live = await ch
      .query({
        query: 'SELECT toString(hour) AS h, source, provider, model, toString(calls) AS n, input_tokens_sum, output_tokens_sum, cost_pico_usd, toString(unpriced_calls) AS u FROM spend_by_hour',
        format: 'JSONEachRow',
      })
      .then((r) => r.json<Record<string, string>>());
    const joined = (r: Record<string, string>, x: string): string => (BigInt(r[`${x}_hi`]!) * 10n ** 18n + BigInt(r[`${x}_lo`]!)).toString();
    assert.ok(live.some((r) => r['source'] === 'craze') && live.some((r) => r['source'] === 'runtime'), 'both sources in the traffic');
    assert.deepEqual(
      now.map((r) => [r['h'], r['source'], r['provider'], r['model'], ...sums.map((x) => joined(r, x))].join(' ')).sort(),
      live.map((r) => [r['h'], r['source'], r['provider'], r['model'], r['n'], r['input_tokens_sum'], r['output_tokens_sum'], r['cost_pico_usd'], r['u']].join(' ')).sort(),
    );
  } finally {
    await ch.close();
  }
});

test('every view reads under readonly=1, and readonly=1 refuses a write in the same database', async () => {
  for (const view of VIEWS) assert.ok((await readView(view)).length > 0, `${view} is empty`);
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    await assert.rejects(
      ch.command({ query: "INSERT INTO envelopes_probe (loop_id) VALUES ('x')", clickhouse_settings: { readonly: '1' } }),
      /readonly|164/i,
    );
  } finally {
    await ch.close();
  }
});
