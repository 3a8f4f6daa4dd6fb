/**
 * Step 4 (src/ingest/retry.ts) without services: a batch's work retried
 * through transient failures with heartbeats, abandoned when retrying cannot
 * help. The wait between tries is a fake that returns at once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentledgerError, OwnershipLost, ownershipLost, TimeoutError } from '../../../src/errors/errors.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { BatchRetry } from '../../../src/ingest/retry.js';
import { CoordinatorLost } from '../../../src/kafka/errors.js';

interface Seen {
  retried: string[];
  fatal: Error[];
  heartbeatsFailed: number;
  waits: number[];
  heartbeats: number;
}

function retrier(options: { stopping?: () => boolean; heartbeat?: () => Promise<void>; clock?: { now: () => number; advance: (ms: number) => void } } = {}): { retry: BatchRetry; seen: Seen; heartbeat: () => Promise<void>; metrics: ReturnType<typeof createMetrics> } {
  const seen: Seen = { retried: [], fatal: [], heartbeatsFailed: 0, waits: [], heartbeats: 0 };
  const metrics = createMetrics();
  const retry = new BatchRetry({
    log: createLogger('error', {}, { write: () => undefined }),
    metrics,
    sessionTimeoutMs: 6000,
    stopping: options.stopping ?? (() => false),
    onRetry: (m) => seen.retried.push(m),
    onFatal: (e) => seen.fatal.push(e),
    onHeartbeatFailed: () => seen.heartbeatsFailed++,
    sleep: (ms) => {
      seen.waits.push(ms);
      options.clock?.advance(ms);
      return Promise.resolve();
    },
    ...(options.clock ? { now: options.clock.now } : {}),
  });
  const heartbeat =
    options.heartbeat ??
    (() => {
      seen.heartbeats++;
      return Promise.resolve();
    });
  return { retry, seen, heartbeat, metrics };
}

/** Work that fails with `failures` in turn, then succeeds; counts its runs. */
function work(failures: Error[]): { run: () => Promise<void>; runs: () => number } {
  let runs = 0;
  return {
    run: () => {
      const f = failures[runs++];
      return f === undefined ? Promise.resolve() : Promise.reject(f);
    },
    runs: () => runs,
  };
}

const transient = (m = 'socket hang up'): Error => new AgentledgerError('transient', m);
const running = (): boolean => true;

