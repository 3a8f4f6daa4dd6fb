/**
 * kafkajs's own send (src/producer/sendMessages.js) over a fake cluster of
 * two brokers, through the fault src/kafka/checked-send.ts guards: the
 * leader of partition 1 dies during a send, its leadership moves to the
 * broker that already answered for partition 0, and the retry skips that
 * broker. As shipped the send resolves with partition 1's records sent
 * nowhere; the checked send sends them again, once, to the new leader.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import type { Kafka, Message, ProducerConfig, RecordMetadata } from 'kafkajs';
import { createLogger } from '../../../src/observability/logger.js';
import { createCheckedProducer, unanswered } from '../../../src/kafka/checked-send.js';

const require = createRequire(import.meta.url);
const TOPIC = 't';

type Produce = (request: { topicData: { topic: string; partitions: { partition: number; messages: Message[] }[] }[] }) => Promise<unknown>;
type SendMessages = (request: { acks: number; topicMessages: { topic: string; messages: Message[] }[] }) => Promise<RecordMetadata[]>;

/** Brokers 1 and 2; 2 leads partition 1 until its first produce fails, when partition 1 moves to 1. */
function leaderDiesMidSend(): { sendMessages: (partitioner: unknown) => SendMessages; received: Map<number, string[]> } {
  const leaders = new Map([
    [0, 1],
    [1, 2],
  ]);
  const received = new Map<number, string[]>();
  const answer = (topicData: Parameters<Produce>[0]['topicData']): unknown => ({
    topics: topicData.map(({ topic, partitions }) => ({
      topicName: topic,
      partitions: partitions.map(({ partition, messages }) => {
        received.set(partition, [...(received.get(partition) ?? []), ...messages.map((m) => String(m.value))]);
        return { partition, errorCode: 0, baseOffset: '0', logAppendTime: '-1', logStartOffset: '0' };
      }),
    })),
  });
  const brokers = new Map<number, { nodeId: number; produce: Produce }>([
    [1, { nodeId: 1, produce: ({ topicData }) => Promise.resolve(answer(topicData)) }],
    [
      2,
      {
        nodeId: 2,
        produce: async () => {
          await new Promise((resolve) => setImmediate(resolve));
          leaders.set(1, 1);
          throw Object.assign(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:19093'), { name: 'KafkaJSConnectionError', retriable: true });
        },
      },
    ],
  ]);
  const cluster = {
    refreshMetadataIfNecessary: () => Promise.resolve(),
    refreshMetadata: () => Promise.resolve(),
    addMultipleTargetTopics: () => Promise.resolve(),
    isConnected: () => true,
    removeBroker: () => undefined,
    findTopicPartitionMetadata: () => [...leaders].map(([partitionId, leader]) => ({ partitionId, leader })),
    findLeaderForPartitions: (_topic: string, partitions: string[]) => {
      const per: Record<number, number[]> = {};
      for (const p of partitions.map(Number)) (per[leaders.get(p)!] ??= []).push(p);
      return per;
    },
    findBroker: ({ nodeId }: { nodeId: number }) => Promise.resolve(brokers.get(Number(nodeId))),
  };
  const eosManager = {
    acquireBrokerLock: () => Promise.resolve(),
    releaseBrokerLock: () => Promise.resolve(),
    isTransactional: () => false,
    getSequence: () => 0,
    updateSequence: () => undefined,
    getProducerId: () => -1,
    getProducerEpoch: () => 0,
  };
  const logger = { namespace: () => logger, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  const createSendMessages = require('kafkajs/src/producer/sendMessages') as (deps: Record<string, unknown>) => SendMessages;
  const createRetry = require('kafkajs/src/retry') as (options: Record<string, number>) => unknown;
  return {
    received,
    sendMessages: (partitioner) => createSendMessages({ logger, cluster, partitioner, eosManager, retrier: createRetry({ retries: 5, initialRetryTime: 1, maxRetryTime: 5 }) }),
  };
}

const MESSAGES: Message[] = [
  { partition: 0, value: 'a0' },
  { partition: 1, value: 'b0' },
  { partition: 0, value: 'a1' },
  { partition: 1, value: 'b1' },
];

test('kafkajs as shipped: the send resolves, answered for partition 0 only, and partition 1\'s records were sent nowhere', async () => {
  const cluster = leaderDiesMidSend();
  const answer = await cluster.sendMessages(({ message }: { message: Message }) => message.partition)({ acks: -1, topicMessages: [{ topic: TOPIC, messages: MESSAGES }] });
  assert.deepEqual(
    answer.map((a) => a.partition),
    [0],
  );
  assert.deepEqual([...cluster.received], [[0, ['a0', 'a1']]]);
});

test('the checked send finds partition 1 unanswered, sends its records again to its new leader, once and in order, and says so', async () => {
  const cluster = leaderDiesMidSend();
  const kafka = {
    producer: (config: ProducerConfig) => {
      const send = cluster.sendMessages(config.createPartitioner!());
      return {
        connect: () => Promise.resolve(),
        disconnect: () => Promise.resolve(),
        send: ({ topic, messages, acks }: { topic: string; messages: Message[]; acks: number }) => send({ acks, topicMessages: [{ topic, messages }] }),
      };
    },
  } as unknown as Kafka;
  const lines: string[] = [];
  const producer = createCheckedProducer(kafka, {}, createLogger('warn', {}, { format: 'json', write: (line) => lines.push(line) }));
  await producer.send({ topic: TOPIC, messages: MESSAGES });
  assert.deepEqual(
    [...cluster.received].sort(([a], [b]) => a - b),
    [
      [0, ['a0', 'a1']],
      [1, ['b0', 'b1']],
    ],
  );
  assert.equal(lines.length, 1);
  const said = JSON.parse(lines[0]!) as { msg: string; partitions: number[]; records: number; round: number };
  assert.match(said.msg, /lacks partitions it wrote to/);
  assert.deepEqual([said.partitions, said.records, said.round], [[1], 2, 1]);
});

test('unanswered: the records of partitions the answer lacks, pinned to them; an answer for another topic does not count; a record never placed is an error', () => {
  const placed = new Map<Message, number>(MESSAGES.map((m) => [m, m.partition!]));
  const answer = [{ topicName: TOPIC, partition: 0, errorCode: 0 }, { topicName: 'other', partition: 1, errorCode: 0 }] as RecordMetadata[];
  assert.deepEqual(
    unanswered(TOPIC, MESSAGES, (m) => placed.get(m), answer).map((m) => [m.value, m.partition]),
    [
      ['b0', 1],
      ['b1', 1],
    ],
  );
  assert.deepEqual(unanswered(TOPIC, MESSAGES, (m) => placed.get(m), [...answer, { topicName: TOPIC, partition: 1, errorCode: 0 }]), []);
  assert.throws(() => unanswered(TOPIC, [{ value: 'x' }], () => undefined, answer), /without asking the partitioner/);
});
