/**
 * Every query file (each src/<feature>/queries/) runs on the local cluster,
 * with its `-- param:` examples, as the writer sends it: through the
 * Distributed tables with the cluster's settings, a mutation ON CLUSTER on
 * its local tables (mutationSql). 18.16 refuses over a Distributed table
 * what it runs on one server: a subquery over another Distributed table
 * (code 288), an aggregate whose condition holds a scalar subquery (code 10),
 * a JOIN with a view, which a shard looks for in its default database (code
 * 60). test/modern does the same on current ClickHouse, on one server. Runs
 * only with AGENTLEDGER_TEST_CLUSTER=1.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { migrate } from '../../src/migrate/migrate.js';
import { clusterTarget, mutationSql } from '../../src/clickhouse/cluster.js';
import { queryFiles, queryPath, querySql } from '../support/query-files.js';
import { runToEnd } from '../support/cli-run.js';
import { testContext } from '../support/context.js';
import { CLUSTER_SKIP, clusterContexts } from '../support/cluster.js';
import { serveEnv, startServe } from '../support/serve.js';

const clusterContext = clusterContexts().make;

/** `-- param: NAME TYPE EXAMPLE` lines (TYPE may hold spaces inside parentheses), by name: type and example. */
function exampleParams(text: string): Map<string, { type: string; example: string }> {
  const params = new Map<string, { type: string; example: string }>();
  for (const [, rest] of text.matchAll(/^\s*--\s*param:\s*(.*)$/gm)) {
    const m = /^(\w+)\s+/.exec(rest!);
    assert.ok(m, `bad param line: ${rest}`);
    let i = m[0].length;
    for (let depth = 0; i < rest!.length && (depth > 0 || !/\s/.test(rest![i]!)); i++) depth += rest![i] === '(' ? 1 : rest![i] === ')' ? -1 : 0;
    params.set(m[1]!, { type: rest!.slice(m[0].length, i), example: rest!.slice(i).trim() });
  }
  return params;
}

/** A query file with its examples in place of its placeholders (`IN {x:Array(…)}` as `IN (…)`, as renderSql writes it). */
function withExamples(name: string): string {
  const params = exampleParams(readFileSync(queryPath(`${name}.sql`), 'utf8'));
  return querySql(name).replace(/(\bIN\s+)?\{(\w+):([^}]+)\}/gi, (_all, inKeyword: string | undefined, param: string) => {
    const p = params.get(param);
    assert.ok(p, `${name}.sql: no example for ${param}`);
    const value = inKeyword !== undefined && p.example.startsWith('[') ? `(${p.example.slice(1, -1)})` : p.example;
    return (inKeyword ?? '') + value;
  });
}

test('every query file runs on the cluster through the Distributed tables, with its examples, as the writer sends it', { skip: CLUSTER_SKIP, timeout: 300_000 }, async () => {
  const ctx = await clusterContext('cluster_queries');
  const ch = createClickHouse(ctx.config.clickhouse);
  const target = clusterTarget(ctx.config.clickhouse);
  const names = queryFiles().map((f) => f.slice(0, -4)).sort();
  const failed: string[] = [];
  try {
    for (const name of names) {
      const text = withExamples(name);
      const body = text.replace(/^\s*--.*$/gm, '').trim();
      try {
        if (/^(SELECT|WITH)\b/i.test(body)) await (await ch.query({ query: text, format: 'JSONEachRow' })).json();
        else await ch.command({ query: /^ALTER\b/i.test(body) ? mutationSql(text, target) : text });
      } catch (err) {
        failed.push(`${name}: ${String((err as Error).message).split('\n')[0]!.slice(0, 240)}`);
      }
    }
  } finally {
    await ch.close();
  }
  assert.ok(names.length > 90, `${names.length} query files`);
  assert.deepEqual(failed, [], 'every query file runs on the cluster');
});

test('serve on the cluster as a read-only user: every endpoint of the page answers, its reads set by the servers\' profile', { skip: CLUSTER_SKIP, timeout: 120_000 }, async () => {
  const ctx = await clusterContext('cluster_serve');
  const served = await startServe(ctx.env);
  try {
    for (const path of ['/', '/api/spend', '/api/spend?by=root', '/api/loops', '/api/sessions', '/api/alerts', '/api/report', '/api/overview', '/api/series', '/api/violations', '/api/reconciliation']) {
      const res = await fetch(`${served.origin}${path}`);
      assert.equal(res.status, 200, `${path}: ${await res.text()}`);
    }
  } finally {
    assert.equal(await served.stop(), 0, served.running.stderr());
  }
});

test('serve with a cluster set but a server whose profile lacks the reading settings: stops at start with one line naming them', { timeout: 60_000 }, async () => {
  // The single-node stack's server: its default profile has neither setting.
  const ctx = await testContext('cluster_serve_profile');
  try {
    await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, createLogger('warn'));
    const r = await runToEnd(['serve', '--port', '0', '--stop-after-ms', '5000'], serveEnv({ ...ctx.env, AGENTLEDGER_CLICKHOUSE_CLUSTER: 'agentledger' }), { timeoutMs: 30_000 });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /on cluster agentledger its profile must set prefer_localhost_replica=0 and distributed_product_mode=global \(it has prefer_localhost_replica=1, distributed_product_mode=deny;/);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  } finally {
    await ctx.cleanup();
  }
});

test('worker with a cluster set and a look-back under twice the replica delay its reads accept: stops at start with one line naming the setting', { timeout: 60_000 }, async () => {
  const r = await runToEnd(['worker'], { ...process.env, AGENTLEDGER_CLICKHOUSE_CLUSTER: 'agentledger', AGENTLEDGER_ROLLUP_LATE_MS: '60000' }, { timeoutMs: 30_000 });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /AGENTLEDGER_ROLLUP_LATE_MS=60000: on a cluster a sweep must look back at least 120000 ms/);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
});
