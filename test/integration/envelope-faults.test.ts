/**
 * Faults other than a crash: a graceful stop (SIGTERM), ClickHouse going away
 * mid-ingest, and the Kafka broker restarting mid-ingest. Each time nothing is
 * lost and nothing is stored twice. The restarts need the local stack (they
 * stop and start its services), so they are skipped under testcontainers.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, test } from 'node:test';
import { Partitioners } from 'kafkajs';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { generateTraffic, type ExpectedTraffic } from '../../src/demo/traffic/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { migrate } from '../../src/sink/clickhouse/migrate.js';
import { createKafka, ensureTopics, TOPIC_CONFIG } from '../../src/sources/kafka.js';
import { query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { runCli, sleep } from '../support/processes.js';
import { REPO_ROOT, services } from '../support/services.js';

const log = createLogger('warn');
const contexts: TestContext[] = [];
after(async () => {
  for (const c of contexts) await c.cleanup();
});

const local = (await services()).kind === 'local';

interface Setup {
  ctx: TestContext;
  expected: ExpectedTraffic;
  /** Produces the records held back (see `holdBack`). */
  produceRest(): Promise<void>;
}

async function setup(name: string, loops: number, overrides: Record<string, string> = {}, holdBack = 0): Promise<Setup> {
  const ctx = await testContext(name, { AGENTLEDGER_BATCH_MAX_ROWS: '1000', AGENTLEDGER_BATCH_MAX_WAIT_MS: '200', ...overrides });
  contexts.push(ctx);
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  const kafka = createKafka(ctx.config.kafka, log);
  const topic = ctx.config.kafka.topics.envelopes;
  await ensureTopics(kafka, [{ topic, numPartitions: 4, configEntries: TOPIC_CONFIG }]);
  const traffic = generateTraffic({ loops, envelopesPerLoop: 40, seed: loops, payloadBytes: 600, violations: { fork: 3, gap: 3, mismatch: 3 } });
  const records = [...traffic.records];
  const send = async (from: number, to: number): Promise<void> => {
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    for (let i = from; i < to; i += 2000) {
      await producer.send({ topic, acks: -1, messages: records.slice(i, Math.min(i + 2000, to)).map((r) => ({ key: r.key, value: r.value })) });
    }
    await producer.disconnect();
  };
  const split = records.length - holdBack;
  await send(0, split);
  return { ctx, expected: traffic.expected, produceRest: () => send(split, records.length) };
}

async function assertExactlyOnce(ctx: TestContext, expected: ExpectedTraffic): Promise<void> {
  const [keys] = await query<{ rows: string; keys: string }>(
    ctx,
    "SELECT count() AS rows, uniqExact(loop_id, seq) AS keys FROM envelopes WHERE verdict NOT IN ('fork', 'malformed')",
  );
  assert.equal(Number(keys?.rows), expected.stored.length, 'no (loop, seq) stored twice');
  assert.equal(Number(keys?.keys), expected.stored.length, 'every (loop, seq) stored');
  const flagged = await query<{ n: string }>(ctx, "SELECT count() AS n FROM chain_violations WHERE verdict != 'malformed'");
  assert.equal(Number(flagged[0]?.n), expected.violations.length, 'each planted violation recorded once');
}

async function finish(ctx: TestContext, overrides: Record<string, string> = {}): Promise<void> {
  const last = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '4000'], { ...ctx.env, ...overrides });
  assert.equal(await last.exited, 0, last.stderr());
}

