/**
 * agentledger watched by a real Prometheus: the stack's own (infra/stack.sh
 * `prometheus`, Debian's 2.42, scraping and evaluating every second, with
 * infra/prometheus/agentledger-rules.yml loaded as it is) scrapes real
 * `ingest`, `worker` and `serve` processes of this file, named in file_sd
 * files (test/support/prometheus.ts). Through Prometheus's HTTP API:
 *
 * - the three targets are up, and what each serves passes `promtool check
 *   metrics`;
 * - a rule fires for real: an undecodable record goes to the dead-letter
 *   topic, and AgentledgerDeadLetters (no `for:`) fires for this ingest and
 *   topic. The counter starts at 0 (src/cli/ingest.ts): born at 1 by its
 *   first dead letter, increase() would never see it, and this test would
 *   wait in vain;
 * - every query of the operations dashboard
 *   (infra/grafana/dashboards/agentledger-operations.json), its Grafana
 *   variables expanded, is answered without error and returns series.
 *
 * AgentledgerIngestNotProgressing (ClickHouse held while records wait) is not
 * provoked here: its expression waits for 120 s without progress, and the
 * rules file is loaded unchanged; ingest-stall.test.ts holds ClickHouse and
 * watches the gauge it reads.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { generateSpendTraffic } from '../../src/demo/traffic/index.js';
import { migrate } from '../../src/migrate/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import { closedPort } from '../support/cli-run.js';
import { testContext, type TestContext } from '../support/context.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { allPanels, OPERATIONS_FILE, readDashboard } from '../support/grafana-dashboard.js';
import { runCli, until, type Running } from '../support/processes.js';
import { ensurePrometheus, expandPromVariables, instantQuery, promApi, scrapeTarget, type ScrapeJob } from '../support/prometheus.js';
import { startServe, type Served } from '../support/serve.js';

const WAIT_MS = 60_000;
let ctx: TestContext;
let serve: Served;
const processes: Running[] = [];
const removals: (() => void)[] = [];
/** Each job's scraped address. */
const address = new Map<ScrapeJob, string>();

before(async () => {
  await ensurePrometheus();
  ctx = await testContext('prometheus_scrape');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, createLogger('error'));
  await produceEnvelopes(ctx, generateSpendTraffic({ seed: 5, roots: 3 }).records);
  const [ingestPort, workerPort, servePort] = [await closedPort(), await closedPort(), await closedPort()];
  processes.push(runCli(['ingest', '--no-migrate'], { ...ctx.env, AGENTLEDGER_METRICS_PORT: String(ingestPort) }));
  processes.push(
    runCli(['worker'], { ...ctx.env, AGENTLEDGER_WORKER_METRICS_PORT: String(workerPort), AGENTLEDGER_ROLLUP_SWEEP_MS: '1000', AGENTLEDGER_ALERT_SWEEP_MS: '1000' }),
  );
  serve = await startServe(ctx.env, { AGENTLEDGER_SERVE_METRICS_PORT: String(servePort) });
  processes.push(serve.running);
  for (const [job, port] of [
    ['ingest', ingestPort],
    ['worker', workerPort],
    ['serve', servePort],
  ] as const) {
    address.set(job, `127.0.0.1:${port}`);
    removals.push(await scrapeTarget(job, ctx.id, `127.0.0.1:${port}`));
  }
});

after(async () => {
  for (const remove of removals) remove();
  for (const p of processes) p.child.kill('SIGTERM');
  await Promise.all(processes.map((p) => p.exited));
  await ctx?.cleanup();
});

interface Target {
  readonly labels: Readonly<Record<string, string>>;
  readonly health: string;
  readonly lastError: string;
}

test('Prometheus scrapes ingest, worker and serve: all three up, and what each serves passes promtool check metrics', { timeout: 120_000 }, async () => {
  const up = await until('the three targets of this file up in /api/v1/targets', WAIT_MS, async () => {
    const { activeTargets } = await promApi<{ activeTargets: Target[] }>('/api/v1/targets', { state: 'active' });
    const ours = activeTargets.filter((t) => t.labels['test'] === ctx.id);
    return ours.length === 3 && ours.every((t) => t.health === 'up') ? ours : undefined;
  }, processes);
  assert.deepEqual(up.map((t) => t.labels['job']).sort(), ['agentledger-ingest', 'agentledger-serve', 'agentledger-worker']);
  for (const t of up) assert.equal(t.labels['instance'], address.get(t.labels['job']!.replace('agentledger-', '') as ScrapeJob));
  for (const [job, where] of address) {
    const text = await fetch(`http://${where}/metrics`).then((r) => r.text());
    assert.match(text, /_process_resident_memory_bytes /, `${job}: prom-client's defaults`);
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    assert.equal(checked.error, undefined, 'promtool runs (bash infra/stack.sh install)');
    assert.equal(`${checked.stdout}${checked.stderr}`.trim(), '', `${job}: promtool has nothing to say`);
    assert.equal(checked.status, 0, job);
  }
});

