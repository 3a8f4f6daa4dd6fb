/**
 * Every query of the Grafana dashboard (infra/grafana/dashboards/agentledger.json,
 * docs/dashboards.md "Grafana") run on this stack's ClickHouse as the plugin would send
 * it: its macros expanded by test/support/grafana-macros.ts for a time range
 * around the stored traffic, read with readonly=1 (the dashboard user's
 * profile). Generated spend traffic (a tampered call and a second version
 * among it: chain violations and unverified spend; sub-agents that fail;
 * convergence warnings) goes through Kafka and `ingest`, `rollups rebuild`
 * fills the rollups, and two alert transitions are stored, so every panel has
 * rows to show. The exact money columns must equal the live views' sums to
 * the picodollar. Grafana itself is not run (it cannot be installed here).
 *
 * The dashboard user is confined to the real `agentledger` database, so this
 * file's own database is read by the test user under the same readonly=1;
 * the last test migrates the real database as the migrator (the one change
 * it makes there, as least-privilege.test.ts does) and runs every panel on it
 * as agentledger_dashboard, proving that user may read all they read.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { generateSpendTraffic } from '../../src/demo/traffic/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { clickhouseErrorCode } from '../../src/clickhouse/errors.js';
import { migrate } from '../../src/migrate/migrate.js';
import { command, query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { panelQueries, readDashboard, type PanelQuery } from '../support/grafana-dashboard.js';
import { expandMacros, type MacroContext } from '../support/grafana-macros.js';
import { runCli } from '../support/processes.js';

const log = createLogger('error');
let ctx: TestContext;
let range: MacroContext;
const queries = panelQueries(readDashboard());
const traffic = generateSpendTraffic({ seed: 3, roots: 4 });
const byTitle = (title: string): PanelQuery => {
  const q = queries.find((x) => x.panel.title === title);
  assert.ok(q, `a panel "${title}"`);
  return q;
};

before(async () => {
  ctx = await testContext('grafana_dashboard');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  await produceEnvelopes(ctx, traffic.records);
  const ingest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], ctx.env);
  assert.equal(await ingest.exited, 0, ingest.stderr());
  const rebuild = runCli(['rollups', 'rebuild'], ctx.env);
  assert.equal(await rebuild.exited, 0, rebuild.stderr());
  const [span] = await query<{ lo: string; hi: string }>(ctx, 'SELECT toUInt32(min(time)) AS lo, toUInt32(max(time)) AS hi FROM envelopes');
  const lo = Number(span?.lo);
  const hi = Number(span?.hi);
  assert.ok(lo > 0 && hi >= lo);
  // An hour either side, so the range starts and ends inside hours (as a real one does).
  range = { from: lo - 3600 + 17, to: hi + 3600 - 17, intervalSeconds: 1800 };
  // A firing stuck loop and a firing chain alert, fired inside the range; a resolved one.
  const at = (lo + 600) * 1000;
  const alert = (rule: string, subject: string, key: string, state: string, notification: string, severity: string, resolvedAt: number): string =>
    `('${rule}', '${subject}', '${key}', '${notification}', '${state}', '${severity}', ${at}, ${resolvedAt}, ${resolvedAt || at}, 1, 'planted by grafana-dashboard.test', now())`;
  await command(
    ctx,
    `INSERT INTO alerts (rule, subject, transition_key, notification, state, severity, fired_at_ms, resolved_at_ms, at_ms, notifications, detail, recorded_at) VALUES ${[
      alert('stuck_loop', 'loop-stuck-1', 'k1', 'firing', 'fired', 'critical', 0),
      alert('chain_integrity', 'loop-tampered-1', 'k2', 'firing', 'fired', 'critical', 0),
      alert('convergence', 'loop-warned-1', 'k3', 'firing', 'fired', 'warning', 0),
      alert('convergence', 'loop-warned-1', 'k4', 'resolved', 'resolved', 'warning', at + 60_000),
    ].join(', ')}`,
  );
});
after(async () => {
  await ctx?.cleanup();
});

/** A panel's SQL as the plugin sends it, read as the dashboard reads it (readonly=1). */
async function run(sql: string): Promise<Record<string, unknown>[]> {
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    return await ch.query({ query: expandMacros(sql, range), format: 'JSONEachRow', clickhouse_settings: { readonly: '1' } }).then((r) => r.json<Record<string, unknown>>());
  } finally {
    await ch.close();
  }
}

