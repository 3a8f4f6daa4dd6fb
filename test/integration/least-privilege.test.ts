/**
 * Least privilege (issue 9): each of agentledger's ClickHouse users can do its
 * job and nothing more, Redis lets nobody in without the password, and what
 * has no password (ClickHouse's `default`, the metrics endpoint) cannot be
 * reached from another host.
 *
 * Against the real `agentledger` database, not a throwaway one like every
 * other test file: the deployment's users are confined to it by name
 * (allow_databases), so it is the only database they can be tested on. The
 * throwaway database of this file's context stands for "another database".
 * Nothing here changes the real database beyond migrating it and storing one
 * small loop of this run's own.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { after, before, test } from 'node:test';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { Redis } from 'ioredis';
import { Partitioners } from 'kafkajs';
import { parseConfig } from '../../src/config/index.js';
import { generateTraffic } from '../../src/demo/traffic/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { createMetrics, serveMetrics } from '../../src/observability/metrics.js';
import { createClickHouse, quoteString } from '../../src/clickhouse/client.js';
import { clickhouseErrorCode } from '../../src/clickhouse/errors.js';
import { settleQuery } from '../../src/clickhouse/server.js';
import { createKafka, ensureTopics, TOPIC_CONFIG } from '../../src/kafka/client.js';
import { testContext, type TestContext } from '../support/context.js';
import { machineSkip } from '../support/skips.js';
import { runCli } from '../support/processes.js';
import { REPO_ROOT, type Credentials, type Deployment } from '../support/services.js';

/** ClickHouse's answers to a forbidden query, on 18.16 and on current versions. */
const DENIED = {
  /** DATABASE_ACCESS_DENIED (18.16), ACCESS_DENIED (current). */
  otherDatabase: [291, 497],
  /** QUERY_IS_PROHIBITED: DDL with allow_ddl=0; ACCESS_DENIED when current ClickHouse checks rights first. */
  ddl: [392, 497],
  /** READONLY: any write or setting change with readonly=1; ACCESS_DENIED as above. */
  readonly: [164, 497],
} as const;

let ctx: TestContext;
let deployment: Deployment;
/** The environment of a CLI run as the deployment's writer, on the real database. */
let writerEnv: Record<string, string>;
const clients: ClickHouseClient[] = [];

function clientAs(who: Credentials, database = deployment.database, settings: Record<string, string | number> = {}): ClickHouseClient {
  const ch = createClient({
    url: ctx.services.clickhouseUrl,
    username: who.user,
    password: who.password,
    database,
    compression: { request: false, response: false },
    clickhouse_settings: settings,
    // Refusals are what these tests expect; the client would log each one.
    log: { level: ClickHouseLogLevel.OFF },
  });
  clients.push(ch);
  return ch;
}

async function refused(run: Promise<unknown>, codes: readonly number[], what: string): Promise<void> {
  await assert.rejects(run, (err: unknown) => {
    const code = clickhouseErrorCode(err);
    assert.ok(code !== undefined && codes.includes(code), `${what}: expected ClickHouse error ${codes.join(' or ')}, got ${String(err)}`);
    return true;
  });
}

const rows = async <T>(ch: ClickHouseClient, sql: string): Promise<T[]> =>
  ch.query({ query: sql, format: 'JSONEachRow' }).then((r) => r.json<T>());

