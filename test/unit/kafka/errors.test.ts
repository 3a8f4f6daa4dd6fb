/**
 * Kafka failures by kafkajs's own classes (issue 22): retriable ones and
 * what kafkajs gave up on after retrying them are transient; a refused login
 * or right, and every other non-retriable error, fatal, so ingest stops with
 * one line instead of retrying forever.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import kafkajs from 'kafkajs';
import { kafkaFailure, typedKafkaError } from '../../../src/kafka/errors.js';

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
  assert.equal(typedKafkaError(new KafkaJSConnectionError!('Connection error: connect ECONNREFUSED 127.0.0.1:9092', { code: 'ECONNREFUSED' })).kind, 'transient');
  assert.equal(typedKafkaError(new KafkaJSRequestTimeoutError!('Request Produce(key: 0, version: 7) timed out')).kind, 'transient');
  assert.equal(typedKafkaError(answer('NOT_LEADER_FOR_PARTITION', 6, true)).kind, 'transient');
  assert.equal(typedKafkaError(answer('NOT_COORDINATOR_FOR_GROUP', 16, true)).kind, 'transient');
});

test('what kafkajs gave up on after retrying a retriable error stays transient', () => {
  const exhausted = new KafkaJSNumberOfRetriesExceeded!(new KafkaJSConnectionError!('Connection error: read ECONNRESET'), { retryCount: 10, retryTime: 5000 });
  assert.equal(exhausted.retriable, false);
  assert.equal(typedKafkaError(exhausted).kind, 'transient');
  assert.equal(typedKafkaError(new KafkaJSGroupCoordinatorNotFound!('Failed to find group coordinator')).kind, 'transient');
  assert.equal(typedKafkaError(new KafkaJSLockTimeout!('Timeout while acquiring lock')).kind, 'transient');
});

test('a SASL refusal after start is fatal, bare or wrapped by the retrier', () => {
  const refused = new KafkaJSSASLAuthenticationError!('SASL SCRAM SHA256 authentication failed: invalid credentials');
  assert.equal(typedKafkaError(refused).kind, 'fatal');
  assert.equal(typedKafkaError(new KafkaJSNonRetriableError!(refused, { cause: refused })).kind, 'fatal');
  // A look-alike (kafkajs's name, no class of ours): fatal too.
  assert.equal(typedKafkaError(Object.assign(new Error('SASL PLAIN: invalid username or password'), { name: 'KafkaJSSASLAuthenticationError', retriable: false })).kind, 'fatal');
  assert.equal(typedKafkaError(answer('SASL_AUTHENTICATION_FAILED', 58, false)).kind, 'fatal');
  assert.equal(typedKafkaError(answer('ILLEGAL_SASL_STATE', 34, false)).kind, 'fatal');
});

test('authorization failures are fatal, even under a retriable wrapper', () => {
  for (const [type, code] of [
    ['TOPIC_AUTHORIZATION_FAILED', 29],
    ['GROUP_AUTHORIZATION_FAILED', 30],
    ['CLUSTER_AUTHORIZATION_FAILED', 31],
  ] as const) {
    assert.equal(typedKafkaError(answer(type, code, false)).kind, 'fatal', type);
    assert.equal(typedKafkaError(new KafkaJSNonRetriableError!(answer(type, code, false), { cause: answer(type, code, false) })).kind, 'fatal', `${type} wrapped`);
    assert.equal(typedKafkaError(Object.assign(new Error('x', { cause: answer(type, code, false) }), { name: 'KafkaJSError', retriable: true })).kind, 'fatal', `${type} under a retriable error`);
  }
});

test('other non-retriable kafkajs errors are fatal', () => {
  assert.equal(typedKafkaError(answer('MESSAGE_TOO_LARGE', 10, false)).kind, 'fatal');
  assert.equal(typedKafkaError(new KafkaJSServerDoesNotSupportApiKey!('The Kafka server does not support the requested API version')).kind, 'fatal');
  assert.equal(typedKafkaError(new KafkaJSNonRetriableError!('Invalid topics array')).kind, 'fatal');
});

test('not a kafkajs error: left to the other classifiers', () => {
  assert.equal(kafkaFailure(new Error('Code: 60. DB::Exception: Table x does not exist')), undefined);
  assert.equal(kafkaFailure('text'), undefined);
});
