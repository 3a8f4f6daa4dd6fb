/**
 * The stall watchdog of `ingest` against the real thing: ClickHouse's
 * answers are held back by a proxy (connections open, nothing answers: a
 * hung server, the kind of stall no error reports) while records wait in
 * Kafka. With AGENTLEDGER_INGEST_STALL_EXIT_MS=3000 the watchdog must say so
 * and end the process with exit 1, its gauge having shown the clock it
 * watches; idle with nothing waiting, it must not. The next ingest stores
 * every record exactly once.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { TestContext } from '../support/context.js';
import { closedPort } from '../support/cli-run.js';
import { assertExactlyOnce, faultTraffic, finish, waitForQuiet } from '../support/fault-traffic.js';
import { runCli, sleep, within } from '../support/processes.js';
import { tcpProxy } from '../support/tcp-proxy.js';

const contexts: TestContext[] = [];
after(async () => {
  for (const c of contexts) await c.cleanup();
});

test('no progress while records wait: the watchdog names the stall and exits 1; idle is no stall; nothing is lost', { timeout: 300_000 }, async () => {
  const held = 4000;
  const { ctx, expected, produceRest } = await faultTraffic('stall', 200, {}, held);
  contexts.push(ctx);
  const url = new URL(ctx.config.clickhouse.url);
  const proxy = await tcpProxy(url.hostname, Number(url.port || 8123));
  after(() => proxy.close());
  const metricsPort = await closedPort();
  const run = runCli(['ingest', '--no-migrate'], {
    ...ctx.env,
    AGENTLEDGER_CLICKHOUSE_URL: `http://127.0.0.1:${proxy.port}`,
    AGENTLEDGER_INGEST_STALL_EXIT_MS: '3000',
    AGENTLEDGER_METRICS_PORT: String(metricsPort),
  });
  // Everything produced so far is stored, and the count holds still…
  await waitForQuiet(ctx);
  // …then ingest idles for twice the watchdog's period with nothing waiting: no stall.
  await sleep(6_000);
  assert.equal(run.child.exitCode, null, `idle with nothing waiting is no stall:\n${run.stderr().slice(-2000)}`);

  proxy.hold();
  await produceRest();
  let clock = 0;
  for (let i = 0; i < 600 && run.child.exitCode === null; i++) {
    const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text(), () => '');
    clock = Math.max(clock, Number(/^agentledger_ingest_seconds_since_progress (\d+)/m.exec(text)?.[1] ?? 0));
    await sleep(100);
  }
  const code = await within(run.exited, 60_000, 'still running' as const);
  if (code === 'still running') run.child.kill('SIGKILL');
  proxy.release();
  assert.equal(code, 1, `the watchdog ends a stalled ingest with exit 1:\n${run.stderr().slice(-3000)}`);
  assert.match(run.stderr(), /ERROR ingest is stalled: no rows made durable for \d+ s while \d+ record\(s\) wait in this member's partitions.*exiting so a supervisor restarts it/);
  assert.ok(clock >= 2, `agentledger_ingest_seconds_since_progress showed the stall growing (saw ${clock})`);

  await finish(ctx);
  await assertExactlyOnce(ctx, expected);
});