before(async () => {
  ctx = await testContext('leastpriv');
  deployment = ctx.services.deployment;
  writerEnv = {
    ...ctx.env,
    AGENTLEDGER_CLICKHOUSE_USER: deployment.writer.user,
    AGENTLEDGER_CLICKHOUSE_PASSWORD: deployment.writer.password,
    AGENTLEDGER_CLICKHOUSE_DATABASE: deployment.database,
  };
  // "Another database" with a table in it, made as the tests' own user.
  const admin = createClickHouse(ctx.config.clickhouse, 'system');
  try {
    await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${ctx.config.clickhouse.database}` });
    await admin.command({ query: `CREATE TABLE IF NOT EXISTS ${ctx.config.clickhouse.database}.secret (x UInt8) ENGINE = Memory` });
    await admin.command({ query: `CREATE TABLE IF NOT EXISTS ${defaultTable()} (x UInt8) ENGINE = Memory` });
  } finally {
    await admin.close();
  }
});
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  const admin = createClickHouse(ctx.config.clickhouse, 'system');
  await admin.command({ query: `DROP TABLE IF EXISTS ${defaultTable()}` }).finally(() => admin.close());
  await ctx.cleanup();
});

/** A table of this run in ClickHouse's `default` database. */
const defaultTable = (): string => `default.${ctx.id}`;

test('migrate runs as the migrator; the writer alone may not change the schema', { timeout: 120_000 }, async () => {
  const asWriter = runCli(['migrate'], writerEnv);
  assert.notEqual(await asWriter.exited, 0, 'the writer must not be able to migrate');
  assert.match(asWriter.stderr(), /DDL|392|497|ACCESS_DENIED/, asWriter.stderr());

  const asMigrator = runCli(['migrate'], {
    ...writerEnv,
    AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER: deployment.migrator.user,
    AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD: deployment.migrator.password,
  });
  assert.equal(await asMigrator.exited, 0, asMigrator.stderr());
  const [applied] = await rows<{ n: string }>(clientAs(deployment.writer), 'SELECT count() AS n FROM schema_migrations');
  assert.ok(Number(applied?.n) > 0, 'schema_migrations is empty after migrate');
});

test('the writer ingests: INSERT and SELECT in its database, and the system tables ingest reads', { timeout: 120_000 }, async () => {
  // One small loop of this run's own (a fresh seed, so fresh loop ids), through the real consumer.
  const log = createLogger('warn');
  const kafka = createKafka(ctx.config.kafka, log);
  const topic = ctx.config.kafka.topics.envelopes;
  await ensureTopics(kafka, [{ topic, numPartitions: 1, configEntries: TOPIC_CONFIG }]);
  const traffic = generateTraffic({ loops: 1, envelopesPerLoop: 3, seed: randomInt(1, 2 ** 31), payloadBytes: 100 });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: [...traffic.records].map((r) => ({ key: r.key, value: r.value })) });
  await producer.disconnect();

  const run = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], writerEnv);
  assert.equal(await run.exited, 0, run.stderr());
  const loopIds = traffic.expected.loops.map((l) => quoteString(l.loopId)).join(', ');
  const writer = clientAs(deployment.writer);
  const [stored] = await rows<{ n: string }>(writer, `SELECT count() AS n FROM envelopes WHERE loop_id IN (${loopIds})`);
  assert.equal(Number(stored?.n), traffic.expected.envelopes);

  // What a lost insert answer makes ingest do: read system.processes, KILL QUERY.
  await settleQuery(writer, `least-privilege-${randomBytes(4).toString('hex')}`);
});

test('the writer cannot drop, alter, truncate or create, nor turn DDL on with SET', async () => {
  const writer = clientAs(deployment.writer);
  await refused(writer.command({ query: 'DROP TABLE envelopes' }), DENIED.ddl, 'DROP TABLE');
  await refused(writer.command({ query: 'TRUNCATE TABLE envelopes' }), DENIED.ddl, 'TRUNCATE');
  await refused(writer.command({ query: 'ALTER TABLE envelopes ADD COLUMN evil UInt8' }), DENIED.ddl, 'ALTER ADD COLUMN');
  await refused(writer.command({ query: 'ALTER TABLE envelopes DELETE WHERE 1' }), DENIED.ddl, 'ALTER DELETE');
  await refused(writer.command({ query: 'CREATE TABLE evil (x UInt8) ENGINE = Memory' }), DENIED.ddl, 'CREATE TABLE');
  await refused(writer.command({ query: `DROP DATABASE ${deployment.database}` }), DENIED.ddl, 'DROP DATABASE');
  await refused(writer.command({ query: 'SET allow_ddl = 1' }), DENIED.ddl, 'SET allow_ddl = 1');
});

test('the writer and the dashboard cannot read another database', async () => {
  const other = `${ctx.config.clickhouse.database}.secret`;
  await refused(rows(clientAs(deployment.writer), `SELECT * FROM ${other}`), DENIED.otherDatabase, 'writer SELECT');
  await refused(rows(clientAs(deployment.dashboard), `SELECT * FROM ${other}`), DENIED.otherDatabase, 'dashboard SELECT');
  await refused(clientAs(deployment.writer).command({ query: `INSERT INTO ${other} VALUES (1)` }), DENIED.otherDatabase, 'writer INSERT');
  await refused(rows(clientAs(deployment.dashboard), `SELECT * FROM ${defaultTable()}`), DENIED.otherDatabase, 'dashboard SELECT from default');
  await refused(rows(clientAs(deployment.writer), `SELECT * FROM ${defaultTable()}`), DENIED.otherDatabase, 'writer SELECT from default');
  // Nor open it as the session's database.
  await refused(rows(clientAs(deployment.dashboard, ctx.config.clickhouse.database), 'SELECT 1'), DENIED.otherDatabase, 'open test db');
});

test('the dashboard reads its database and the system tables, and cannot write, change the schema or its settings', async () => {
  const dashboard = clientAs(deployment.dashboard);
  const [own] = await rows<{ n: string }>(dashboard, 'SELECT count() AS n FROM schema_migrations');
  assert.ok(Number(own?.n) > 0);
  const [sys] = await rows<{ v: string }>(dashboard, 'SELECT version() AS v FROM system.one');
  assert.ok(sys?.v);
  // Every view made for dashboards reads as the dashboard user (their figures are checked in dashboard-views and runtime-spend).
  for (const view of ['spend_by_hour', 'spend_by_day', 'spend_by_loop_name', 'subagent_outcomes', 'tool_error_rates', 'convergence_warnings', 'unverified_spend', 'loop_reconciliation', 'runtime_spend', 'runtime_loops']) {
    await rows(dashboard, `SELECT count() AS n FROM ${view}`);
  }

  await refused(dashboard.command({ query: 'INSERT INTO envelopes_probe (loop_id) VALUES (\'x\')' }), DENIED.readonly, 'INSERT');
  await refused(dashboard.command({ query: 'CREATE TABLE evil (x UInt8) ENGINE = Memory' }), DENIED.readonly, 'CREATE TABLE');
  await refused(dashboard.command({ query: 'ALTER TABLE envelopes ADD COLUMN evil UInt8' }), DENIED.readonly, 'ALTER');
  await refused(dashboard.command({ query: 'DROP TABLE envelopes' }), DENIED.readonly, 'DROP TABLE');
  await refused(rows(clientAs(deployment.dashboard, deployment.database, { readonly: 0 }), 'SELECT 1'), DENIED.readonly, 'readonly=0 per request');
});

test('the writer cannot turn DDL on as a per-request setting (on 18.16 it can: the known gap, asserted so the day it closes this fails)', async () => {
  const writer = clientAs(deployment.writer);
  const [version] = await rows<{ v: string }>(writer, 'SELECT version() AS v');
  const attempt = clientAs(deployment.writer, deployment.database, { allow_ddl: 1 }).command({ query: 'CREATE TABLE evil (x UInt8) ENGINE = Memory' });
  const dropped = (): Promise<unknown> => clientAs(deployment.migrator).command({ query: 'DROP TABLE IF EXISTS evil' });
  if (version?.v.startsWith('18.')) {
    // ClickHouse 18.16 checks allow_ddl only in SET, not in the settings of an
    // HTTP request; settings constraints (19.x on) close that. docs/operations.md
    // says so. The gap is asserted as it is: when a server refuses, this fails
    // and the branch goes.
    await attempt.finally(dropped);
    return;
  }
  await refused(attempt, DENIED.ddl, 'CREATE TABLE with allow_ddl=1').finally(dropped);
});

test('Redis refuses a client without the password and lets agentledger\'s user in, without dangerous commands', async () => {
  const open = (url: string): Redis =>
    new Redis(url, { lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
  const anonymous = open(ctx.services.redisAnonymousUrl);
  anonymous.on('error', () => undefined);
  try {
    await assert.rejects(anonymous.ping(), /NOAUTH/);
    await assert.rejects(anonymous.set('least-privilege', '1'), /NOAUTH/);
  } finally {
    anonymous.disconnect();
  }
  // The URL the CLI builds from its default settings is the one that gets in.
  const configured = open(parseConfig({ AGENTLEDGER_REDIS_URL: ctx.services.redisUrl }).redis.url);
  try {
    assert.equal(await configured.ping(), 'PONG');
    await assert.rejects(configured.flushall(), /NOPERM/);
  } finally {
    configured.disconnect();
  }
});

/** Addresses of this machine that are not loopback: where another host would connect. */
function externalAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .filter((a) => !a.internal && a.family === 'IPv4')
    .map((a) => a.address);
}

/** Resolves with the error code of a TCP connect (or 'connected'). */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(5000);
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    socket.once('timeout', () => {
      socket.destroy();
      resolve('timeout');
    });
  });
}

/** The <ip>/<host> entries of one user's <networks> in a users file. */
function networksOf(xml: string, user: string): string[] {
  const users = /<users>([\s\S]*)<\/users>/.exec(xml.replace(/<!--[\s\S]*?-->/g, ''))?.[1] ?? '';
  const block = new RegExp(`<${user}>([\\s\\S]*?)</${user}>`).exec(users)?.[1];
  assert.ok(block !== undefined, `no user ${user}`);
  const networks = /<networks[^>]*>([\s\S]*?)<\/networks>/.exec(block)?.[1] ?? '';
  return [...networks.matchAll(/<(ip|host|host_regexp)>([^<]*)<\//g)].map((m) => `${m[1]}:${m[2]}`);
}

test('ClickHouse users without a network job accept loopback only', (t) => {
  if (ctx.services.kind !== 'local') return t.skip('reads the files of the local stack');
  const stackUsers = `${REPO_ROOT}.state/clickhouse/etc/`;
  const loopback = ['ip:127.0.0.1', 'ip:::1'];
  const base = readFileSync(`${stackUsers}users.xml`, 'utf8');
  const ours = readFileSync(`${stackUsers}users.d/agentledger.xml`, 'utf8');
  assert.deepEqual(networksOf(base, 'default').sort(), loopback);
  assert.deepEqual(networksOf(base, 'agentledger_test').sort(), loopback);
  for (const user of ['agentledger', 'agentledger_migrator', 'agentledger_dashboard']) assert.deepEqual(networksOf(ours, user).sort(), loopback, user);
});

test('ClickHouse and the metrics endpoint (default settings) cannot be reached from another host', async (t) => {
  const [address] = externalAddresses();
  const noAddress = machineSkip(address === undefined && 'this machine has no non-loopback IPv4 address to connect to');
  if (noAddress) return t.skip(noAddress);
  assert.ok(address !== undefined, 'this machine has no non-loopback IPv4 address to connect to (CI=true: the test must run)');
  const server = await serveMetrics(createMetrics(), 0, parseConfig({}).metricsHost);
  try {
    const port = (server.address() as { port: number }).port;
    assert.equal(await tryConnect('127.0.0.1', port), 'connected', 'the endpoint must work on loopback');
    assert.equal(await tryConnect(address, port), 'ECONNREFUSED', `metrics on ${address}:${port}`);
  } finally {
    server.close();
  }
  if (ctx.services.kind === 'local') assert.equal(await tryConnect(address, 8123), 'ECONNREFUSED', `ClickHouse on ${address}:8123`);
});
