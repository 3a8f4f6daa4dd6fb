/**
 * sources/: Kafka (client, topics, producer, the ingest consumer loop) and the
 * craze journal reader. This file is the one place a kafkajs client, topic or
 * producer is made; kafkajs's own log lines go through agentledger's logger.
 */
import { Kafka, logLevel as KafkaLogLevel, Partitioners, type LogEntry, type Producer } from 'kafkajs';
import type { Config } from '../config/index.js';
import type { Logger } from '../observability/logger.js';

export function createKafka(settings: Config['kafka'], log: Logger): Kafka {
  const kafkaLog = log.child({ component: 'kafkajs' });
  return new Kafka({
    clientId: settings.clientId,
    brokers: [...settings.brokers],
    connectionTimeout: 5_000,
    retry: { initialRetryTime: 300, retries: 8 },
    logLevel: KafkaLogLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const { message, ...fields } = entry;
        delete (fields as Record<string, unknown>)['timestamp'];
        delete (fields as Record<string, unknown>)['logger'];
        if (level <= KafkaLogLevel.ERROR) kafkaLog.error(message, fields);
        else if (level === KafkaLogLevel.WARN) kafkaLog.warn(message, fields);
        else kafkaLog.debug(message, fields);
      },
  });
}

/** Creates the topics agentledger reads and writes if they do not exist yet. */
export async function ensureTopics(
  kafka: Kafka,
  topics: readonly { topic: string; numPartitions?: number; configEntries?: { name: string; value: string }[] }[],
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.topic));
    if (missing.length === 0) return;
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((t) => ({ topic: t.topic, numPartitions: t.numPartitions ?? 4, replicationFactor: 1, configEntries: t.configEntries ?? [] })),
    });
  } finally {
    await admin.disconnect();
  }
}

/** Topic config for topics agentledger creates: room for large records and their dead letters. */
export const TOPIC_CONFIG = [{ name: 'max.message.bytes', value: String(16 * 1024 * 1024) }];

/**
 * A producer that writes each record once and in order (idempotent, one
 * request in flight) and retries until it gets through: what the dead letters
 * and `craze push` need, since their senders commit progress after a send.
 */
export function createReliableProducer(kafka: Kafka): Producer {
  return kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: Number.MAX_SAFE_INTEGER, maxRetryTime: 30_000 },
  });
}