/** Exact USD text (`123.000000000045`) to picodollars. */
function pico(usd: unknown): bigint {
  const m = /^(-?)(\d+)\.(\d{12})$/.exec(String(usd));
  assert.ok(m, `exact USD text with 12 decimals: ${JSON.stringify(usd)}`);
  const v = BigInt(m[2]! + m[3]!);
  return m[1] === '-' ? -v : v;
}
const sum = (xs: bigint[]): bigint => xs.reduce((a, b) => a + b, 0n);

test('the traffic plants what the panels show', () => {
  assert.ok(traffic.expected.planted.tampered.length > 0 && traffic.expected.planted.secondVersions.length > 0);
  assert.ok(queries.length >= 10);
});

test('every panel query runs on this ClickHouse with readonly=1 and shows something for the range', async () => {
  for (const q of queries) {
    let rows: Record<string, unknown>[];
    try {
      rows = await run(q.sql);
    } catch (e) {
      assert.fail(`${q.label} is refused: ${(e as Error).message}\n${expandMacros(q.sql, range)}`);
    }
    assert.ok(rows.length > 0, `${q.label}: no row`);
    // A stat of count() always has its row: some value must be other than zero or empty.
    const shows = rows.some((r) => Object.values(r).some((v) => v !== null && v !== '' && v !== 0 && v !== '0' && v !== '0.000000000000'));
    assert.ok(shows, `${q.label}: only zeros and empty values: ${JSON.stringify(rows.slice(0, 3))}`);
    if (q.target.format === 0) {
      // Time series: the first column is the bucket, inside the range's hours or days, ascending.
      const times = rows.map((r) => Date.parse(`${String(Object.values(r)[0]).replace(' ', 'T')}Z`) / 1000);
      assert.ok(times.every((t) => Number.isFinite(t)), `${q.label}: a time first: ${JSON.stringify(rows[0])}`);
      assert.deepEqual(times, [...times].sort((a, b) => a - b), `${q.label}: ascending time`);
      assert.ok(times.every((t) => t >= range.from - 86_400 && t <= range.to), `${q.label}: buckets inside the range`);
    }
  }
});

test('Top models: exact cost text equal to spend_by_hour\'s over the same hours, to the picodollar', async () => {
  const rows = await run(byTitle('Top models').sql);
  const [want] = await query<{ cost: string; models: string }>(
    ctx,
    `SELECT toString(sum(toDecimal128(cost_pico_usd, 0))) AS cost, uniqExact(source, provider, model) AS models FROM spend_by_hour WHERE hour >= toStartOfHour(toDateTime(${range.from})) AND hour <= toDateTime(${range.to})`,
  );
  assert.ok(Number(want?.models) <= 20, 'every model in the top 20');
  assert.equal(rows.length, Number(want?.models));
  assert.equal(String(sum(rows.map((r) => pico(r['cost_usd'])))), want?.cost);
  // A model past 2^64 picodollars stays exact.
  assert.ok(rows.some((r) => pico(r['cost_usd']) > 2n ** 64n), 'the whale model passes 2^64 picodollars');
  const usd = rows.map((r) => Number(r['usd']));
  assert.deepEqual(usd, [...usd].sort((a, b) => b - a), 'largest first');
});

