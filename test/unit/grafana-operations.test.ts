/**
 * The operations dashboard (infra/grafana/dashboards/agentledger-operations.json)
 * and its Prometheus data source, checked without a Grafana: the dashboard's
 * structure, that every panel reads the provisioned Prometheus by its uid,
 * that every metric a query names is one agentledger serves (the worker's
 * `job` label read as `exported_job`), that the data source's scrape interval
 * is the compose Prometheus's, and that docker-compose.yml runs Prometheus and
 * Alertmanager with the files it names. The queries themselves are evaluated
 * by a real Prometheus in test/integration/prometheus-scrape.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createMetrics, createServeMetrics, createWorkerMetrics } from '../../src/observability/metrics.js';
import { allPanels, OPERATIONS_FILE, PROMETHEUS_DATASOURCE_FILE, readCommentedJson, readDashboard } from '../support/grafana-dashboard.js';
import { expandPromVariables } from '../support/prometheus.js';
import { REPO_ROOT } from '../support/services.js';

interface DataSourceFile {
  apiVersion?: number;
  datasources?: { uid?: string; type?: string; url?: string; isDefault?: boolean; jsonData?: Record<string, unknown> }[];
}

const dashboard = readDashboard(OPERATIONS_FILE);
const datasources = readCommentedJson(PROMETHEUS_DATASOURCE_FILE) as DataSourceFile;
const source = datasources.datasources?.[0];
const panels = allPanels(dashboard).filter((p) => p.type !== 'row');
const queries = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ label: `panel ${p.id} "${p.title}" ${t.refId}`, expr: t.expr ?? '', target: t, panel: p })));

/** A service block of docker-compose.yml (plain block YAML), its lines. */
function composeService(name: string): string[] {
  const lines = readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8').split('\n');
  const start = lines.indexOf(`  ${name}:`);
  assert.ok(start >= 0, `docker-compose.yml has a ${name} service`);
  const end = lines.findIndex((l, i) => i > start && /^ {0,2}\S/.test(l));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

test('the operations dashboard: a uid of its own, a title, a time range, unique panel ids, on the grid without overlap', () => {
  assert.match(dashboard.uid ?? '', /^[A-Za-z0-9_-]{1,40}$/);
  assert.notEqual(dashboard.uid, readDashboard().uid, 'not the spend dashboard\'s uid');
  assert.ok(dashboard.title && dashboard.time?.from && dashboard.time.to);
  const all = allPanels(dashboard);
  const ids = all.map((p) => p.id);
  assert.ok(ids.every((id) => Number.isInteger(id) && id! > 0));
  assert.equal(new Set(ids).size, ids.length, `panel ids are unique: ${JSON.stringify(ids)}`);
  const boxes = all.map((p) => ({ id: p.id, ...p.gridPos! }));
  for (const [i, a] of boxes.entries()) {
    assert.ok(a.w > 0 && a.h > 0 && a.x >= 0 && a.x + a.w <= 24 && a.y >= 0, `panel ${a.id} fits the grid`);
    for (const b of boxes.slice(i + 1)) assert.ok(a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y, `panels ${a.id} and ${b.id} overlap`);
  }
});

test('every panel and query reads the provisioned Prometheus by its uid; every query is PromQL with only variables the checks expand', () => {
  assert.equal(datasources.apiVersion, 1);
  assert.equal(source?.type, 'prometheus');
  const want = { type: 'prometheus', uid: source.uid };
  assert.ok(panels.length >= 12);
  for (const p of panels) {
    assert.deepEqual(p.datasource, want, `panel ${p.id} "${p.title}"`);
    assert.ok((p.targets ?? []).length > 0, `panel ${p.id} has a query`);
    const refIds = (p.targets ?? []).map((t) => t.refId);
    assert.equal(new Set(refIds).size, refIds.length, `panel ${p.id}: refIds unique`);
  }
  for (const q of queries) {
    assert.deepEqual(q.target.datasource, want, q.label);
    assert.ok(q.expr.trim().length > 0, `${q.label}: a query`);
    assert.equal(q.target.rawSql, undefined, q.label);
    // A table shows the instant; a time series the range.
    assert.equal(q.target.instant === true, q.panel.type === 'table', `${q.label}: instant only in a table`);
    assert.doesNotThrow(() => expandPromVariables(q.expr, { intervalSeconds: 15, scrapeSeconds: 15, rangeSeconds: 3600 }), q.label);
  }
});

test('every metric a query names is one ingest, worker or serve serves; the worker\'s kind of job is selected as exported_job', async () => {
  const served = new Set<string>();
  const worker = createWorkerMetrics({ firing: () => Promise.resolve(new Map()), queues: () => Promise.resolve(new Map()) });
  for (const registry of [createMetrics().registry, worker.registry, createServeMetrics().registry]) {
    for (const m of await registry.getMetricsAsJSON()) served.add(m.name);
  }
  const named = new Set<string>();
  for (const q of queries) {
    for (const [name] of q.expr.matchAll(/\bagentledger_[a-z0-9_]+/g)) {
      const base = name.replace(/_(bucket|sum|count)$/, '');
      assert.ok(served.has(name) || served.has(base), `${q.label}: ${name} is not a metric agentledger serves`);
      named.add(base);
    }
    assert.doesNotMatch(q.expr, /[{,]\s*job\s*=~?\s*"(rollup|alert|deliver)/, `${q.label}: the worker's job label is exported_job once scraped`);
  }
  // What the operations dashboard is for (docs/operations.md "The operations dashboard").
  for (const metric of [
    'agentledger_records_total',
    'agentledger_consumer_lag',
    'agentledger_insert_seconds',
    'agentledger_insert_batch_rows',
    'agentledger_dead_letters_total',
    'agentledger_cache_hits_total',
    'agentledger_process_resident_memory_bytes',
    'agentledger_worker_process_resident_memory_bytes',
    'agentledger_serve_process_resident_memory_bytes',
    'agentledger_worker_job_seconds',
    'agentledger_worker_job_last_done_timestamp_seconds',
    'agentledger_alert_transitions_total',
    'agentledger_alert_deliveries_total',
  ]) {
    assert.ok(named.has(metric), `a panel reads ${metric}`);
  }
});

test('the Prometheus data source: the compose service, its scrape interval, not the default; docker-compose.yml runs Prometheus and Alertmanager with the files they name', () => {
  assert.equal(datasources.datasources?.length, 1);
  assert.equal(source?.url, 'http://prometheus:9090');
  assert.notEqual(source?.isDefault, true, 'the ClickHouse data source stays the default');
  const config = readFileSync(join(REPO_ROOT, 'infra', 'prometheus', 'prometheus.compose.yml'), 'utf8');
  assert.equal(source?.jsonData?.['timeInterval'], /\n\s+scrape_interval: (\S+)/.exec(config)?.[1], 'timeInterval is the compose scrape interval');
  const prometheus = composeService('prometheus');
  assert.ok(prometheus.some((l) => /^\s+image: prom\/prometheus:v\d+\.\d+\.\d+$/.test(l)), 'a pinned Prometheus image');
  for (const mount of ['./infra/prometheus/prometheus.compose.yml:/etc/prometheus/prometheus.yml:ro', './infra/prometheus/agentledger-rules.yml:/etc/prometheus/agentledger-rules.yml:ro']) {
    assert.ok(prometheus.includes(`      - ${mount}`), `prometheus mounts ${mount}`);
    assert.ok(existsSync(join(REPO_ROOT, mount.split(':')[0]!)), `${mount.split(':')[0]} exists`);
  }
  assert.match(config, /\n\s+- agentledger-rules\.yml\n/, 'the rules, next to the config in the container');
  assert.match(config, /targets: \['alertmanager:9093'\]/, 'alerts to the compose Alertmanager');
  const alertmanager = composeService('alertmanager');
  assert.ok(alertmanager.some((l) => /^\s+image: prom\/alertmanager:v\d+\.\d+\.\d+$/.test(l)), 'a pinned Alertmanager image');
  assert.ok(alertmanager.includes('      - ./infra/alertmanager/alertmanager.yml:/etc/alertmanager/alertmanager.yml:ro'));
  const grafana = composeService('grafana');
  assert.ok(grafana.includes('      prometheus:'), 'Grafana waits for Prometheus');
  assert.ok(grafana.includes('      - ./infra/grafana/dashboards:/etc/grafana/dashboards/agentledger:ro'), 'the dashboards folder, the operations dashboard in it');
});
