import { TransientError } from '../observability/errors.js';
import { settleQuery } from '../sink/clickhouse/sql.js';
import { createReliableProducer, ensureTopics, TOPIC_CONFIG } from '../sources/kafka.js';
import { uncommittedRecords } from './lag.js';
/**
 * An offset commit kafkajs did not send: its runner was not running (stopping,
 * or restarting after a crash, while it waits for the batch in flight), and
 * then consumer.commitOffsets returns as if it had committed. Nothing proves
 * this member still owns the partitions, so it counts as a lost membership
 * (membershipError, by its `type`): the fence refuses the flush and the buffer
 * is dropped, to be read again by whoever owns the partitions next.
 */
export class CommitNotSent extends TransientError {
    name = 'CommitNotSent';
    type = 'CONSUMER_NOT_RUNNING';
    constructor(partitions) {
        super(`offset commit of ${partitions} partition(s) not sent: the consumer is not running (stopping, or restarting after a crash); ownership is not proven`);
    }
}
const commitKey = (topic, partition, offset) => `${topic}:${String(partition)}:${offset}`;
/** The edges over kafkajs and ClickHouse: what `agentledger ingest` runs on. */
export function kafkaEdges(kafka, clickhouse, config) {
    const { groupId, sessionTimeoutMs, fetchPartitionBytes, topics } = config.kafka;
    const consumer = kafka.consumer({
        groupId,
        sessionTimeout: sessionTimeoutMs,
        heartbeatInterval: Math.max(1000, Math.floor(sessionTimeoutMs / 10)),
        // One fetch is judged as one batch: its size bounds the records in memory at once.
        maxBytesPerPartition: fetchPartitionBytes,
        maxBytes: 8 * fetchPartitionBytes,
    });
    const producer = createReliableProducer(kafka);
    // What the coordinator acknowledged, as kafkajs reports each commit it sent
    // (synchronously, before commitOffsets resolves): how commit() tells a
    // commit from the silent return of a runner that is not running.
    const acknowledged = new Set();
    consumer.on(consumer.events.COMMIT_OFFSETS, ({ payload }) => {
        for (const t of payload.topics)
            for (const p of t.partitions)
                acknowledged.add(commitKey(t.topic, p.partition, String(p.offset)));
    });
    return {
        ensureTopics: (names) => ensureTopics(kafka, names.map((topic) => ({ topic, configEntries: TOPIC_CONFIG }))),
        connect: async () => {
            await producer.connect();
            await consumer.connect();
        },
        listen: (listener) => {
            consumer.on(consumer.events.REBALANCING, () => listener.rebalancing());
            consumer.on(consumer.events.GROUP_JOIN, (e) => listener.joined(e.payload.memberId, e.payload.memberAssignment));
            consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => listener.batchEnded(payload.topic, payload.partition, payload.batchSize, payload.lastOffset));
            consumer.on(consumer.events.CRASH, (e) => listener.crashed(e.payload.error, e.payload.restart));
        },
        run: async (names, eachBatch) => {
            await consumer.subscribe({ topics: [...names], fromBeginning: true });
            await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: 1, eachBatch });
        },
        commit: async (positions) => {
            const keys = positions.map((p) => commitKey(p.topic, p.partition, p.offset));
            for (const k of keys)
                acknowledged.delete(k);
            try {
                await consumer.commitOffsets([...positions]);
                if (!keys.every((k) => acknowledged.has(k)))
                    throw new CommitNotSent(keys.length);
            }
            finally {
                for (const k of keys)
                    acknowledged.delete(k);
            }
        },
        seek: (topic, partition, offset) => consumer.seek({ topic, partition, offset }),
        pause: (names) => consumer.pause(names.map((topic) => ({ topic }))),
        sendDeadLetters: async (letters) => {
            await producer.send({
                topic: topics.deadLetter,
                acks: -1,
                messages: letters.map((d) => ({
                    key: d.record.key,
                    value: d.record.value,
                    headers: {
                        ...d.record.headers,
                        'x-agentledger-reason': d.reason,
                        'x-source-topic': d.record.topic,
                        'x-source-partition': String(d.record.partition),
                        'x-source-offset': d.record.offset,
                    },
                })),
            });
        },
        settle: (queryId) => settleQuery(clickhouse, queryId),
        committedOffsets: async (topic) => {
            const admin = kafka.admin();
            await admin.connect();
            try {
                const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
                return new Map((offsets?.partitions ?? []).map((p) => [p.partition, { offset: p.offset, metadata: p.metadata }]));
            }
            finally {
                await admin.disconnect();
            }
        },
        uncommitted: (names, owned) => uncommittedRecords(kafka, groupId, names, owned),
        disconnect: async () => {
            await consumer.disconnect();
            await producer.disconnect();
        },
    };
}
//# sourceMappingURL=group.js.map