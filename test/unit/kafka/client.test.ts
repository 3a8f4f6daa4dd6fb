/**
 * What createKafka hands kafkajs: TLS/SASL options from the settings, a
 * bounded startup client beside a patient running one, kafkajs's stack
 * traces at debug, and a one-line error for brokers that do not answer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { logLevel, type LogEntry } from 'kafkajs';
import { parseConfig } from '../../../src/config/index.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createKafka, ensureTopics, kafkaClientConfig, kafkaErrorLevel, kafkaLogCreator, kafkaSecurityOptions } from '../../../src/kafka/client.js';
import { kafkaConnectFailure, KafkaUnavailableError } from '../../../src/kafka/errors.js';

const files: Record<string, Buffer> = { '/ca.pem': Buffer.from('CA'), '/cert.pem': Buffer.from('CERT'), '/key.pem': Buffer.from('KEY') };
const read = (path: string): Buffer => files[path] ?? assert.fail(`read ${path}`);

test('plaintext, no SASL: kafkajs gets neither option', () => {
  assert.deepEqual(kafkaSecurityOptions({ ssl: undefined, sasl: undefined }, read), {});
});

test('TLS without files uses the system CAs; with files, their contents', () => {
  assert.deepEqual(kafkaSecurityOptions({ ssl: {}, sasl: undefined }, read), { ssl: true });
  assert.deepEqual(kafkaSecurityOptions({ ssl: { caFile: '/ca.pem' }, sasl: undefined }, read), { ssl: { ca: [Buffer.from('CA')] } });
  assert.deepEqual(kafkaSecurityOptions({ ssl: { caFile: '/ca.pem', certFile: '/cert.pem', keyFile: '/key.pem' }, sasl: undefined }, read), {
    ssl: { ca: [Buffer.from('CA')], cert: Buffer.from('CERT'), key: Buffer.from('KEY') },
  });
});

test('SASL mechanisms map to kafkajs spelling', () => {
  for (const mechanism of ['plain', 'scram-sha-256', 'scram-sha-512'] as const) {
    assert.deepEqual(kafkaSecurityOptions({ ssl: undefined, sasl: { mechanism, username: 'u', password: 'p' } }, read), { sasl: { mechanism, username: 'u', password: 'p' } });
  }
});

test('the settings reach the client config; the startup client gives up far sooner than the running one', () => {
  const settings = parseConfig({ AGENTLEDGER_KAFKA_BROKERS: 'k1:9093,k2:9093', AGENTLEDGER_KAFKA_SASL_MECHANISM: 'scram-sha-256', AGENTLEDGER_KAFKA_SASL_USERNAME: 'u', AGENTLEDGER_KAFKA_SASL_PASSWORD: 'p' }).kafka;
  const log = createLogger('error', {}, { write: () => undefined });
  const running = kafkaClientConfig(settings, log, 'running');
  const startup = kafkaClientConfig(settings, log, 'startup');
  for (const c of [running, startup]) {
    assert.deepEqual(c.brokers, ['k1:9093', 'k2:9093']);
    assert.deepEqual(c.sasl, { mechanism: 'scram-sha-256', username: 'u', password: 'p' });
    assert.equal(c.ssl, undefined);
  }
  // Worst case of the retry schedule (no jitter): every attempt's connection timeout plus every wait.
  const worst = (c: typeof running): number => {
    const retries = c.retry?.retries ?? 5;
    let wait = c.retry?.initialRetryTime ?? 300;
    let total = (retries + 1) * (c.connectionTimeout ?? 1000);
    for (let i = 0; i < retries; i++, wait *= 2) total += Math.min(wait, c.retry?.maxRetryTime ?? 30_000);
    return total;
  };
  assert.ok(worst(startup) <= 10_000, `startup worst case ${worst(startup)} ms`);
  assert.ok(worst(running) >= 30_000, `running worst case ${worst(running)} ms: a broker restart must be ridden out`);
});

test('kafkajs errors are one line at the default level; their stacks, and all of a startup client, go to debug', () => {
  const lines: string[] = [];
  const entry = (message: string): LogEntry => ({ namespace: 'Connection', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: 't', logger: 'kafkajs', message, broker: 'k:1', stack: 'Error: boom\n    at x' } });
  kafkaLogCreator(createLogger('info', {}, { write: (l) => lines.push(l) }), 'running')?.(logLevel.WARN)(entry('Unexpected broker answer'));
  assert.equal(lines.length, 1);
  assert.match(lines[0] ?? '', /ERROR Unexpected broker answer component=kafkajs broker=k:1$/);
  lines.length = 0;
  kafkaLogCreator(createLogger('debug', {}, { write: (l) => lines.push(l) }), 'running')?.(logLevel.WARN)(entry('Unexpected broker answer'));
  assert.equal(lines.length, 2);
  assert.match(lines[1] ?? '', /DEBUG Unexpected broker answer \(stack\) component=kafkajs stack="Error: boom/);
  lines.length = 0;
  kafkaLogCreator(createLogger('info', {}, { write: (l) => lines.push(l) }), 'startup')?.(logLevel.WARN)(entry('Unexpected broker answer'));
  assert.deepEqual(lines, []);
});

test('what kafkajs retries is no error: broker error answers go to debug, lost connections are warnings said once per 10 s', () => {
  assert.equal(kafkaErrorLevel('Response JoinGroup(key: 11, version: 5)'), 'debug');
  assert.equal(kafkaErrorLevel('Response InitProducerId(key: 22, version: 1)'), 'debug');
  assert.equal(kafkaErrorLevel('Connection error: connect ECONNREFUSED 127.0.0.1:9092'), 'warn');
  assert.equal(kafkaErrorLevel('Failed to connect to seed broker, trying another broker from the list: Connection error'), 'warn');
  assert.equal(kafkaErrorLevel('Restarting the consumer in 300ms'), 'warn');
  assert.equal(kafkaErrorLevel('The coordinator is not aware of this member, re-joining the group'), 'warn');
  assert.equal(kafkaErrorLevel('The group is rebalancing, re-joining'), 'warn');
  assert.equal(kafkaErrorLevel('The coordinator is loading and hence can\'t process requests'), 'warn');
  assert.equal(kafkaErrorLevel('Crash: KafkaJSNonRetriableError: Snappy compression not implemented'), 'error');
  const lines: string[] = [];
  let t = 0;
  const write = kafkaLogCreator(createLogger('info', {}, { write: (l) => lines.push(l) }), 'running', () => t)?.(logLevel.WARN);
  const entry = (message: string): LogEntry => ({ namespace: 'Connection', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: 't', logger: 'kafkajs', message } });
  write?.(entry('Response JoinGroup(key: 11, version: 5)'));
  assert.deepEqual(lines, [], 'a retried error answer is not shown at info');
  for (let retry = 0; retry < 5; retry++, t += 1000) write?.(entry(`Connection error: connect ECONNREFUSED 127.0.0.1:${9092 + retry}`));
  assert.equal(lines.length, 1, lines.join('\n'));
  assert.match(lines[0] ?? '', /^\S+ WARN {2}Connection error: connect ECONNREFUSED 127\.0\.0\.1:9092 component=kafkajs$/);
  t += 10_000;
  write?.(entry('Connection error: connect ECONNREFUSED 127.0.0.1:9092'));
  assert.equal(lines.length, 2);
  assert.match(lines[1] ?? '', /repeatedBefore=4$/);
});

test('unreachable brokers and a refused SASL login are explained in one line naming the settings', () => {
  const refused = new Error('Connection error: connect ECONNREFUSED 127.0.0.1:1');
  const down = kafkaConnectFailure('127.0.0.1:1', refused);
  assert.ok(down instanceof KafkaUnavailableError);
  assert.match(down.message, /^Kafka at 127\.0\.0\.1:1 did not answer \(Connection error: connect ECONNREFUSED 127\.0\.0\.1:1\): .*AGENTLEDGER_KAFKA_BROKERS/);
  assert.equal(down.cause, refused);
  const sasl = Object.assign(new Error('SASL SCRAM SHA256 authentication failed'), { name: 'KafkaJSSASLAuthenticationError' });
  const wrapped = Object.assign(new Error('retries exceeded'), { cause: sasl });
  assert.match(kafkaConnectFailure('k:9093', wrapped).message, /^Kafka at k:9093 refused the SASL login .*AGENTLEDGER_KAFKA_SASL_PASSWORD/);
  const plaintextListener = Object.assign(new Error('Request is not valid given the current SASL state'), { type: 'ILLEGAL_SASL_STATE' });
  assert.match(kafkaConnectFailure('k:9092', plaintextListener).message, /^Kafka at k:9092 refused the SASL login \(Request is not valid given the current SASL state\): /);
});

test('ensureTopics against a closed port fails with that one line, in seconds', { timeout: 20_000 }, async () => {
  const settings = parseConfig({ AGENTLEDGER_KAFKA_BROKERS: '127.0.0.1:1' }).kafka;
  const lines: string[] = [];
  const kafka = createKafka(settings, createLogger('info', {}, { write: (l) => lines.push(l) }));
  await assert.rejects(ensureTopics(kafka, [{ topic: 'x' }]), (err: unknown) => {
    assert.ok(err instanceof KafkaUnavailableError);
    assert.match(err.message, /^Kafka at 127\.0\.0\.1:1 did not answer .*ECONNREFUSED/);
    return true;
  });
  assert.deepEqual(lines, [], 'the startup client logs nothing at info');
});

/** A kafkajs-like Kafka whose admin creates topics the broker then answers for as `metadata` says, call by call. */
function fakeKafka(create: () => Promise<void>, metadata: (() => unknown)[]): { kafka: Parameters<typeof ensureTopics>[0]; asked: () => number } {
  let asked = 0;
  const admin = {
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
    listTopics: () => Promise.resolve([]),
    createTopics: create,
    fetchTopicMetadata: () => {
      const answer = metadata[Math.min(asked++, metadata.length - 1)]!;
      return Promise.resolve().then(answer);
    },
  };
  return { kafka: { admin: () => admin } as unknown as Parameters<typeof ensureTopics>[0], asked: () => asked };
}

