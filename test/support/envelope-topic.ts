/** A test context's envelope topic (and its dead-letter topic), made and filled with records keyed as the runtime keys them. */
import { createLogger } from '../../src/observability/logger.js';
import { createKafka, createProducer, ensureTopics, TOPIC_CONFIG } from '../../src/kafka/client.js';
import type { TestContext } from './context.js';

export async function produceEnvelopes(ctx: TestContext, records: readonly { readonly key: string; readonly value: Buffer }[], partitions = 3): Promise<void> {
  // At warn: a send the checked producer had to make again says so.
  const kafka = createKafka(ctx.config.kafka, createLogger('warn'));
  const topic = ctx.config.kafka.topics.envelopes;
  await ensureTopics(kafka, [
    { topic, numPartitions: partitions, configEntries: TOPIC_CONFIG },
    { topic: ctx.config.kafka.topics.deadLetter, numPartitions: 1, configEntries: TOPIC_CONFIG },
  ]);
  // Checked (src/kafka/checked-send.ts): kafkajs alone can resolve a send that skipped a dead leader's records.
  const producer = createProducer(kafka);
  await producer.connect();
  try {
    await producer.send({ topic, messages: records.map((r) => ({ key: r.key, value: r.value })) });
  } finally {
    await producer.disconnect();
  }
}
