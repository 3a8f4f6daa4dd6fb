/**
 * A Kafka producer whose sends check that kafkajs's answer covers every
 * partition they wrote to, and send again what it does not cover.
 *
 * kafkajs 2.2.4 (src/producer/sendMessages.js) sends one request per leader
 * and, on a retry, skips every broker that already answered. When a broker
 * dies in the middle of a send, its partitions' leadership moves; if it
 * moves to a broker that answered for its own partitions already, the retry
 * skips that broker and the dead broker's records are never sent, yet the
 * send resolves (tulios/kafkajs#1798, open; test/unit/kafka/checked-send.test.ts
 * reproduces it on kafkajs's own code). Most likely what the local cluster
 * showed: after a partition leader was SIGKILLed, the topic held 510 of the
 * 600 records a test had sent with acks=all. An idempotent producer does not help (the
 * records never leave). The answer says it, though: it has one entry per
 * partition the request reached, and none for the partitions skipped.
 *
 * So the partitioner records where it put each record (kafkajs's default
 * partitioner: murmur2 of the key, as the Java client), and a send whose
 * answer lacks partitions sends their records again, pinned to the same
 * partitions, until every partition is answered. Each partition's records
 * keep their order: a skipped partition got none of this send's records.
 */
import { Partitioners, type Kafka, type Message, type Producer, type ProducerConfig, type ProducerRecord, type RecordMetadata } from 'kafkajs';
import type { Logger } from '../observability/logger.js';

/** A record to send: key, value, headers (kafkajs's Message). */
export type OutgoingRecord = Message;

export interface CheckedProducer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  /** Resolves once every record is acknowledged by all in-sync replicas of its partition (acks=-1). */
  send(record: Omit<ProducerRecord, 'acks'>): Promise<void>;
}

/** The partitions a send's records went to that its answer does not cover, and those records (pinned to them). */
export function unanswered(topic: string, messages: readonly Message[], partitionOf: (m: Message) => number | undefined, answer: readonly RecordMetadata[]): Message[] {
  const answered = new Set(answer.filter((a) => a.topicName === topic).map((a) => a.partition));
  const missing: Message[] = [];
  for (const m of messages) {
    const partition = partitionOf(m);
    if (partition === undefined) throw new Error(`kafkajs sent a record to ${topic} without asking the partitioner`);
    if (!answered.has(partition)) missing.push({ ...m, partition });
  }
  return missing;
}

/** kafkajs's producer with `config`, its sends checked. The partitioner is kafkajs's default (murmur2 of the key). */
export function createCheckedProducer(kafka: Kafka, config: Omit<ProducerConfig, 'createPartitioner'>, log: Logger): CheckedProducer {
  const placed = new WeakMap<Message, number>();
  const producer: Producer = kafka.producer({
    ...config,
    createPartitioner: () => {
      const place = Partitioners.DefaultPartitioner();
      return (args) => {
        const partition = place(args);
        placed.set(args.message, partition);
        return partition;
      };
    },
  });
  return {
    connect: () => producer.connect(),
    disconnect: () => producer.disconnect(),
    async send(record) {
      let messages = record.messages;
      for (let round = 1; messages.length > 0; round++) {
        const answer = await producer.send({ ...record, acks: -1, messages });
        const missing = unanswered(record.topic, messages, (m) => placed.get(m), answer);
        if (missing.length > 0) {
          log.warn('Kafka\'s answer to a send lacks partitions it wrote to (kafkajs skipped a broker on retry, tulios/kafkajs#1798); sending their records again', {
            topic: record.topic,
            partitions: [...new Set(missing.map((m) => m.partition))].sort((a, b) => Number(a) - Number(b)),
            records: missing.length,
            round,
          });
        }
        messages = missing;
      }
    },
  };
}
