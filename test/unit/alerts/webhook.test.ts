/**
 * What a webhook's answer means for its delivery (issue 22): a 4xx other than
 * 408/429 and a payload that is not a notice fail the job at once (BullMQ's
 * UnrecoverableError); a 5xx, a 408, a 429 and no answer are retried. Against
 * an HTTP server on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { UnrecoverableError, type Job } from 'bullmq';
import { deliveryProcessor } from '../../../src/alerts/delivery.js';
import { step } from '../../../src/alerts/state.js';
import { noticeOf, postNotice, refusedForGood, type Notice } from '../../../src/alerts/webhook.js';
import { statedKind } from '../../../src/errors/errors.js';

let server: Server;
let base: string;
/** The status the server answers a request to /<status>. */
before(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(Number(req.url?.slice(1))).end('said so'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const n: Notice = noticeOf(
  step(undefined, { rule: 'chain_integrity', subject: 'loop:1', firing: true, severity: 'critical', detail: 'mismatch' }, Date.UTC(2026, 11, 1), 3_600_000).next!,
  'fired',
);
const hook = (status: number): { url: string; secret: undefined; timeoutMs: number } => ({ url: `${base}/${status}`, secret: undefined, timeoutMs: 5000 });
const job = (data: unknown): Job => ({ data }) as unknown as Job;

test('which answers no retry changes', () => {
  for (const s of [400, 401, 403, 404, 410, 413, 422]) assert.equal(refusedForGood(s), true, String(s));
  for (const s of [408, 429, 500, 502, 503, 504]) assert.equal(refusedForGood(s), false, String(s));
});

test('postNotice: a 4xx other than 408/429 is fatal, a 5xx, 408 or 429 transient', async () => {
  for (const [status, kind] of [
    [400, 'fatal'],
    [404, 'fatal'],
    [408, 'transient'],
    [429, 'transient'],
    [500, 'transient'],
    [503, 'transient'],
  ] as const) {
    const err = await postNotice(hook(status), n).then(
      () => assert.fail('resolved'),
      (e: unknown) => e,
    );
    assert.equal(statedKind(err), kind, String(status));
    assert.equal((err as Error).message, `webhook answered HTTP ${status} "said so"`);
  }
  await postNotice(hook(204), n);
});

test('postNotice: no answer is transient', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const err = await postNotice({ url: `http://127.0.0.1:${port}/hook`, secret: undefined, timeoutMs: 2000 }, n).catch((e: unknown) => e);
  assert.equal(statedKind(err), 'transient');
  assert.match((err as Error).message, /^webhook did not answer: connect ECONNREFUSED/);
});

test('the processor: UnrecoverableError for a refused answer and for a payload that is not a notice; a 503 is thrown for a retry', async () => {
  const refused = await deliveryProcessor(hook(400))(job(n)).catch((e: unknown) => e);
  assert.ok(refused instanceof UnrecoverableError);
  assert.equal(refused.message, 'webhook answered HTTP 400 "said so"');
  const invalid = await deliveryProcessor(hook(204))(job({ ...n, key: 'not a key' })).catch((e: unknown) => e);
  assert.ok(invalid instanceof UnrecoverableError);
  assert.match(invalid.message, /^not a notice: /);
  const later = await deliveryProcessor(hook(503))(job(n)).catch((e: unknown) => e);
  assert.ok(later instanceof Error && !(later instanceof UnrecoverableError));
  assert.equal(later.message, 'webhook answered HTTP 503 "said so"');
  // No webhook: nothing sent, nothing thrown; an invalid payload is still refused.
  await deliveryProcessor(undefined)(job(n));
  await assert.rejects(deliveryProcessor(undefined)(job({})), UnrecoverableError);
});
