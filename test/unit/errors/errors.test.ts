/**
 * The error kinds (issue 22): an AgentledgerError says its kind, `within`
 * throws a TimeoutError (transient), `causes` walks the cause chain once for
 * everyone, one socket code list, one failure message.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AgentledgerError,
  asError,
  causes,
  ContentError,
  failureMessage,
  FatalError,
  SOCKET_CODES,
  socketCode,
  statedKind,
  TimeoutError,
  TransientError,
  within,
  kindOf,
} from '../../../src/errors/errors.js';
import { clickhouseFailure } from '../../../src/clickhouse/errors.js';
import { typedKafkaError } from '../../../src/kafka/errors.js';

test('each class carries its kind and its cause; the kind is found along the chain', () => {
  const cause = new Error('under');
  for (const [err, kind] of [
    [new TransientError('t', { cause }), 'transient'],
    [new ContentError('c', { cause }), 'content'],
    [new FatalError('f', { cause }), 'fatal'],
  ] as const) {
    assert.ok(err instanceof AgentledgerError);
    assert.equal(err.kind, kind);
    assert.equal(err.cause, cause);
    assert.equal(statedKind(err), kind);
    assert.equal(statedKind(new Error('wrapped', { cause: err })), kind, 'an AgentledgerError under a plain Error');
    assert.equal(kindOf(err), kind, 'a decision takes the stated kind');
  }
  assert.equal(statedKind(new Error('plain')), undefined);
  assert.equal(statedKind('a string'), undefined);
});

test('within: the value in time, else a TimeoutError, which is transient', async () => {
  assert.equal(await within(Promise.resolve(7), 1000, 'x'), 7);
  const err = await within(new Promise(() => undefined), 20, 'offset commit').then(
    () => assert.fail('no timeout'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof TimeoutError);
  assert.equal(err.message, 'offset commit: no answer from Kafka in 20 ms');
  assert.equal(err.kind, 'transient');
  assert.equal(kindOf(err), 'transient');
  assert.equal(clickhouseFailure(err), 'transient');
  const redis = await within(new Promise(() => undefined), 10, 'alert evaluation', 'Redis').catch((e: unknown) => e);
  assert.ok(redis instanceof TimeoutError);
  assert.equal(redis.message, 'alert evaluation: no answer from Redis in 10 ms');
  // A failure of the call itself comes through as it is.
  await assert.rejects(within(Promise.reject(new Error('refused')), 1000, 'x'), /^Error: refused$/);
});

test('ingest no longer reads timeouts from message text', () => {
  // The old recognition by text is gone: only the class says "timed out".
  assert.equal(kindOf(new Error('offset commit: no answer from Kafka in 6000 ms')), 'fatal');
});

test('causes walks outermost first, at most five deep, and stops at a cycle', () => {
  const a = new Error('a');
  const b = new Error('b', { cause: a });
  const c = new Error('c', { cause: b });
  assert.deepEqual([...causes(c)], [c, b, a]);
  assert.deepEqual([...causes('text')], []);
  let deep: Error = new Error('0');
  for (let i = 1; i < 10; i++) deep = new Error(String(i), { cause: deep });
  assert.equal([...causes(deep)].length, 5);
  const loop = new Error('loop') as Error & { cause?: unknown };
  loop.cause = loop;
  assert.deepEqual([...causes(loop)], [loop]);
});

test('a wrapped ECONNRESET deep in a cause chain is transient', () => {
  const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
  const wrapped = new Error('outer', { cause: new Error('middle', { cause: new Error('inner', { cause: reset }) }) });
  assert.equal(socketCode(wrapped), 'ECONNRESET');
  assert.equal(clickhouseFailure(wrapped), 'transient');
  assert.equal(typedKafkaError(wrapped).kind, 'transient');
  // Beyond five levels it is not looked for (no library wraps that deep).
  let deeper: Error = reset;
  for (let i = 0; i < 5; i++) deeper = new Error(`level ${i}`, { cause: deeper });
  assert.equal(socketCode(deeper), undefined);
});

test('one socket code list: the union of the two lists it replaces', () => {
  const sinkList = ['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'EAI_AGAIN', 'ENOTFOUND', 'UND_ERR_SOCKET'];
  const clientList = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'ECONNABORTED'];
  assert.deepEqual([...SOCKET_CODES].sort(), [...new Set([...sinkList, ...clientList])].sort());
  for (const code of SOCKET_CODES) assert.equal(clickhouseFailure(Object.assign(new Error(code), { code })), 'transient', code);
  assert.equal(socketCode(Object.assign(new Error('x'), { code: 'ENOENT' })), undefined);
});

test('failureMessage: one line for an Error, String() for anything else', () => {
  assert.equal(failureMessage(new Error('a\n  b')), 'a b');
  assert.equal(failureMessage('plain text'), 'plain text');
  assert.equal(failureMessage(42), '42');
  assert.equal(failureMessage(undefined), 'undefined');
  const e = new Error('x');
  assert.equal(asError(e), e);
  assert.equal(asError('y').message, 'y');
});
