/**
 * The local cluster (`infra/stack.sh up --cluster`): ZooKeeper, three KRaft
 * brokers and four ClickHouse 18.16 servers as two shards of two replicas.
 * Runs only with AGENTLEDGER_TEST_CLUSTER=1 (it starts about 1.5 GB of
 * processes next to the single-node stack); skipped otherwise. It brings the
 * cluster up (idempotent), checks replication and the Distributed table, kills
 * one broker and one ClickHouse server, and checks that `up --cluster` brings
 * back exactly those. A cluster it started is stopped at the end (the rest of
 * the suite runs without it); one that was up before is left running.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { REPO_ROOT } from '../support/services.js';
import { CLUSTER_ENABLED, CLUSTER_SKIP, clusterPid, stack } from '../support/cluster.js';

const enabled = CLUSTER_ENABLED;
const skip = CLUSTER_SKIP;
const MIGRATOR = { user: 'agentledger_migrator', password: 'agentledger_migrator' };

/** KEY=value lines of infra/cluster.env (values there are plain or single-quoted). */
function clusterEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(join(REPO_ROOT, 'infra', 'cluster.env'), 'utf8').split('\n')) {
    const m = /^(AGENTLEDGER_[A-Z0-9_]+)=(.*)$/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) env[m[1]] = m[2].replace(/^'(.*)'$/, '$1').replace(/'\\''/g, "'");
  }
  return env;
}

/** Whether the cluster was up before these tests: if not, they stop it when done. */
let wasUp = true;
before(() => {
  if (enabled) wasUp = stack('status', '--cluster').status === 0;
});
after(() => {
  if (enabled && !wasUp) {
    const down = stack('down', '--cluster');
    assert.equal(down.status, 0, down.out);
  }
});

async function query(port: number, sql: string, who = MIGRATOR): Promise<string> {
  const url = `http://127.0.0.1:${port}/?user=${encodeURIComponent(who.user)}&password=${encodeURIComponent(who.password)}`;
  const res = await fetch(url, { method: 'POST', body: sql });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse :${port}: ${text}`);
  return text.trim();
}


test('up --cluster: every service answers, cluster.env points at it, replicas replicate, Distributed spans the shards', { skip, timeout: 600_000 }, async () => {
  const up = stack('up', '--cluster');
  assert.equal(up.status, 0, up.out);
  const status = stack('status', '--cluster');
  assert.equal(status.status, 0, status.out);
  assert.equal(status.out.trim().split('\n').length, 8, status.out);

  const env = clusterEnv();
  assert.equal(env['AGENTLEDGER_KAFKA_BROKERS'], '127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094');
  assert.equal(env['AGENTLEDGER_CLICKHOUSE_URL'], 'http://127.0.0.1:18123');
  assert.equal(env['AGENTLEDGER_CLICKHOUSE_CLUSTER'], 'agentledger');

  const clusters = await query(18123, "SELECT shard_num, replica_num, port FROM system.clusters WHERE cluster = 'agentledger' ORDER BY shard_num, replica_num FORMAT CSV");
  assert.equal(clusters, '1,1,19000\n1,2,19001\n2,1,19002\n2,2,19003');

  const table = `cluster_test_${process.pid}`;
  await query(18123, `CREATE TABLE agentledger.${table}_local ON CLUSTER agentledger (id UInt64, v String, ver UInt32)
    ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/agentledger/${table}_local', '{replica}', ver) ORDER BY id`);
  await query(18123, `CREATE TABLE agentledger.${table} ON CLUSTER agentledger AS agentledger.${table}_local
    ENGINE = Distributed(agentledger, agentledger, ${table}_local, id)`);
  try {
    // The writer inserts on replica 1 of each shard; replica 2 has the rows.
    const writer = { user: env['AGENTLEDGER_CLICKHOUSE_USER'] ?? '', password: env['AGENTLEDGER_CLICKHOUSE_PASSWORD'] ?? '' };
    await query(18123, `INSERT INTO agentledger.${table}_local VALUES (1, 'a', 1), (3, 'c', 1)`, writer);
    await query(18125, `INSERT INTO agentledger.${table}_local VALUES (2, 'b', 1)`, writer);
    const deadline = Date.now() + 30_000;
    while ((await query(18124, `SELECT count() FROM agentledger.${table}_local`)) !== '2' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 300));
    assert.equal(await query(18124, `SELECT id, v FROM agentledger.${table}_local ORDER BY id FORMAT CSV`), '1,"a"\n3,"c"');
    // :18126 is shard 2's other replica: its Distributed read takes shard 2 from its own copy, so wait for row 2 to reach it too.
    while ((await query(18126, `SELECT count() FROM agentledger.${table}_local`)) !== '1' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 300));
    assert.equal(await query(18126, `SELECT id FROM agentledger.${table} ORDER BY id FORMAT CSV`), '1\n2\n3');
    // The writer has no DDL, on the cluster's servers as on the single node.
    await assert.rejects(query(18124, `CREATE TABLE agentledger.${table}_x (a UInt8) ENGINE = Memory`, writer), /DDL queries are prohibited/);
  } finally {
    await query(18123, `DROP TABLE IF EXISTS agentledger.${table} ON CLUSTER agentledger`);
    await query(18123, `DROP TABLE IF EXISTS agentledger.${table}_local ON CLUSTER agentledger`);
  }
});

test('a broker and a ClickHouse server killed: acks=all writes go on, and up --cluster restarts just those two', { skip, timeout: 600_000 }, async () => {
  assert.equal(stack('up', '--cluster').status, 0);
  const env = clusterEnv();
  const kafka = new Kafka({ clientId: 'cluster-test', brokers: (env['AGENTLEDGER_KAFKA_BROKERS'] ?? '').split(','), logLevel: logLevel.NOTHING, retry: { retries: 10 } });
  const topic = `cluster-test-${process.pid}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
  const meta = await admin.fetchTopicMetadata({ topics: [topic] });
  for (const p of meta.topics[0]?.partitions ?? []) assert.equal(p.replicas.length, 3);

  const pids = { kafka1: clusterPid('kafka-1'), kafka2: clusterPid('kafka-2'), ch1: clusterPid('clickhouse-1'), ch3: clusterPid('clickhouse-3') };
  process.kill(pids.kafka2, 'SIGKILL');
  process.kill(pids.ch3, 'SIGKILL');
  const producer = kafka.producer();
  try {
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: Array.from({ length: 50 }, (_, i) => ({ key: String(i), value: `m${i}` })) });
  } finally {
    await producer.disconnect();
  }
  assert.equal(stack('status', '--cluster').status, 3);

  const up = stack('up', '--cluster');
  assert.equal(up.status, 0, up.out);
  assert.match(up.out, /kafka-2: starting/);
  assert.match(up.out, /clickhouse-3: starting/);
  assert.doesNotMatch(up.out, /kafka-1: starting|clickhouse-1: starting/);
  assert.equal(clusterPid('kafka-1'), pids.kafka1);
  assert.equal(clusterPid('clickhouse-1'), pids.ch1);
  assert.equal(stack('status', '--cluster').status, 0);
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
});
