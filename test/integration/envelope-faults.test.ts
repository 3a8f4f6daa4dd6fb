/**
 * Faults other than a crash: a graceful stop (SIGTERM), and ClickHouse going
 * away mid-ingest. Each time nothing is lost and nothing is stored twice.
 * The outages need the local stack (they stop and start its ClickHouse), so
 * they are skipped under testcontainers. The broker restarts are in
 * broker-restart.test.ts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, test } from 'node:test';
import { createLogger } from '../../src/observability/logger.js';
import { createKafka } from '../../src/kafka/client.js';
import { query } from '../support/clickhouse.js';
import type { TestContext } from '../support/context.js';
import { assertExactlyOnce, faultTraffic, finish, waitForRows } from '../support/fault-traffic.js';
import { runCli, sleep } from '../support/processes.js';
import { REPO_ROOT, services } from '../support/services.js';
import { closedPort } from '../support/cli-run.js';

const log = createLogger('warn');
const contexts: TestContext[] = [];
after(async () => {
  for (const c of contexts) await c.cleanup();
});

const local = (await services()).kind === 'local';

function stack(...args: string[]): void {
  const r = spawnSync('bash', [`${REPO_ROOT}infra/stack.sh`, ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
}

/** A context of these tests, removed after them. */
async function setup(...args: Parameters<typeof faultTraffic>): ReturnType<typeof faultTraffic> {
  const traffic = await faultTraffic(...args);
  contexts.push(traffic.ctx);
  return traffic;
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
  const port = await closedPort();
  const { ctx, expected, produceRest } = await setup('chdown', 800, { AGENTLEDGER_METRICS_PORT: String(port) }, 16_000);
  const run = runCli(['ingest', '--no-migrate'], ctx.env);
  await waitForRows(ctx, expected.stored.length - 16_000);
  stack('stop', 'clickhouse');
  await produceRest();
  let metrics = '';
  for (let i = 0; i < 100 && !/agentledger_consumer_paused 1/.test(metrics); i++) {
    await sleep(200);
    metrics = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  }
  stack('start', 'clickhouse');
  assert.match(metrics, /agentledger_consumer_paused 1/, 'consumption paused while ClickHouse was down');
  assert.match(metrics, /agentledger_insert_failures_total [1-9]/, 'ClickHouse requests failed and were retried');
  // The same process stores the rest once ClickHouse is back (an idle exit
  // could end it between the first half and the records produced while
  // ClickHouse is down), then stops gracefully.
  await waitForRows(ctx, expected.stored.length, 120);
  run.child.kill('SIGTERM');
  assert.equal(await run.exited, 0, run.stderr());
  await finish(ctx);
  await assertExactlyOnce(ctx, expected);
});

test('SIGTERM while ClickHouse is down: the final flush fails, ingest says so and exits 1; nothing is lost', { timeout: 300_000, skip: !local && 'needs the local stack' }, async () => {
  const port = await closedPort();
  const { ctx, expected } = await setup('sigterm_down', 300, { AGENTLEDGER_BATCH_MAX_ROWS: '1000000', AGENTLEDGER_BATCH_MAX_WAIT_MS: '600000', AGENTLEDGER_METRICS_PORT: String(port) });
  const run = runCli(['ingest', '--no-migrate'], ctx.env);
  // Everything is read and buffered (no flush for 10 minutes)…
  let metrics = '';
  for (let i = 0; i < 600; i++) {
    metrics = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
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
