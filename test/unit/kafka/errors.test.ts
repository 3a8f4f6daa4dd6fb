/**
 * Kafka failures by kafkajs's own classes (issue 22): retriable ones and
 * what kafkajs gave up on after retrying them are transient; a refused login
 * or right, and every other non-retriable error, fatal, so ingest stops with
 * one line instead of retrying forever.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import kafkajs from 'kafkajs';
import { failureKind } from '../../../src/ingest/failures.js';
import { kafkaFailure } from '../../../src/kafka/errors.js';

/** kafkajs's classes, as its JavaScript has them (its typings lack some constructors' arguments). */
type Ctor = new (...args: unknown[]) => Error & { retriable?: boolean };
const k = kafkajs as unknown as Record<string, Ctor>;
const {
  KafkaJSConnectionError,
  KafkaJSGroupCoordinatorNotFound,
  KafkaJSLockTimeout,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSRequestTimeoutError,
  KafkaJSSASLAuthenticationError,
  KafkaJSServerDoesNotSupportApiKey,
} = k;

/** A broker's error answer, as kafkajs's protocol layer makes it. */
const answer = (type: string, code: number, retriable: boolean): Error => new KafkaJSProtocolError!({ message: type, type, code, retriable });

test('retriable kafkajs errors are transient', () => {
  assert.equal(failureKind(new KafkaJSConnectionError!('Connection error: connect ECONNREFUSED 127.0.0.1:9092', { code: 'ECONNREFUSED' })), 'transient');
  assert.equal(failureKind(new KafkaJSRequestTimeoutError!('Request Produce(key: 0, version: 7) timed out')), 'transient');
  assert.equal(failureKind(answer('NOT_LEADER_FOR_PARTITION', 6, true)), 'transient');
  assert.equal(failureKind(answer('NOT_COORDINATOR_FOR_GROUP', 16, true)), 'transient');
});

test('what kafkajs gave up on after retrying a retriable error stays transient', () => {
  const exhausted = new KafkaJSNumberOfRetriesExceeded!(new KafkaJSConnectionError!('Connection error: read ECONNRESET'), { retryCount: 10, retryTime: 5000 });
  assert.equal(exhausted.retriable, false);
  assert.equal(failureKind(exhausted), 'transient');
  assert.equal(failureKind(new KafkaJSGroupCoordinatorNotFound!('Failed to find group coordinator')), 'transient');
  assert.equal(failureKind(new KafkaJSLockTimeout!('Timeout while acquiring lock')), 'transient');
});

test('a SASL refusal after start is fatal, bare or wrapped by the retrier', () => {
  const refused = new KafkaJSSASLAuthenticationError!('SASL SCRAM SHA256 authentication failed: invalid credentials');
  assert.equal(failureKind(refused), 'fatal');
  assert.equal(failureKind(new KafkaJSNonRetriableError!(refused, { cause: refused })), 'fatal');
  // A look-alike (kafkajs's name, no class of ours): fatal too.
  assert.equal(failureKind(Object.assign(new Error('SASL PLAIN: invalid username or password'), { name: 'KafkaJSSASLAuthenticationError', retriable: false })), 'fatal');
  assert.equal(failureKind(answer('SASL_AUTHENTICATION_FAILED', 58, false)), 'fatal');
  assert.equal(failureKind(answer('ILLEGAL_SASL_STATE', 34, false)), 'fatal');
});

test('authorization failures are fatal, even under a retriable wrapper', () => {
  for (const [type, code] of [
    ['TOPIC_AUTHORIZATION_FAILED', 29],
    ['GROUP_AUTHORIZATION_FAILED', 30],
    ['CLUSTER_AUTHORIZATION_FAILED', 31],
  ] as const) {
    assert.equal(failureKind(answer(type, code, false)), 'fatal', type);
    assert.equal(failureKind(new KafkaJSNonRetriableError!(answer(type, code, false), { cause: answer(type, code, false) })), 'fatal', `${type} wrapped`);
    assert.equal(failureKind(Object.assign(new Error('x', { cause: answer(type, code, false) }), { name: 'KafkaJSError', retriable: true })), 'fatal', `${type} under a retriable error`);
  }
});

test('other non-retriable kafkajs errors are fatal', () => {
  assert.equal(failureKind(answer('MESSAGE_TOO_LARGE', 10, false)), 'fatal');
  assert.equal(failureKind(new KafkaJSServerDoesNotSupportApiKey!('The Kafka server does not support the requested API version')), 'fatal');
  assert.equal(failureKind(new KafkaJSNonRetriableError!('Invalid topics array')), 'fatal');
});

test('not a kafkajs error: left to the other classifiers', () => {
  assert.equal(kafkaFailure(new Error('Code: 60. DB::Exception: Table x does not exist')), undefined);
  assert.equal(kafkaFailure('text'), undefined);
});
