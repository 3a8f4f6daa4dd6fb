/**
 * Alert deliveries (issue 11) through real BullMQ on the stack's Redis to a
 * real HTTP receiver on 127.0.0.1 that checks every signature: a receiver
 * that fails three times then recovers gets each transition exactly once,
 * whoever enqueued it and however often; one that never recovers leaves the
 * delivery in the failed set, with its reason. An answer no retry changes (a
 * 400) fails the delivery at its first attempt; a 503 is retried.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Queue, Worker } from 'bullmq';
import { deliveryProcessor, enqueueNotice, failedDeliveries } from '../../src/alerts/delivery.js';
import type { AlertCondition } from '../../src/alerts/condition.js';
import { step, type AlertState } from '../../src/alerts/state.js';
import { notice, noticeOf, type Notice } from '../../src/alerts/webhook.js';
import { ALERT_DELIVERIES_QUEUE } from '../../src/jobs/queues.js';
import { createRedis } from '../../src/jobs/redis.js';
import { testContext, type TestContext } from '../support/context.js';
import { sleep } from '../support/processes.js';
import { webhookReceiver, type Received } from '../support/webhook-receiver.js';

const SECRET = 'receiver-shared-secret';
let ctx: TestContext;

before(async () => {
  ctx = await testContext('alert_delivery');
});
after(async () => {
  await ctx.cleanup();
});

const cond = (firing: boolean, detail: string): AlertCondition => ({ rule: 'chain_integrity', subject: 'loop-ω:1', firing, severity: firing ? 'critical' : 'info', detail });

/** The three notices of one episode: fired, a reminder an interval later, resolved. */
function episode(): Notice[] {
  const t0 = Date.UTC(2026, 11, 1, 6, 0, 0);
  const notices: Notice[] = [];
  let state: AlertState | undefined;
  for (const [now, c] of [[t0, cond(true, 'mismatch at seq 7')], [t0 + 3_600_000, cond(true, 'mismatch at seq 7')], [t0 + 3_700_000, cond(false, 'no violation')]] as const) {
    const s = step(state, c, now, 3_600_000);
    state = s.next;
    if (s.notify !== undefined) notices.push(noticeOf(s.next!, s.notify));
  }
  assert.deepEqual(notices.map((n) => n.notification), ['fired', 'renotified', 'resolved']);
  return notices;
}

/** A receiver refusing its first `failures` requests, and a deliveries queue and worker of their own posting to it; all closed after `body`. */
async function withDeliveries(name: string, failures: number, body: (queue: Queue, got: Received[], url: string) => Promise<void>, failWith = 500): Promise<void> {
  const { url, got, close } = await webhookReceiver(SECRET, failures, failWith);
  const redis = createRedis(ctx.config.redis.url);
  const blocking = redis.duplicate();
  const prefix = `${ctx.config.redis.queuePrefix}_${name}`;
  const queue = new Queue(ALERT_DELIVERIES_QUEUE, { connection: redis, prefix });
  const worker = new Worker(ALERT_DELIVERIES_QUEUE, deliveryProcessor({ url, secret: SECRET, timeoutMs: 5000 }), { connection: blocking, prefix });
  try {
    await body(queue, got, url);
  } finally {
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    blocking.disconnect();
    redis.disconnect();
    await close();
  }
}

async function until(what: string, done: () => boolean): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (done()) return;
    await sleep(100);
  }
  assert.fail(`not within 60 s: ${what}`);
}

test('a receiver that fails three times then recovers gets each transition once, signed, whoever enqueued it', { timeout: 90_000 }, async () => {
  await withDeliveries('ok', 3, async (queue, got) => {
    const notices = episode();
    const fast = { backoff: { type: 'exponential', delay: 50 } };
    // Two workers reached the same transitions; one of them twice.
    for (const n of [...notices, ...notices, notices[0]!]) await enqueueNotice(queue, n, fast);
    await until('three accepted deliveries', () => got.filter((r) => r.status === 200).length >= 3);
    // Nothing more arrives: no duplicate was queued behind them.
    await sleep(1500);
    const accepted = got.filter((r) => r.status === 200);
    assert.deepEqual(accepted.map((r) => r.key).sort(), notices.map((n) => n.key).sort(), 'one accepted delivery per transition');
    assert.equal(got.length, 6, 'three refused, three accepted');
    assert.ok(got.every((r) => r.signed), 'every request carries the HMAC of its body');
    for (const r of accepted) {
      const body = notice.parse(JSON.parse(r.body));
      assert.equal(body.key, r.key, 'the idempotency key is the body\'s key');
      assert.match(body.text, /^\[(critical|info)\] chain_integrity (firing|still firing|resolved): loop-ω:1: /);
    }
    assert.deepEqual(await failedDeliveries(queue), []);
  });
});

test('a receiver that never takes it: the delivery ends in the failed set with the reason, after its attempts', { timeout: 90_000 }, async () => {
  await withDeliveries('fail', Number.MAX_SAFE_INTEGER, async (queue, got, url) => {
    const [fired] = episode();
    await enqueueNotice(queue, fired!, { attempts: 3, backoff: { type: 'exponential', delay: 50 } });
    let failed: Awaited<ReturnType<typeof failedDeliveries>> = [];
    for (let i = 0; i < 600 && failed.length === 0; i++) {
      await sleep(100);
      failed = await failedDeliveries(queue);
    }
    assert.equal(failed.length, 1);
    assert.equal(failed[0]!.notice.key, fired!.key);
    assert.equal(failed[0]!.attempts, 3);
    assert.match(failed[0]!.reason, /^webhook answered HTTP 500 "not now"$/);
    assert.equal(got.length, 3, 'one request per attempt');
    assert.ok(!failed[0]!.reason.includes(url), 'the URL (it may hold a token) is not in the reason');
  });
});

/** The failed set's deliveries, once there are `n`. */
async function failedOnce(queue: Queue, n = 1): Promise<Awaited<ReturnType<typeof failedDeliveries>>> {
  let failed: Awaited<ReturnType<typeof failedDeliveries>> = [];
  for (let i = 0; i < 600 && failed.length < n; i++) {
    await sleep(100);
    failed = await failedDeliveries(queue);
  }
  return failed;
}

test('a 400 answer fails the delivery at once: one request, one attempt made, of eight', { timeout: 90_000 }, async () => {
  await withDeliveries(
    'refused',
    Number.MAX_SAFE_INTEGER,
    async (queue, got) => {
      const [fired] = episode();
      // The default options (8 attempts), backoff shortened: a retry would come within a second.
      await enqueueNotice(queue, fired!, { backoff: { type: 'exponential', delay: 50 } });
      const failed = await failedOnce(queue);
      assert.equal(failed.length, 1);
      assert.equal(failed[0]!.attempts, 1, 'attempts made');
      assert.match(failed[0]!.reason, /^webhook answered HTTP 400 "not now"$/);
      await sleep(1500);
      assert.equal(got.length, 1, 'delivered once, never retried');
      assert.equal((await queue.getJob(fired!.key))?.opts.attempts, 8);
    },
    400,
  );
});

test('a 503 answer is retried until the receiver takes it', { timeout: 90_000 }, async () => {
  await withDeliveries(
    'later',
    2,
    async (queue, got) => {
      const [fired] = episode();
      await enqueueNotice(queue, fired!, { backoff: { type: 'exponential', delay: 50 } });
      await until('an accepted delivery', () => got.some((r) => r.status === 200));
      assert.deepEqual(
        got.map((r) => r.status),
        [503, 503, 200],
      );
      assert.deepEqual(await failedDeliveries(queue), []);
    },
    503,
  );
});
