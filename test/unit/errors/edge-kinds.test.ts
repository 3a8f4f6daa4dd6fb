/**
 * Which failures are retried, traced to a record, or fatal, as the two edges
 * type them (src/clickhouse/errors.ts, src/kafka/errors.ts): the ClickHouse
 * codes in both servers' formats, sockets, Kafka, a lost membership.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContentError, failureMessage, kindOf, OwnershipLost, ownershipLost, TimeoutError } from '../../../src/errors/errors.js';
import { clickhouseFailure, typedClickHouseError } from '../../../src/clickhouse/errors.js';
import { CommitNotSent, CoordinatorLost, membershipError, typedKafkaError } from '../../../src/kafka/errors.js';

/** An error as @clickhouse/client gives it for current servers: the code parsed out. */
const current = (code: number, message = 'DB::Exception: …'): Error => Object.assign(new Error(message), { code: String(code), type: 'X' });
/** As it gives it for 18.16: the code only in the message text. */
const old = (code: number): Error => new Error(`Code: ${code}, e.displayText() = DB::Exception: something, e.what() = DB::Exception`);

test('ClickHouse codes are classified the same in both error formats', () => {
  const cases: [number, string][] = [
    [25, 'content'], // a lone surrogate in a JSON string
    [62, 'content'], // a query over max_query_size
    [27, 'content'],
    [241, 'transient'], // memory limit
    [252, 'transient'], // too many parts
    [319, 'transient'], // unknown status of insert
    [209, 'transient'],
    [192, 'fatal'], // unknown user
    [193, 'fatal'], // wrong password
    [516, 'fatal'], // authentication failed (current)
    [81, 'fatal'], // unknown database: a setting, not a moment
    [60, 'fatal'], // unknown table: migrations not applied
  ];
  for (const [code, kind] of cases) {
    assert.equal(clickhouseFailure(current(code)), kind, `current format, code ${code}`);
    assert.equal(clickhouseFailure(old(code)), kind, `18.16 format, code ${code}`);
    assert.equal(typedClickHouseError(old(code)).kind, kind, `typed by the client, code ${code}`);
  }
});

test('the ClickHouse client types a failure once: its class by kind, the server code, the original as cause, the message unchanged', () => {
  const raw = old(25);
  const typed = typedClickHouseError(raw);
  assert.ok(typed instanceof ContentError);
  assert.equal(typed.code, 25);
  assert.equal(typed.cause, raw);
  assert.equal(typed.message, raw.message);
  assert.equal(typedClickHouseError(typed), typed, 'typed already: left as it is');
  assert.equal(kindOf(typed), 'content', 'above the edge, the class decides');
});

test('socket failures are transient, unknown errors fatal', () => {
  assert.equal(clickhouseFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' })), 'transient');
  assert.equal(clickhouseFailure(new Error('socket hang up')), 'transient');
  assert.equal(clickhouseFailure(new Error('Timeout error.')), 'transient');
  assert.equal(clickhouseFailure(new Error('wrapped', { cause: Object.assign(new Error('x'), { code: 'ECONNRESET' }) })), 'transient');
  assert.equal(clickhouseFailure(new Error('no stream for topic t')), 'fatal');
  assert.equal(clickhouseFailure('a string'), 'fatal');
  // A non-ClickHouse HTTP server's answer: no code, no socket error.
  assert.equal(clickhouseFailure(new Error('<html>502 Bad Gateway</html>')), 'fatal');
});

test('Kafka failures are retried unless the broker says a retry cannot help', () => {
  const kafkaError = (name: string, retriable: boolean, cause?: Error): Error => Object.assign(new Error(name, cause ? { cause } : {}), { name, retriable });
  assert.equal(typedKafkaError(kafkaError('KafkaJSConnectionError', true)).kind, 'transient');
  assert.equal(typedKafkaError(kafkaError('KafkaJSNumberOfRetriesExceeded', false, kafkaError('KafkaJSConnectionError', true))).kind, 'transient');
  assert.equal(typedKafkaError(kafkaError('KafkaJSProtocolError', false)).kind, 'fatal');
  assert.equal(typedKafkaError(kafkaError('KafkaJSNonRetriableError', false, kafkaError('KafkaJSProtocolError', false))).kind, 'fatal');
  assert.equal(typedKafkaError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })).kind, 'transient', 'a socket error without kafkajs');
  assert.equal(kindOf(new TimeoutError('offset commit', 'Kafka', 6000)), 'transient');
  assert.equal(kindOf(kafkaError('KafkaJSConnectionError', true)), 'fatal', 'an error no edge typed is fatal: the edges type every one');
});

test('a failure message becomes one bounded, well-formed line', () => {
  assert.equal(failureMessage(new Error('a\n  b\tc')), 'a b c');
  assert.equal(failureMessage(new Error('x'.repeat(50)), 10), `${'x'.repeat(10)}…`);
  // Cut inside a surrogate pair, or quoting a lone one: never a lone surrogate out.
  const cut = failureMessage(new Error(`${'x'.repeat(9)}😀`), 10);
  assert.equal(cut, `${'x'.repeat(9)}\ufffd…`);
  assert.equal(failureMessage(new Error('a\ud800b')), 'a\ufffdb');
});

test("a lost membership: the coordinator's refusals, wrapped or bare, and a commit the client did not send; not a broker's other errors", () => {
  const refusal = Object.assign(new Error('The coordinator is not aware of this member'), { type: 'UNKNOWN_MEMBER_ID' });
  const wrapped = new Error('retries exhausted', { cause: refusal });
  assert.equal(membershipError(refusal), refusal);
  assert.equal(membershipError(wrapped), refusal);
  const unsent = new CommitNotSent(2);
  assert.equal(membershipError(unsent), unsent, 'nothing proves the member still owns the partitions');
  assert.equal(kindOf(unsent), 'transient', 'the consumer restarts, and the records are read again');
  assert.equal(membershipError(Object.assign(new Error('leader not available'), { type: 'LEADER_NOT_AVAILABLE' })), undefined);
  assert.equal(membershipError(new Error('socket hang up')), undefined);
  // Typed at the edge: an OwnershipLost, the answer kept as cause (what kafkajs's runner is given back) and as code.
  const typed = typedKafkaError(wrapped);
  assert.ok(typed instanceof OwnershipLost);
  assert.equal(typed.code, 'UNKNOWN_MEMBER_ID');
  assert.equal(membershipError(typed), refusal);
  assert.equal(ownershipLost(new Error('outer', { cause: typed })), typed, 'found along the chain');
  assert.ok(unsent instanceof OwnershipLost && new CoordinatorLost(7000, new Error('x')) instanceof OwnershipLost);
  assert.ok(!(typedKafkaError(Object.assign(new Error('leader not available'), { name: 'KafkaJSProtocolError', type: 'LEADER_NOT_AVAILABLE', retriable: true })) instanceof OwnershipLost));
  // A commit between a stop and the next run (a rejoin, a restart): kafkajs's non-retriable "not initialized", a lost membership, not fatal.
  const notRunning = typedKafkaError(Object.assign(new Error('Consumer group was not initialized, consumer#run must be called first'), { name: 'KafkaJSNonRetriableError', retriable: false }));
  assert.ok(notRunning instanceof OwnershipLost, 'a commit of a consumer not running proves nothing');
  assert.equal(kindOf(notRunning), 'transient');
  assert.equal(typedKafkaError(Object.assign(new Error('Invalid topics array'), { name: 'KafkaJSNonRetriableError', retriable: false })).kind, 'fatal', 'its other non-retriable errors stay fatal');
});
