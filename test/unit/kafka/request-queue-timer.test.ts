/**
 * src/kafka/request-queue-timer.ts on kafkajs's own RequestQueue method: the
 * delay that Node 23 and later warn about (tulios/kafkajs#1751) is floored
 * at Node's 1 ms, and every other delay is the one kafkajs sets.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { fixRequestQueueTimer } from '../../../src/kafka/request-queue-timer.js';

const require = createRequire(import.meta.url);

interface Queue {
  throttledUntil: number;
  throttleCheckTimeoutId: (NodeJS.Timeout & { _idleTimeout?: number }) | null;
  pending: unknown[];
  checks: number;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

const RequestQueue = require('kafkajs/src/network/requestQueue') as { prototype: Queue };
/** kafkajs's method as shipped, kept before the fix replaces it. */
const shipped = RequestQueue.prototype.scheduleCheckPendingRequests;

/** A queue on kafkajs's prototype with only what the scheduling reads; `checked` resolves when its check runs. */
function queue(throttledUntil: number, pending: unknown[]): { q: Queue; checked: Promise<void> } {
  let done!: () => void;
  const checked = new Promise<void>((resolve) => (done = resolve));
  const q = Object.assign(Object.create(RequestQueue.prototype) as Queue, {
    throttledUntil,
    throttleCheckTimeoutId: null,
    pending,
    checks: 0,
    checkPendingRequests(this: Queue) {
      this.checks++;
      done();
    },
  });
  return { q, checked };
}

/** The warnings the process emits while `fn` runs and its timer fires. */
async function warningsOf(fn: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const onWarning = (w: Error): void => void seen.push(w.name);
  // Node's own printer is a listener too: held back, so the witness below
  // does not print a warning into the suite's output.
  const printers = process.listeners('warning');
  process.removeAllListeners('warning');
  process.on('warning', onWarning);
  try {
    await fn();
    // Warnings are emitted on the next tick after the timer is made.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
    for (const printer of printers) process.on('warning', printer);
  }
  return seen;
}

const nodeMajor = Number(process.versions.node.split('.')[0]);

test('as shipped, an unthrottled queue schedules its check at minus the epoch (Node 23+ warn about it)', async () => {
  const { q, checked } = queue(-1, []);
  const warnings = await warningsOf(async () => {
    shipped.call(q);
    assert.ok(q.throttleCheckTimeoutId !== null);
    await checked;
  });
  if (nodeMajor >= 23) assert.deepEqual(warnings, ['TimeoutNegativeWarning']);
  else assert.deepEqual(warnings, [], `Node ${process.versions.node} has no TimeoutNegativeWarning`);
});

test('fixed: the same queue is checked after 1 ms with no warning; waiting requests after 10 ms; a throttle at its end', async () => {
  fixRequestQueueTimer();
  fixRequestQueueTimer(); // once per process, whoever asks
  assert.notEqual(RequestQueue.prototype.scheduleCheckPendingRequests, shipped);

  const idle = queue(-1, []);
  const warnings = await warningsOf(async () => {
    idle.q.scheduleCheckPendingRequests();
    assert.equal(idle.q.throttleCheckTimeoutId?._idleTimeout, 1);
    await idle.checked;
  });
  assert.deepEqual(warnings, []);
  assert.equal(idle.q.checks, 1);
  assert.equal(idle.q.throttleCheckTimeoutId, null, 'the timer clears its id before it checks, as kafkajs does');

  const waiting = queue(-1, [{}]);
  waiting.q.scheduleCheckPendingRequests();
  assert.equal(waiting.q.throttleCheckTimeoutId?._idleTimeout, 10);
  await waiting.checked;

  const throttled = queue(Date.now() + 5_000, [{}]);
  throttled.q.scheduleCheckPendingRequests();
  const delay = throttled.q.throttleCheckTimeoutId?._idleTimeout ?? 0;
  assert.ok(delay > 4_000 && delay <= 5_000, `the throttle's end, ${delay} ms`);
  // A second schedule while one is pending adds no timer.
  const first = throttled.q.throttleCheckTimeoutId;
  throttled.q.scheduleCheckPendingRequests();
  assert.equal(throttled.q.throttleCheckTimeoutId, first);
  clearTimeout(first!);
});