test('Top roots: exact cost text equal to top_roots, root by root', async () => {
  const rows = await run(byTitle('Top roots').sql);
  const want = await query<{ source: string; root_loop_id: string; cost: string }>(
    ctx,
    `WITH toDecimal128('1000000000000000000', 0) AS e18
     SELECT source, root_loop_id,
            if(abs(cost_pico) < e18, toString(cost_pico - intDiv(cost_pico, e18) * e18),
               concat(toString(intDiv(cost_pico, e18)), substring(toString(abs(cost_pico - intDiv(cost_pico, e18) * e18) + e18), 2))) AS cost
     FROM top_roots ORDER BY source, root_loop_id`,
  );
  assert.ok(want.length > 0 && want.length <= 20);
  assert.deepEqual(
    rows.map((r) => [r['source'], r['root_loop_id'], String(pico(r['cost_usd']))]).sort(),
    want.map((r) => [r.source, r.root_loop_id, r.cost]).sort(),
  );
});

test('Spend not counted: exact cost text equal to unverified_spend; the headline spend equals the chart\'s sum', async () => {
  const rows = await run(byTitle('Spend not counted (unverified links)').sql);
  const want = await query<{ loop_id: string; verdict: string; cost_pico_usd: string }>(ctx, 'SELECT loop_id, verdict, cost_pico_usd FROM unverified_spend');
  assert.ok(want.length > 0, 'the tampered call and the second version are unverified spend');
  assert.deepEqual(rows.map((r) => [r['loop_id'], r['verdict'], String(pico(r['cost_usd']))]).sort(), want.map((r) => [r.loop_id, r.verdict, r.cost_pico_usd]).sort());
  const [headline] = await run(byTitle('Spend (USD)').sql);
  const chart = await run(byTitle('Spend over time by model (USD)').sql);
  const total = chart.reduce((n, r) => n + Number(r['usd']), 0);
  assert.ok(Math.abs(Number(headline?.['spend_usd']) - total) <= 1e-6 * total, `${String(headline?.['spend_usd'])} vs ${total}`);
});

test('alerts, violations, sub-agents: the panels count what is stored', async () => {
  const [firing] = await run(byTitle('Firing alerts').sql.replace(/\n/g, ' ').replace(/^SELECT .*? FROM/, 'SELECT count() AS n FROM').replace(/ ORDER BY .*$/, ''));
  assert.equal(Number(firing?.['n']), 2, 'the stuck loop and the chain alert (the convergence one resolved)');
  const stuck = await run(byTitle('Stuck and stalled loops').sql);
  assert.deepEqual(stuck.map((r) => r['loop_id']), ['loop-stuck-1']);
  const [violations] = await run(byTitle('Latest chain violations').sql.replace(/^SELECT .*$/m, 'SELECT count() AS n').replace(/\n(ORDER BY|LIMIT) .*/g, ''));
  const [stored] = await query<{ n: string }>(ctx, 'SELECT count() AS n FROM chain_violations');
  assert.ok(Number(stored?.n) > 0);
  assert.equal(Number(violations?.['n']), Number(stored?.n));
  const [stat] = await run(byTitle('Chain violations').sql);
  assert.equal(Number(stat?.['violations']), Number(stored?.n));
  const rates = await run(byTitle('Sub-agent failure rate by definition').sql);
  const outcomes = await query<{ definition: string; n: string; failed: string }>(ctx, "SELECT definition, sum(subagents) AS n, sumIf(subagents, outcome != 'Completed') AS failed FROM subagent_outcomes GROUP BY definition");
  assert.deepEqual(
    rates.map((r) => [r['definition'], Number(r['outcomes']), Number(r['failures'])]).sort(),
    outcomes.map((r) => [r.definition, Number(r.n), Number(r.failed)]).sort(),
  );
});

test('the check can fail: a panel bucketed by $__timeInterval (toStartOfInterval) is refused on 18.16', async (t) => {
  const [v] = await query<{ v: string }>(ctx, 'SELECT version() AS v');
  if (!String(v?.v).startsWith('18.')) {
    t.skip(`ClickHouse ${v?.v} has toStartOfInterval`);
    return;
  }
  const bad = 'SELECT $__timeInterval(hour) AS time, sum(calls_sum) AS calls FROM spend_hourly_now WHERE $__timeFilter(hour) GROUP BY time ORDER BY time';
  await assert.rejects(run(bad), (e: unknown) => clickhouseErrorCode(e) === 46, 'UNKNOWN_FUNCTION');
});

