/** A test context's envelope topic (and its dead-letter topic), made and filled with records keyed as the runtime keys them. */
import { Partitioners } from 'kafkajs';
import { createLogger } from '../../src/observability/logger.js';
import { createKafka, ensureTopics, TOPIC_CONFIG } from '../../src/sources/kafka.js';
export async function produceEnvelopes(ctx, records, partitions = 3) {
    const kafka = createKafka(ctx.config.kafka, createLogger('error'));
    const topic = ctx.config.kafka.topics.envelopes;
    await ensureTopics(kafka, [
        { topic, numPartitions: partitions, configEntries: TOPIC_CONFIG },
        { topic: ctx.config.kafka.topics.deadLetter, numPartitions: 1, configEntries: TOPIC_CONFIG },
    ]);
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    try {
        await producer.send({ topic, acks: -1, messages: records.map((r) => ({ key: r.key, value: r.value })) });
    }
    finally {
        await producer.disconnect();
    }
}
//# sourceMappingURL=envelope-topic.js.map