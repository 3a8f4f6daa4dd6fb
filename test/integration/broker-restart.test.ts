/**
 * The Kafka broker restarted under a running `ingest`, at the moments that
 * once left it stalled for good: while it waits on a fetch, while a flush is
 * in flight, and while it commits offsets; each twice, on a broker of this
 * file's own (test/support/private-kafka.ts) killed (SIGKILL) or stopped
 * (SIGTERM) at the moment the ingest's log names, and once away for longer
 * than kafkajs retries a fetch. Each run must end by
 * itself (its idle exit, within a bound: no stop from the test) with every
 * (loop, seq) stored once and every planted violation recorded once.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { TestContext } from '../support/context.js';
import { machineSkip } from '../support/skips.js';
import { assertExactlyOnce, faultTraffic, waitForQuiet, type FaultTraffic } from '../support/fault-traffic.js';
import { privateKafka, privateKafkaAvailable, type PrivateKafka } from '../support/private-kafka.js';
import { runCli, sleep, within, type Running } from '../support/processes.js';

const skip = machineSkip(!privateKafkaAvailable() && 'needs the local stack (its Kafka jars run a broker of this file)');
let broker: PrivateKafka | undefined;
const contexts: TestContext[] = [];
after(async () => {
  for (const c of contexts) await c.cleanup();
  await broker?.remove();
});

/** How long a run may take after the broker is back: far more than a healthy one needs, far less than a stall. */
const BOUND_MS = 120_000;

/** Resolves once `run` has printed `pattern` `nth` times (its log is at debug level). */
async function waitForLine(run: Running, pattern: RegExp, nth: number): Promise<void> {
  const global = new RegExp(pattern.source, 'g');
  for (let i = 0; i < 1200; i++) {
    if ((run.stderr().match(global)?.length ?? 0) >= nth) return;
    if (run.child.exitCode !== null) break;
    await sleep(50);
  }
  throw new Error(`ingest did not print ${pattern} ${nth} times; it printed:\n${run.stderr().slice(-3000)}`);
}

type Moment = 'fetch' | 'flush' | 'commit';

async function restartAt(moment: Moment, signal: 'SIGKILL' | 'SIGTERM', round: number, awayMs = 0): Promise<void> {
  broker ??= await privateKafka('restart');
  const held = moment === 'fetch' ? 4_000 : 0;
  const traffic: FaultTraffic = await faultTraffic(`restart_${moment}_${round}`, 300, { AGENTLEDGER_KAFKA_BROKERS: broker.brokers, AGENTLEDGER_LOG_LEVEL: 'debug' }, held);
  contexts.push(traffic.ctx);
  const { ctx, expected } = traffic;
  const run = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '4000'], ctx.env);
  if (moment === 'fetch') {
    // Everything produced so far is stored (the count holds still): ingest now waits on fetches.
    await waitForQuiet(ctx);
  } else {
    await waitForLine(run, moment === 'flush' ? /flush started/ : /committing offsets/, 3);
  }
  const at = Date.now();
  await broker.stop(signal);
  if (awayMs > 0) await sleep(awayMs);
  await broker.start();
  if (moment === 'fetch') await traffic.produceRest();
  const outcome = await within(run.exited, BOUND_MS, 'still running' as const);
  if (outcome === 'still running') run.child.kill('SIGKILL');
  assert.equal(outcome, 0, `ingest ended by itself after the broker restart (${moment}, ${signal}); restart ${Date.now() - at} ms ago. Its log:\n${run.stderr().slice(-4000)}`);
  await assertExactlyOnce(ctx, expected);
}

for (const round of [1, 2]) {
  test(`broker ${round === 1 ? 'stopped' : 'killed'} while ingest waits on a fetch, round ${round}`, { timeout: 300_000, skip }, () =>
    restartAt('fetch', round === 1 ? 'SIGTERM' : 'SIGKILL', round),
  );
  test(`broker killed while a flush is in flight, round ${round}`, { timeout: 300_000, skip }, () => restartAt('flush', 'SIGKILL', round));
  test(`broker killed while ingest commits offsets, round ${round}`, { timeout: 300_000, skip }, () => restartAt('commit', 'SIGKILL', round));
}

// Longer than kafkajs's retries of a fetch: its consumer crashes and restarts, and rejoins.
test('broker away for 75 s while ingest waits on a fetch', { timeout: 400_000, skip }, () => restartAt('fetch', 'SIGKILL', 3, 75_000));