test('max_execution_time, which the plugin\'s client sends with every query: allowed to agentledger_dashboard on the compose stack\'s ClickHouse, refused on 18.16', async (t) => {
  const who = ctx.services.deployment;
  const asDashboard = (settings: Record<string, number>) =>
    createClient({
      url: ctx.services.clickhouseUrl,
      username: who.dashboard.user,
      password: who.dashboard.password,
      database: who.database,
      compression: { request: false, response: false },
      clickhouse_settings: settings,
      log: { level: ClickHouseLogLevel.OFF },
    });
  const select1 = async (settings: Record<string, number>): Promise<unknown> => {
    const ch = asDashboard(settings);
    try {
      return await ch.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow' }).then((r) => r.json());
    } finally {
      await ch.close();
    }
  };
  const [v] = await query<{ v: string }>(ctx, 'SELECT version() AS v');
  if (String(v?.v).startsWith('18.')) {
    // No settings constraints there: Grafana needs the Docker stack (infra/clickhouse/docker-dashboard-settings.xml).
    await assert.rejects(select1({ max_execution_time: 65 }), (e: unknown) => clickhouseErrorCode(e) === 164, 'READONLY on 18.16');
    return;
  }
  if (ctx.services.kind !== 'containers') {
    t.skip(`ClickHouse ${v?.v} is not the compose stack's (its users files may differ)`);
    return;
  }
  // The plugin's query timeout (60 s) plus its client's few seconds, and the constraint's bound.
  assert.deepEqual(await select1({ max_execution_time: 65 }), [{ one: 1 }]);
  await assert.rejects(select1({ max_execution_time: 601 }), 'above the constraint\'s max');
  await assert.rejects(select1({ max_result_rows: 10 }), 'any other setting stays refused');
});

test('every panel query runs as agentledger_dashboard on the deployment\'s database', { timeout: 120_000 }, async () => {
  const who = ctx.services.deployment;
  // Migrated as the migrator, as least-privilege.test.ts does: the one change made to that database.
  const migrated = runCli(['migrate'], {
    ...ctx.env,
    AGENTLEDGER_CLICKHOUSE_USER: who.writer.user,
    AGENTLEDGER_CLICKHOUSE_PASSWORD: who.writer.password,
    AGENTLEDGER_CLICKHOUSE_DATABASE: who.database,
    AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER: who.migrator.user,
    AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD: who.migrator.password,
  });
  // A failed migration is a failure, never a skip: a database migrated further by another checkout is refused
  // by this one's runner, and then the panels were not checked (drop it, or run this checkout on its own stack).
  assert.equal(await migrated.exited, 0, `migrate of ${who.database} failed: ${migrated.stderr().trim().split('\n').pop() ?? ''}`);
  const ch = createClient({
    url: ctx.services.clickhouseUrl,
    username: who.dashboard.user,
    password: who.dashboard.password,
    database: who.database,
    compression: { request: false, response: false },
    log: { level: ClickHouseLogLevel.OFF },
  });
  try {
    const needed = ['spend_hourly_now', 'spend_rollup_root_hourly', 'alerts_current', 'alerts', 'chain_violations_now', 'unverified_spend_now', 'subagent_outcomes_daily', 'convergence_warnings_daily', 'tool_errors_hourly'];
    const present = await ch
      .query({ query: `SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN (${needed.map((n) => `'${n}'`).join(', ')})`, format: 'JSONEachRow' })
      .then((r) => r.json<{ name: string }>())
      .catch(() => null);
    assert.ok(present !== null && present.length === needed.length, `the ${who.database} database is not migrated as far as the panels need (${present?.length ?? 'unreadable'} of ${needed.length} relations)`);
    for (const q of queries) {
      await ch.query({ query: expandMacros(q.sql, range), format: 'JSONEachRow' }).then((r) => r.json()).catch((e: unknown) => assert.fail(`${q.label} as ${who.dashboard.user}: ${(e as Error).message}`));
    }
  } finally {
    await ch.close();
  }
});
