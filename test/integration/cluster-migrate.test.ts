/**
 * The migrations on the local cluster (ClickHouse 18.16, two shards of two
 * replicas), through the real migrate() with AGENTLEDGER_CLICKHOUSE_CLUSTER
 * (the first run with migrateCluster's mends of 18.16's ON CLUSTER race):
 * every table and view on all four servers with its cluster engine, a second
 * run applying nothing, and rows stored on a server of each shard read back,
 * fact ALIAS columns included, through the Distributed table and a reader
 * view from the other servers. Runs only with AGENTLEDGER_TEST_CLUSTER=1 (as
 * cluster-stack.test.ts, whose before/after it copies: a cluster it started is
 * stopped at the end, one that was up before is left running).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { parseConfig } from '../../src/config/index.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { clickhouseErrorCode } from '../../src/clickhouse/errors.js';
import { DdlTimeoutError, explainDdlTimeout } from '../../src/migrate/ddl-laggards.js';
import { loadMigrations } from '../../src/migrate/migrations.js';
import { migrate } from '../../src/migrate/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import { CLUSTER_SKIP, CLUSTER_TEST_USER, clusterPid, migrateCluster, query, SERVERS, useCluster } from '../support/cluster.js';

const skip = CLUSTER_SKIP;
const TEST_USER = CLUSTER_TEST_USER;
const DATABASE = `cluster_migrate_${process.pid}`;
const STALLED = `cluster_stalled_${process.pid}`;

const settings = (): ReturnType<typeof parseConfig>['clickhouse'] =>
  parseConfig({
    AGENTLEDGER_CLICKHOUSE_URL: `http://127.0.0.1:${SERVERS[0]}`,
    AGENTLEDGER_CLICKHOUSE_USER: TEST_USER.user,
    AGENTLEDGER_CLICKHOUSE_PASSWORD: TEST_USER.password,
    AGENTLEDGER_CLICKHOUSE_DATABASE: DATABASE,
    AGENTLEDGER_CLICKHOUSE_CLUSTER: 'agentledger',
  }).clickhouse;

useCluster(() => [DATABASE, STALLED]);

async function eventually(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

test('migrate on the cluster: every table as a replicated _local and a Distributed table, every view, on all four servers; a second run applies nothing', { skip, timeout: 900_000 }, async () => {
  const log = createLogger('warn');
  const total = (await loadMigrations(MIGRATIONS_DIR)).length;
  assert.equal(await query(SERVERS[0], `SELECT count() FROM system.tables WHERE database = '${DATABASE}'`), '0', 'a fresh database');
  // The real migrate, with the mends an operator makes when 18.16's ON
  // CLUSTER race stops a server's DDL worker (migrateCluster, each printed):
  // it did in this test in a suite run on 2026-12-07. Every migration applied
  // is asserted below, on every server, from schema_migrations.
  await migrateCluster(settings());

  const tables = async (port: number): Promise<string> =>
    query(port, `SELECT name, engine FROM system.tables WHERE database = '${DATABASE}' ORDER BY name FORMAT TSV`);
  const one = await tables(SERVERS[0]);
  for (const port of SERVERS.slice(1)) assert.equal(await tables(port), one, `server :${port} has the same tables as :${SERVERS[0]}`);
  const engines = new Map(one.split('\n').map((line) => line.split('\t') as [string, string]));
  assert.ok(!engines.has('schema_migrations_lock'), 'the lock is dropped');
  assert.equal(engines.get('schema_migrations'), 'ReplicatedMergeTree');
  for (const [name, engine] of engines) {
    assert.doesNotMatch(engine, /^(?!Replicated)\w*MergeTree$/, `${name} is a plain ${engine}`);
    if (name.endsWith('_local')) {
      assert.match(engine, /^Replicated\w*MergeTree$/, name);
      assert.equal(engines.get(name.slice(0, -'_local'.length)), 'Distributed', `${name}'s Distributed table`);
    }
    if (engine === 'Distributed') assert.match(engines.get(`${name}_local`) ?? '', /^Replicated/, name);
  }
  for (const name of ['envelopes', 'craze_events', 'loop_heads', 'chain_flags', 'loop_summaries', 'alerts', 'rollup_commits']) {
    assert.equal(engines.get(name), 'Distributed', name);
  }
  for (const name of ['envelopes_probe', 'craze_events_probe']) assert.equal(engines.get(name), 'Null', name);
  for (const name of ['runtime_spend', 'runtime_loops', 'spend_calls', 'chain_violations', 'loop_reconciliation', 'spend_hourly_now', 'unverified_spend_now']) {
    assert.equal(engines.get(name), 'View', name);
  }
  assert.ok(!engines.has('chain_violations_local') && !engines.has('chain_violations_mv'), '0005 dropped the old table pair and its view');
  // 0022's ALIAS facts on both halves of the pair.
  for (const table of ['envelopes', 'envelopes_local']) {
    assert.equal(
      await query(SERVERS[3], `SELECT default_kind, default_expression FROM system.columns WHERE database = '${DATABASE}' AND table = '${table}' AND name = 'cost_pico' FORMAT TSV`),
      "ALIAS\tif(kind_class = \\'ModelCalled\\', n3, toInt64(0))",
      table,
    );
  }

  // Every server reads the same applied list (one replicated table).
  for (const port of SERVERS) {
    await eventually(`schema_migrations on :${port}`, async () => (await query(port, `SELECT count() FROM ${DATABASE}.schema_migrations`)) === String(total));
  }
  const second = await migrate({ ...settings(), url: `http://127.0.0.1:${SERVERS[2]}` }, MIGRATIONS_DIR, log);
  assert.equal(second.applied.length, 0);
  assert.equal(second.alreadyApplied, total);
});

test('rows stored on a server of each shard are read through the Distributed table and a reader view from the others, ALIAS facts right', { skip, timeout: 300_000 }, async () => {
  const row = (loop: string, provider: string, pico: number): string =>
    `('${loop}', 1, toDateTime('2026-01-01 00:00:00', 'UTC'), '', 'ModelCalled', 'ModelCalled', 'h', 'h', '{}', 'ok', '', '', 't', 0, ${pico}, now(), ` +
    `'${provider}', 'model-${provider}', '${pico / 1e12}', '', '', '', 10, 20, ${pico}, 300)`;
  const columns =
    '(loop_id, seq, time, time_text, kind, kind_class, hash, computed_hash, payload, verdict, detail, evidence, kafka_topic, kafka_partition, kafka_offset, ingested_at, s1, s2, s3, s4, s5, s6, n1, n2, n3, n4)';
  await query(SERVERS[0], `INSERT INTO envelopes_local ${columns} VALUES ${row('loop-a', 'openai', 1500000000000)}`, DATABASE);
  await query(SERVERS[2], `INSERT INTO envelopes_local ${columns} VALUES ${row('loop-b', 'anthropic', 2500000000000)}`, DATABASE);
  // Each row on its own shard only, and on both replicas of it.
  await eventually('replica 2 of each shard has its row', async () =>
    (await query(SERVERS[1], 'SELECT count() FROM envelopes_local', DATABASE)) === '1' && (await query(SERVERS[3], 'SELECT count() FROM envelopes_local', DATABASE)) === '1');

  // prefer_localhost_replica=0: with the local shard read in-process, 18.16
  // refuses FINAL … ORDER BY over a Distributed table whose SELECT leaves out
  // part of the sorting key (code 8, "Cannot find column kafka_offset in
  // source stream"), on the servers of shard 1 (docs/architecture.md).
  const READ = ' SETTINGS prefer_localhost_replica = 0 FORMAT TSV';
  const distributed = `SELECT loop_id, model_provider, model_name, input_tokens, output_tokens, cost_pico, cost_usd_text, duration_ms, budget_pico FROM envelopes FINAL ORDER BY loop_id${READ}`;
  const expected = 'loop-a\topenai\tmodel-openai\t10\t20\t1500000000000\t1.5\t300\t0\nloop-b\tanthropic\tmodel-anthropic\t10\t20\t2500000000000\t2.5\t300\t0';
  assert.equal(await query(SERVERS[1], distributed, DATABASE), expected);
  assert.equal(await query(SERVERS[3], distributed, DATABASE), expected);
  assert.equal(
    await query(SERVERS[3], `SELECT loop_id, provider, model, verified, replayed, cost_pico FROM runtime_spend ORDER BY loop_id${READ}`, DATABASE),
    'loop-a\topenai\tmodel-openai\t1\t0\t1500000000000\nloop-b\tanthropic\tmodel-anthropic\t1\t0\t2500000000000',
  );
});

test('every view reads on the cluster (no refused IN or JOIN over two Distributed tables)', { skip, timeout: 300_000 }, async () => {
  const views = (await query(SERVERS[1], `SELECT name FROM system.tables WHERE database = '${DATABASE}' AND engine = 'View' ORDER BY name FORMAT TSV`)).split('\n');
  assert.ok(views.length > 20);
  const failed: string[] = [];
  for (const view of views) {
    await query(SERVERS[1], `SELECT * FROM ${view} LIMIT 1 SETTINGS prefer_localhost_replica = 0 FORMAT Null`, DATABASE).catch((err: Error) => failed.push(`${view}: ${err.message.slice(0, 200)}`));
  }
  assert.deepEqual(failed, []);
});

test('an ON CLUSTER statement a stopped server has not run in time: the error names that server, and only it', { skip, timeout: 300_000 }, async () => {
  // clickhouse-4 (native port 19003) stopped, not killed: it holds its
  // ZooKeeper session, as a server whose DDL queue is stuck does.
  const pid = clusterPid('clickhouse-4');
  const ch = createClickHouse(settings(), 'system');
  process.kill(pid, 'SIGSTOP');
  let failure: unknown;
  try {
    await ch.command({ query: `CREATE DATABASE IF NOT EXISTS ${STALLED} ON CLUSTER agentledger`, clickhouse_settings: { distributed_ddl_task_timeout: '3' } });
  } catch (err) {
    failure = err;
  }
  try {
    assert.ok(failure instanceof Error, 'the statement timed out');
    const explained = await explainDdlTimeout(ch, failure);
    assert.ok(explained instanceof DdlTimeoutError, String(explained));
    assert.deepEqual(explained.unfinished, ['127.0.0.1:19003']);
    assert.match(explained.message, /^an ON CLUSTER statement was not run by 127\.0\.0\.1:19003 within distributed_ddl_task_timeout: /);
    assert.equal(clickhouseErrorCode(explained), 159);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  // Once it runs again, it runs the statement too, and nobody is named.
  await eventually('clickhouse-4 ran the statement', async () => (await query(SERVERS[3], `SELECT count() FROM system.databases WHERE name = '${STALLED}'`)) === '1');
  await eventually('no server is named any more', async () => (await explainDdlTimeout(ch, failure)) === failure);
  await ch.close();
});
