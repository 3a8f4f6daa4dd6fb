/**
 * kafkajs's own consumer runner and fetch manager, driven by a fake consumer
 * group through the window src/kafka/runner-stop.ts fixes: the runner
 * stopped while its fetchers are being rebuilt because a broker dropped out.
 * As shipped, kafkajs then spins on the microtask queue (no timer of the
 * process runs again); the fake group counts the spin and breaks it after
 * SPIN fetch rounds, so the first test ends and shows the fault, and the
 * second shows the fix ends the stop in a few rounds.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { fixRunnerStop, PATCHED_KAFKAJS } from '../../../src/kafka/runner-stop.js';

const require = createRequire(import.meta.url);

interface RunnerLike {
  start(): Promise<void>;
  stop(): Promise<void>;
}
type RunnerClass = new (options: Record<string, unknown>) => RunnerLike;

/** Fetch rounds after the stop beyond which the fetchers are spinning. */
const SPIN = 20_000;

/** One stop in the window; resolves with the fetch rounds counted after the stop, and whether the group was left. */
async function stopWhileRebuilding(): Promise<{ roundsAfterStop: number; left: boolean }> {
  const Runner = require('kafkajs/src/consumer/runner') as RunnerClass;
  let nodes = [1, 2, 3];
  let stopAsked = false;
  let roundsAfterStop = 0;
  let left = false;
  let releaseSlow!: () => void;
  const slow = new Promise<void>((resolve) => (releaseSlow = resolve));
  let slowStarted!: () => void;
  const slowInFlight = new Promise<void>((resolve) => (slowStarted = resolve));
  let rebuilding!: () => void;
  const fetchersStopping = new Promise<void>((resolve) => (rebuilding = resolve));

  const logger = {
    namespace: () => logger,
    debug: (message: string) => {
      if (message === 'Stopping fetchers...') rebuilding();
    },
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
  };
  const consumerGroup = {
    groupId: 'g',
    memberId: 'm',
    connect: () => Promise.resolve(),
    joinAndSync: () => Promise.resolve(),
    leave: () => {
      left = true;
      return Promise.resolve();
    },
    heartbeat: () => Promise.resolve(),
    // The fetch manager asks for the brokers at every fetch: one round.
    getNodeIds: () => {
      if (stopAsked && ++roundsAfterStop > SPIN) throw new Error('spinning');
      return [...nodes];
    },
    fetch: async (nodeId: number) => {
      if (nodeId === 3) {
        // A long poll in flight on broker 3 when the others notice it gone.
        slowStarted();
        await slow;
      } else await new Promise((resolve) => setImmediate(resolve));
      return [];
    },
  };
  const runner = new Runner({
    logger,
    consumerGroup,
    instrumentationEmitter: { emit: () => undefined },
    heartbeatInterval: 3000,
    retry: { retries: 5, initialRetryTime: 1, maxRetryTime: 5 },
    eachBatch: () => Promise.resolve(),
    onCrash: (err: Error) => assert.fail(`crashed: ${err.message}`),
  });

  await runner.start();
  await slowInFlight;
  // Broker 3 drops out: the next fetch on 1 or 2 makes the fetch manager stop every fetcher and build new ones.
  nodes = [1, 2];
  await fetchersStopping;
  // The stop lands while the fetch manager waits for broker 3's fetcher to end.
  stopAsked = true;
  const stopped = runner.stop();
  releaseSlow();
  await stopped;
  return { roundsAfterStop, left };
}

test('kafkajs as shipped: a consumer stopped while its fetchers are rebuilt spins without end (the fake group breaks the spin)', async () => {
  const { roundsAfterStop } = await stopWhileRebuilding();
  assert.ok(roundsAfterStop > SPIN, `the fetchers went round ${roundsAfterStop} times after the stop`);
});

test('with the fix: the same stop ends the fetchers at their next round, and the runner leaves the group', async () => {
  fixRunnerStop();
  const { roundsAfterStop, left } = await stopWhileRebuilding();
  assert.ok(roundsAfterStop < 10, `the fetchers went round ${roundsAfterStop} times after the stop`);
  assert.equal(left, true);
});

test('the fix is for the installed kafkajs, and applying it twice changes nothing', () => {
  assert.equal((require('kafkajs/package.json') as { version: string }).version, PATCHED_KAFKAJS);
  const Runner = require('kafkajs/src/consumer/runner') as { prototype: { fetch: unknown } };
  const once = Runner.prototype.fetch;
  fixRunnerStop();
  assert.equal(Runner.prototype.fetch, once);
});
