/**
 * The stall watchdog alone, on a fake clock: it fires once, only when no
 * progress was made for its whole period while records wait (or Kafka does
 * not answer), and never while ingest is idle with nothing to do.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StallWatchdog, type StallWatchdogPorts } from '../../../src/ingest/stall-watchdog.js';

function harness(waiting: () => Promise<bigint>, lastFailure?: string) {
  const state = { now: 1_000_000, progress: 1_000_000, observed: [] as number[], stalls: [] as string[], idles: 0 };
  const ports: StallWatchdogPorts = {
    stallMs: 60_000,
    now: () => state.now,
    lastProgress: () => state.progress,
    idle: () => {
      state.idles++;
      state.progress = state.now;
    },
    waiting,
    lastFailure: () => lastFailure,
    observe: (s) => state.observed.push(s),
    stalled: (why) => state.stalls.push(why),
  };
  return { state, dog: new StallWatchdog(ports) };
}

test('records waiting and no progress for the whole period: one stall, saying how many wait and the last failure', async () => {
  let asked = 0;
  const { state, dog } = harness(() => {
    asked++;
    return Promise.resolve(42n);
  }, 'ECONNRESET from ClickHouse');
  state.now += 59_999;
  await dog.check();
  assert.equal(asked, 0, 'not asked before the period is over');
  assert.deepEqual(state.stalls, []);
  state.now += 1;
  await dog.check();
  assert.equal(state.stalls.length, 1);
  assert.match(state.stalls[0] ?? '', /^no rows made durable for 60 s while 42 record\(s\) wait in this member's partitions; last failure: ECONNRESET from ClickHouse$/);
  state.now += 120_000;
  await dog.check();
  assert.equal(state.stalls.length, 1, 'said once');
  assert.deepEqual(state.observed, [59, 60]);
});

test('nothing waiting is idleness, not a stall: the clock starts again', async () => {
  const { state, dog } = harness(() => Promise.resolve(0n));
  state.now += 61_000;
  await dog.check();
  assert.deepEqual(state.stalls, []);
  assert.equal(state.idles, 1);
  state.now += 59_000;
  await dog.check();
  assert.deepEqual(state.stalls, [], 'the period counts from the idle check');
});

test('progress made meanwhile, or Kafka not answering the check', async () => {
  const late = harness(() => Promise.resolve(5n));
  late.state.now += 30_000;
  late.state.progress = late.state.now;
  late.state.now += 59_000;
  await late.dog.check();
  assert.deepEqual(late.state.stalls, [], 'progress 59 s ago is no stall');

  const racing = harness(() => {
    racing.state.progress = racing.state.now; // a flush landed while the check ran
    return Promise.resolve(7n);
  });
  racing.state.now += 70_000;
  await racing.dog.check();
  assert.deepEqual(racing.state.stalls, []);

  const away = harness(() => Promise.reject(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:9092')));
  away.state.now += 60_000;
  await away.dog.check();
  assert.equal(away.state.stalls.length, 1);
  assert.match(away.state.stalls[0] ?? '', /while Kafka did not answer the lag check \(Connection error: connect ECONNREFUSED/);
});

/** The harness with the remedy: a rejoin after 20 s, a join resetting lastProgress as kafkajs's does. */
function withRejoin(waiting: () => Promise<bigint>) {
  const h = harness(waiting);
  const remedy = { inHand: false, durable: 1_000_000, rejoins: [] as string[], held: [] as string[] };
  const dog = new StallWatchdog({
    stallMs: 60_000,
    now: () => h.state.now,
    lastProgress: () => h.state.progress,
    idle: () => {
      h.state.idles++;
      h.state.progress = h.state.now;
    },
    waiting,
    lastFailure: () => undefined,
    observe: () => undefined,
    stalled: (why) => h.state.stalls.push(why),
    rejoin: {
      afterMs: 20_000,
      batchInHand: () => remedy.inHand,
      lastDurable: () => remedy.durable,
      rejoin: (why) => {
        remedy.rejoins.push(why);
        h.state.progress = h.state.now; // the join that follows
        return Promise.resolve();
      },
      held: (why) => remedy.held.push(why),
    },
  });
  return { state: h.state, remedy, dog };
}

test('the remedy first: no batch in hand and records waiting, a rejoin once per stall; the exit still comes if it does not help', async () => {
  const { state, remedy, dog } = withRejoin(() => Promise.resolve(9n));
  state.now += 19_999;
  await dog.check();
  assert.deepEqual(remedy.rejoins, []);
  state.now += 1;
  await dog.check();
  assert.equal(remedy.rejoins.length, 1);
  assert.match(remedy.rejoins[0]!, /^no rows made durable for 20 s while 9 record\(s\) wait in this member's partitions, and no batch in hand$/);
  // Joined, still nothing durable: no second rejoin in the same stall, and the exit comes a period after the join.
  state.now += 59_999;
  await dog.check();
  assert.equal(remedy.rejoins.length, 1, 'once per stall');
  assert.deepEqual(state.stalls, []);
  state.now += 1;
  await dog.check();
  assert.equal(state.stalls.length, 1, 'then the exit, for the supervisor');
});

test('the remedy waits while a batch is in hand (ingest\'s own retries), and a stall after durable rows may try it again', async () => {
  const { state, remedy, dog } = withRejoin(() => Promise.resolve(3n));
  remedy.inHand = true;
  state.now += 30_000;
  await dog.check();
  await dog.check();
  assert.deepEqual(remedy.rejoins, [], 'a batch in hand: ClickHouse or Kafka are being retried, not a stuck fetch');
  assert.equal(remedy.held.length, 1, 'said once per stall');
  assert.match(remedy.held[0]!, /^no rows made durable for 30 s with a batch in hand/);
  remedy.inHand = false;
  await dog.check();
  assert.equal(remedy.rejoins.length, 1);
  // Rows made durable end the stall; the next one may rejoin again.
  state.now += 5_000;
  remedy.durable = state.progress = state.now;
  state.now += 20_000;
  await dog.check();
  assert.equal(remedy.rejoins.length, 2);
  assert.deepEqual(state.stalls, []);
});

test('the remedy never runs while nothing waits', async () => {
  const { state, remedy, dog } = withRejoin(() => Promise.resolve(0n));
  state.now += 50_000;
  await dog.check();
  assert.deepEqual(remedy.rejoins, []);
  assert.equal(state.idles, 1);
});

test('a rejoin that never ends holds nothing back: the exit still comes', async () => {
  const h = harness(() => Promise.resolve(4n));
  let tried = 0;
  const dog = new StallWatchdog({
    stallMs: 60_000,
    now: () => h.state.now,
    lastProgress: () => h.state.progress,
    idle: () => undefined,
    waiting: () => Promise.resolve(4n),
    lastFailure: () => undefined,
    observe: () => undefined,
    stalled: (why) => h.state.stalls.push(why),
    rejoin: { afterMs: 20_000, batchInHand: () => false, lastDurable: () => 0, rejoin: () => (tried++, new Promise<void>(() => undefined)) },
  });
  h.state.now += 20_000;
  await dog.check();
  assert.equal(tried, 1);
  h.state.now += 40_000;
  await dog.check();
  assert.equal(h.state.stalls.length, 1);
});