const unknownTopic = (): Error => Object.assign(new Error('This server does not host this topic-partition'), { type: 'UNKNOWN_TOPIC_OR_PARTITION', retriable: true });
const withLeader = (leader: number) => (): unknown => ({ topics: [{ name: 't', partitions: [{ partitionId: 0, leader }] }] });

test('ensureTopics: topics the controller created but the broker asked does not know yet are waited for until each partition has a leader', async () => {
  const { kafka, asked } = fakeKafka(
    () => Promise.reject(unknownTopic()),
    [
      () => {
        throw unknownTopic();
      },
      withLeader(-1),
      withLeader(1),
    ],
  );
  await ensureTopics(kafka, [{ topic: 't' }]);
  assert.equal(asked(), 3, 'asked until the leader was named');
});

test('ensureTopics: any other failure of the creation is the one-line error, without waiting for leaders', async () => {
  const refused = Object.assign(new Error('Not authorized to access topics'), { type: 'TOPIC_AUTHORIZATION_FAILED' });
  const { kafka, asked } = fakeKafka(() => Promise.reject(refused), [withLeader(1)]);
  await assert.rejects(ensureTopics(kafka, [{ topic: 't' }]), (err: unknown) => {
    assert.ok(err instanceof KafkaUnavailableError);
    assert.match(err.message, /^Kafka at the configured brokers: creating topic\(s\) t failed \(Not authorized to access topics\)/);
    return true;
  });
  assert.equal(asked(), 0);
});