function stack(...args: string[]): void {
  const r = spawnSync('bash', [`${REPO_ROOT}infra/stack.sh`, ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
}

async function waitForRows(ctx: TestContext, atLeast: number): Promise<number> {
  for (let i = 0; i < 300; i++) {
    const [r] = await query<{ n: string }>(ctx, 'SELECT count() AS n FROM envelopes').catch(() => [{ n: '0' }]);
    const n = Number(r?.n ?? 0);
    if (n >= atLeast) return n;
    await sleep(100);
  }
  throw new Error(`fewer than ${atLeast} rows after 30 s`);
}

test('SIGTERM flushes, commits what is durable and exits 0', { timeout: 300_000 }, async () => {
  const { ctx, expected } = await setup('sigterm', 600);
  const run = runCli(['ingest', '--no-migrate'], ctx.env);
  await waitForRows(ctx, 1);
  run.child.kill('SIGTERM');
  assert.equal(await run.exited, 0, run.stderr());

  // After a graceful stop the committed offsets are exactly the durable progress.
  const progress = await query<{ p: number; next: string }>(
    ctx,
    'SELECT kafka_partition AS p, toString(max(kafka_offset) + 1) AS next FROM envelopes GROUP BY kafka_partition',
  );
  const admin = createKafka(ctx.config.kafka, log).admin();
  await admin.connect();
  const [committed] = await admin.fetchOffsets({ groupId: ctx.config.kafka.groupId, topics: [ctx.config.kafka.topics.envelopes] });
  await admin.disconnect();
  for (const p of progress) {
    const c = committed?.partitions.find((x) => x.partition === Number(p.p));
    assert.ok(c && BigInt(c.offset) >= BigInt(p.next), `partition ${p.p}: committed ${c?.offset} covers durable ${p.next}`);
  }
  await finish(ctx);
  await assertExactlyOnce(ctx, expected);
});

test('ClickHouse down mid-ingest: consumption pauses, resumes, nothing lost or doubled', { timeout: 300_000, skip: !local && 'needs the local stack' }, async () => {
  // Half the traffic is ingested, then ClickHouse stops and the other half
  // arrives: the consumer must hold it, pause, and store it once ClickHouse is back.
  const { ctx, expected, produceRest } = await setup('chdown', 800, { AGENTLEDGER_METRICS_PORT: '19464' }, 16_000);
  const run = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '20000'], ctx.env);
  await waitForRows(ctx, expected.stored.length - 16_000);
  stack('stop', 'clickhouse');
  await produceRest();
  let metrics = '';
  for (let i = 0; i < 100 && !/agentledger_consumer_paused 1/.test(metrics); i++) {
    await sleep(200);
    metrics = await fetch('http://127.0.0.1:19464/metrics').then((r) => r.text());
  }
  stack('start', 'clickhouse');
  assert.match(metrics, /agentledger_consumer_paused 1/, 'consumption paused while ClickHouse was down');
  assert.match(metrics, /agentledger_insert_failures_total [1-9]/, 'ClickHouse requests failed and were retried');
  assert.equal(await run.exited, 0, run.stderr());
  await finish(ctx);
  await assertExactlyOnce(ctx, expected);
});

test('Kafka broker restart mid-ingest: nothing lost or doubled', { timeout: 300_000, skip: !local && 'needs the local stack' }, async (t) => {
  const { ctx, expected } = await setup('kafkarestart', 800);
  const run = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '8000'], { ...ctx.env, AGENTLEDGER_LOG_LEVEL: 'info' });
  await waitForRows(ctx, 1);
  stack('restart', 'kafka');
  // The consumer may ride the restart out or exit for its supervisor to
  // restart. Known limit: after some restarts it stays up without finishing
  // its idle exit (README, "Limits that remain"); it is then stopped, and
  // what matters is checked below: nothing lost, nothing twice.
  const outcome = await Promise.race([run.exited, sleep(90_000).then(() => 'still running' as const)]);
  if (outcome === 'still running') {
    t.diagnostic(`ingest did not reach its idle exit after the broker restart; stopping it. Last log lines:\n${run.stderr().slice(-3000)}`);
    run.child.kill('SIGTERM');
    const stopped = await Promise.race([run.exited, sleep(60_000).then(() => 'hung' as const)]);
    if (stopped === 'hung') run.child.kill('SIGKILL');
  }
  await finish(ctx);
  await assertExactlyOnce(ctx, expected);
});

test('SIGTERM while ClickHouse is down: the final flush fails, ingest says so and exits 1; nothing is lost', { timeout: 300_000, skip: !local && 'needs the local stack' }, async () => {
  const { ctx, expected } = await setup('sigterm_down', 300, { AGENTLEDGER_BATCH_MAX_ROWS: '1000000', AGENTLEDGER_BATCH_MAX_WAIT_MS: '600000', AGENTLEDGER_METRICS_PORT: '19466' });
  const run = runCli(['ingest', '--no-migrate'], ctx.env);
  // Everything is read and buffered (no flush for 10 minutes)…
  let metrics = '';
  for (let i = 0; i < 600; i++) {
    metrics = await fetch('http://127.0.0.1:19466/metrics').then((r) => r.text(), () => '');
    const counted = [...metrics.matchAll(/^agentledger_records_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    if (counted >= expected.records) break;
    await sleep(100);
  }
  // …then ClickHouse goes away and the process is asked to stop.
  stack('stop', 'clickhouse');
  try {
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 1, 'a stop whose final flush failed is not a success');
    assert.match(run.stderr(), /final flush failed; the records will be read again on restart/);
  } finally {
    stack('start', 'clickhouse');
  }
  // The restart flushes as usual (this test's runs wait 10 minutes between flushes).
  await finish(ctx, { AGENTLEDGER_BATCH_MAX_WAIT_MS: '200' });
  await assertExactlyOnce(ctx, expected);
});