test('transient failures are retried with growing waits, at most 5 s apart, until the work succeeds', async () => {
  const { retry, seen, heartbeat } = retrier();
  const w = work(Array.from({ length: 8 }, (_, i) => transient(`try ${i}`)));
  await retry.untilDone({ heartbeat, isRunning: running }, {}, w.run);
  assert.equal(w.runs(), 9);
  assert.deepEqual(seen.waits, [250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
  assert.deepEqual(seen.retried, Array.from({ length: 8 }, (_, i) => `try ${i}`), 'each failure told (the stall watchdog says the last)');
  assert.ok(seen.heartbeats >= 9, 'a heartbeat after every try and wait');
});

test('the paused gauge is 1 while a batch waits and 0 once it is done', async () => {
  const { retry, heartbeat, metrics } = retrier();
  let during = -1;
  const w = work([transient()]);
  await retry.untilDone({ heartbeat, isRunning: running }, {}, async () => {
    if (w.runs() === 1) during = (await metrics.paused.get()).values[0]?.value ?? -1;
    await w.run();
  });
  assert.equal(during, 1);
  assert.equal((await metrics.paused.get()).values[0]?.value, 0);
});

test('a lost membership ends the batch at once: no retry (the next owner reads the records again)', async () => {
  const { retry, seen, heartbeat } = retrier();
  const lost = new OwnershipLost('The coordinator is not aware of this member', { code: 'UNKNOWN_MEMBER_ID' });
  const w = work([new AgentledgerError('transient', 'wrapped', { cause: lost })]);
  await assert.rejects(retry.untilDone({ heartbeat, isRunning: running }, {}, w.run), /not aware of this member/);
  assert.equal(w.runs(), 1);
  assert.deepEqual(seen.waits, []);
});

test('a runner kafkajs stopped: its batch is abandoned, not retried', async () => {
  const { retry, seen, heartbeat } = retrier();
  const w = work([transient()]);
  await assert.rejects(retry.untilDone({ heartbeat, isRunning: () => false }, {}, w.run), /the batch is abandoned: socket hang up/);
  assert.deepEqual(seen.waits, []);
});

test('stopping: a failure ends the batch as it came', async () => {
  const { retry, heartbeat } = retrier({ stopping: () => true });
  const failure = transient();
  await assert.rejects(retry.untilDone({ heartbeat, isRunning: running }, {}, work([failure]).run), (e) => e === failure);
});

test('a failure of kind content or fatal is told to onFatal and thrown, never retried', async () => {
  for (const kind of ['content', 'fatal'] as const) {
    const { retry, seen, heartbeat } = retrier();
    const w = work([new AgentledgerError(kind, `a ${kind} failure`)]);
    await assert.rejects(retry.untilDone({ heartbeat, isRunning: running }, {}, w.run), new RegExp(`a ${kind} failure`));
    assert.equal(w.runs(), 1);
    assert.equal(seen.fatal.length, 1);
    assert.deepEqual(seen.waits, []);
  }
});

test('a heartbeat that fails (the broker restarting) is one more failed try, and the member is told it may be fenced', async () => {
  let beats = 0;
  const { retry, seen } = retrier();
  const heartbeat = (): Promise<void> => (++beats === 1 ? Promise.reject(transient('broker away')) : Promise.resolve());
  const w = work([]);
  await retry.untilDone({ heartbeat, isRunning: running }, {}, w.run);
  assert.equal(w.runs(), 2, 'the work is run again after the failed heartbeat');
  assert.deepEqual(seen.retried, ['broker away']);
  assert.deepEqual(seen.waits, [250]);
});

test('a heartbeat on the timer that fails during long work fails the try once the work is over, and says so at once', async () => {
  const { retry, seen } = retrier();
  let beats = 0;
  const heartbeat = (): Promise<void> => (++beats === 1 ? Promise.reject(transient('coordinator away')) : Promise.resolve());
  let runs = 0;
  await retry.untilDone({ heartbeat, isRunning: running }, {}, async () => {
    runs++;
    // Long enough for the timer (every 600 ms at a 6 s session) to beat once.
    if (runs === 1) await new Promise((r) => setTimeout(r, 700));
  });
  assert.equal(runs, 2);
  assert.equal(seen.heartbeatsFailed, 1);
  assert.deepEqual(seen.retried, ['coordinator away']);
});

/** A clock the work and the fake waits move forward. */
function fakeClock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

test('no heartbeat reaching the coordinator for longer than the session timeout: the batch gives up as a lost membership typed for kafkajs to join again (which finds the coordinator afresh)', async () => {
  const clock = fakeClock();
  const heartbeat = (): Promise<void> => Promise.reject(transient('Connection error: connect ECONNREFUSED 127.0.0.1:19093'));
  const { retry, seen } = retrier({ heartbeat, clock });
  const w = work(Array.from({ length: 100 }, () => transient('ownership check (offset commit): no answer from Kafka in 6000 ms')));
  const slow = async (): Promise<void> => {
    clock.advance(1_000);
    await w.run();
  };
  const err = await retry.untilDone({ heartbeat, isRunning: running }, {}, slow).catch((e: unknown) => e);
  assert.ok(err instanceof CoordinatorLost, String(err));
  assert.equal(err.type, 'NOT_COORDINATOR_FOR_GROUP');
  assert.equal(ownershipLost(err), err, 'a lost membership: the buffer is dropped');
  assert.match(err.message, /no heartbeat reached the group coordinator for \d+ ms, longer than the session timeout/);
  // Retried (waits growing, each heartbeat after one refused) until 6 s of silence, not for ever.
  const waited = seen.waits.reduce((a, b) => a + b, 0);
  assert.ok(waited + w.runs() * 1_000 > 6_000 && waited < 12_000, `waited ${waited} ms over ${w.runs()} tries`);
  assert.ok(seen.retried.length >= 3, `${seen.retried.length} failures retried`);

  // The next batch kafkajs hands out before it joins again gives up at its first failure.
  const next = work([transient('no answer'), transient('no answer')]);
  const again = await retry.untilDone({ heartbeat, isRunning: running }, {}, next.run).catch((e: unknown) => e);
  assert.ok(again instanceof CoordinatorLost);
  assert.equal(next.runs(), 1);
});

test('offset commits the coordinator leaves unanswered for longer than the session timeout, heartbeats resolving all along: the batch gives up as CoordinatorLost', async () => {
  const clock = fakeClock();
  const { retry, seen, heartbeat } = retrier({ clock });
  // Each commit waits out its 6 s, as kafkajs's offset manager does toward a coordinator that is gone.
  const w = work(Array.from({ length: 100 }, () => new TimeoutError('ownership check (offset commit)', 'Kafka', 6000)));
  const commit = async (): Promise<void> => {
    clock.advance(6_000);
    await w.run();
  };
  const err = await retry.untilDone({ heartbeat, isRunning: running }, {}, commit).catch((e: unknown) => e);
  assert.ok(err instanceof CoordinatorLost, String(err));
  assert.equal(ownershipLost(err), err, 'a lost membership: the buffer is dropped');
  assert.match(err.message, /^no request of this batch answered by the group coordinator for \d+ ms, longer than the session timeout/);
  assert.equal(w.runs(), 2, 'the first unanswered commit is retried once; the second ends the batch');
  assert.ok(seen.heartbeats > 0, 'the heartbeats resolved meanwhile');
});

test('a ClickHouse call that times out, the coordinator answering: retried, never taken for a lost coordinator', async () => {
  const clock = fakeClock();
  const { retry, heartbeat } = retrier({ clock });
  const w = work(Array.from({ length: 10 }, () => new TimeoutError('insert', 'ClickHouse', 5_000)));
  await retry.untilDone({ heartbeat, isRunning: running }, {}, async () => {
    clock.advance(5_000);
    await w.run();
  });
  assert.equal(w.runs(), 11, 'retried through ten timeouts, 50 s and more');
});

test('failures with heartbeats answered (ClickHouse away, the coordinator fine) are retried for as long as they last, however long', async () => {
  const clock = fakeClock();
  const { retry, heartbeat } = retrier({ clock });
  const w = work(Array.from({ length: 30 }, () => transient('ClickHouse: connect ECONNREFUSED')));
  await retry.untilDone({ heartbeat, isRunning: running }, {}, async () => {
    clock.advance(5_000);
    await w.run();
  });
  assert.equal(w.runs(), 31, 'retried through 150 s of failures and waits');
});
