/**
 * agentledger in Prometheus's own tools: every metric it serves passes
 * `promtool check metrics`, the alerting rules of infra/prometheus/ pass
 * `promtool check rules` and their unit tests (`promtool test rules`: each
 * rule fires on series written for it, not on its near miss), the example
 * and compose configurations pass `promtool check config`, and every rule has a severity
 * and a runbook that exists in docs/operations.md. promtool comes with
 * Debian's `prometheus` package, which `infra/stack.sh install` installs.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createMetrics, createServeMetrics, createWorkerMetrics } from '../../src/observability/metrics.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RULES = `${ROOT}infra/prometheus/agentledger-rules.yml`;

/** promtool's exit status and output; fails the test with what to install when it is missing. */
function promtool(args: readonly string[], input?: string): { status: number | null; out: string } {
  const run = spawnSync('promtool', args, { cwd: `${ROOT}infra/prometheus`, input, encoding: 'utf8' });
  if (run.error) assert.fail(`promtool could not run (${run.error.message}): bash infra/stack.sh install puts it in place (Debian's prometheus package)`);
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

test('every metric of ingest, worker and serve passes promtool check metrics (no gauge named *_total)', async () => {
  const ingest = createMetrics();
  ingest.records.inc({ stream: 'envelopes', verdict: 'ok' });
  const worker = createWorkerMetrics({ firing: () => Promise.resolve(new Map([['stuck_loop', 1]])), queues: () => Promise.resolve(new Map([['rollups', { waiting: 1 }]])) });
  worker.jobs.inc({ job: 'rollup-sweep', result: 'done' });
  worker.lastDone.setToCurrentTime({ job: 'rollup-sweep' });
  const serve = createServeMetrics();
  serve.requests.inc({ endpoint: '/api/spend', status: '200' });
  serve.requestSeconds.observe({ endpoint: '/api/spend' }, 0.02);
  for (const [name, registry] of [
    ['ingest', ingest.registry],
    ['worker', worker.registry],
    ['serve', serve.registry],
  ] as const) {
    const text = await registry.metrics();
    assert.match(text, /_nodejs_active_handles /, `${name}: the per-type default gauges stay`);
    const checked = promtool(['check', 'metrics'], text);
    assert.equal(checked.out.trim(), '', `${name}: promtool has nothing to say`);
    assert.equal(checked.status, 0, `${name}: ${checked.out}`);
  }
});

test('the alerting rules pass promtool check rules and their unit tests; the example and compose configurations are valid', () => {
  const rules = promtool(['check', 'rules', RULES]);
  assert.equal(rules.status, 0, rules.out);
  assert.match(rules.out, /SUCCESS: 10 rules found/);
  const tested = promtool(['test', 'rules', 'agentledger-rules.test.yml']);
  assert.equal(tested.status, 0, tested.out);
  assert.match(tested.out, /SUCCESS/);
  for (const file of ['prometheus.yml', 'prometheus.compose.yml']) {
    const config = promtool(['check', 'config', file]);
    assert.equal(config.status, 0, `${file}: ${config.out}`);
  }
});

test('every rule has a severity, a summary, a unit test, and a runbook in docs/operations.md', () => {
  const text = readFileSync(RULES, 'utf8');
  const tests = readFileSync(`${ROOT}infra/prometheus/agentledger-rules.test.yml`, 'utf8');
  // GitHub's anchors: the heading lowercased, spaces to dashes, other punctuation dropped.
  const anchors = new Set(
    readFileSync(`${ROOT}docs/operations.md`, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('#'))
      .map((l) => l.replace(/^#+\s*/, '').toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')),
  );
  const alerts = text.split(/\n\s+- alert: /).slice(1);
  assert.equal(alerts.length, 10);
  for (const alert of alerts) {
    const name = alert.split('\n')[0]!.trim();
    assert.match(alert, /\n\s+severity: (critical|warning)\n/, `${name}: a severity`);
    assert.match(alert, /\n\s+summary: "/, `${name}: a summary`);
    const runbook = /runbook_url: "docs\/operations\.md#([a-z0-9-]+)"/.exec(alert)?.[1];
    assert.ok(runbook !== undefined, `${name}: a runbook in docs/operations.md`);
    assert.ok(anchors.has(runbook), `${name}: docs/operations.md has no heading for #${runbook}`);
    assert.ok(tests.includes(`alertname: ${name}\n`), `${name}: a unit test in agentledger-rules.test.yml`);
  }
});