/**
 * A panel's PromQL narrowed to this file's processes (their `test` label;
 * ALERTS by this ingest's instance), so that series a former run left in
 * Prometheus's range cannot answer for a panel.
 */
function scoped(expr: string): string {
  const narrowed = expr.replace(/\b(agentledger_[a-z0-9_]+|up)\b(\{[^}]*\})?/g, (_m, name: string, selector: string | undefined) =>
    selector ? `${name}{test="${ctx.id}", ${selector.slice(1)}` : `${name}{test="${ctx.id}"}`,
  );
  return narrowed.replace(/\bALERTS\{/g, `ALERTS{instance="${address.get('ingest')}", `);
}

interface Alert {
  readonly labels: Readonly<Record<string, string>>;
  readonly state: string;
}

test('an undecodable record goes to the dead-letter topic, and AgentledgerDeadLetters fires for this ingest and topic', { timeout: 120_000 }, async () => {
  const topic = ctx.config.kafka.topics.envelopes;
  const ours = (a: Alert): boolean => a.labels['alertname'] === 'AgentledgerDeadLetters' && a.labels['instance'] === address.get('ingest');
  // The counter at 0 is in Prometheus before the dead letter exists…
  await until('agentledger_dead_letters_total at 0 scraped', WAIT_MS, async () => {
    const got = await instantQuery(`agentledger_dead_letters_total{test="${ctx.id}", topic="${topic}"}`);
    return got.length === 1 && got[0]!.value[1] === '0' ? true : undefined;
  }, processes);
  const before = await promApi<{ alerts: Alert[] }>('/api/v1/alerts');
  assert.equal(before.alerts.filter(ours).length, 0, 'nothing dead-lettered, nothing fires');
  // …then a record that is not JSON.
  await produceEnvelopes(ctx, [{ key: 'not-json', value: Buffer.from('{"LoopID": "not-json", ') }]);
  const fired = await until('AgentledgerDeadLetters firing for this ingest', WAIT_MS, async () => {
    const { alerts } = await promApi<{ alerts: Alert[] }>('/api/v1/alerts');
    return alerts.find((a) => ours(a) && a.state === 'firing');
  }, processes);
  assert.equal(fired.labels['topic'], topic);
  assert.equal(fired.labels['job'], 'agentledger-ingest');
  assert.equal(fired.labels['severity'], 'warning');
});

test('every query of the operations dashboard is answered by Prometheus and returns series once the processes have run', { timeout: 180_000 }, async () => {
  // Requests for serve's panels, and a sweep of each kind done for the worker's.
  for (const path of ['/api/spend', '/api/overview', '/api/no-such-endpoint']) await fetch(`${serve.origin}${path}`).then((r) => r.arrayBuffer());
  await until('a rollup sweep and an alert sweep scraped as done', WAIT_MS, async () => {
    const got = await instantQuery(`agentledger_worker_job_last_done_timestamp_seconds{test="${ctx.id}", exported_job=~"rollup-sweep|alert-sweep"}`);
    return got.length === 2 ? true : undefined;
  }, processes);
  const dashboard = readDashboard(OPERATIONS_FILE);
  const queries = allPanels(dashboard).flatMap((p) => (p.targets ?? []).map((t) => ({ label: `panel ${p.id} "${p.title}" ${t.refId}`, expr: t.expr ?? '' })));
  assert.ok(queries.length >= 15, `the dashboard's queries: ${queries.length}`);
  // As Grafana sends them for the default range (6 h, about 1,000 points) on a 1 s scrape.
  const variables = { intervalSeconds: 20, scrapeSeconds: 1, rangeSeconds: 6 * 3600 };
  for (const q of queries) {
    const expr = scoped(expandPromVariables(q.expr, variables));
    // An error fails at once (promApi); an empty answer is waited on: a rate needs two scrapes.
    const got = await until(`${q.label} returns series: ${expr}`, WAIT_MS, async () => {
      const result = await instantQuery(expr);
      return result.length > 0 ? result : undefined;
    }, processes);
    assert.ok(got.length > 0, q.label);
  }
  // serve's endpoint label is a bounded set: a path it does not serve is `other`.
  const requests = await instantQuery(`agentledger_serve_requests_total{test="${ctx.id}"}`);
  const seen = new Set(requests.map((r) => `${r.metric['endpoint']} ${r.metric['status']}`));
  for (const want of ['/api/spend 200', '/api/overview 200', 'other 404']) assert.ok(seen.has(want), `${want} among ${[...seen].join(', ')}`);
  assert.ok(![...seen].some((s) => s.includes('no-such-endpoint')), 'an unknown path adds no series');
});
