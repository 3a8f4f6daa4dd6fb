/**
 * The consumer group over kafkajs (src/kafka/contract.ts's KafkaGroup): the
 * membership and its events, offsets committed only when the coordinator
 * acknowledged them, the group's commits and lag, the dead-letter producer.
 */
import type { ConsumerRunConfig, Kafka } from 'kafkajs';
import type { Config } from '../config/index.js';
import { createReliableProducer, ensureTopics, TOPIC_CONFIG } from './client.js';
import { undecodableBatch } from './codecs.js';
import type { GroupListener, KafkaGroup } from './contract.js';
import { CommitNotSent, kafkajsRejoinsOn, membershipError, typed } from './errors.js';
import { uncommittedRecords } from './lag.js';

const commitKey = (topic: string, partition: number | string, offset: string): string => `${topic}:${String(partition)}:${offset}`;

/** The consumer group, its admin and the dead-letter producer over kafkajs: what `agentledger ingest` runs on. */
export function kafkaGroup(kafka: Kafka, config: Config): KafkaGroup {
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
  const acknowledged = new Set<string>();
  consumer.on(consumer.events.COMMIT_OFFSETS, ({ payload }) => {
    for (const t of payload.topics) for (const p of t.partitions) acknowledged.add(commitKey(t.topic, p.partition, String(p.offset)));
  });
  // What run() was given, for rejoin() to run the consumer again with.
  let running: ConsumerRunConfig | undefined;
  let listener: GroupListener | undefined;
  // Joins this member made (GROUP_JOIN): the generation each assignment belongs to.
  let generation = 0;
  return {
    ensureTopics: (names) => ensureTopics(kafka, names.map((topic) => ({ topic, configEntries: TOPIC_CONFIG }))),
    connect: async () => {
      await producer.connect();
      await consumer.connect();
    },
    listen: (to) => {
      listener = to;
      consumer.on(consumer.events.REBALANCING, () => to.rebalancing());
      consumer.on(consumer.events.GROUP_JOIN, (e) => to.joined(e.payload.memberId, ++generation, e.payload.memberAssignment));
      // A fetch whose records kafkajs filtered out (control records, an
      // aborted transaction's) never reaches eachBatch: its end is the only
      // sign of it.
      consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
        if (payload.batchSize === 0) to.filtered(payload.topic, payload.partition, payload.lastOffset);
      });
      // A batch kafkajs cannot decode crashes the consumer with a bare codec error: typed here with where it is.
      consumer.on(consumer.events.CRASH, (e) => to.crashed(undecodableBatch(e.payload.error) ?? e.payload.error, e.payload.restart));
      // kafkajs emits these only for an answer: a heartbeat it did not send (its interval not over) or that failed says nothing.
      consumer.on(consumer.events.HEARTBEAT, () => to.coordinatorAnswered());
      consumer.on(consumer.events.COMMIT_OFFSETS, () => to.coordinatorAnswered());
    },
    run: async (names, eachBatch) => {
      await consumer.subscribe({ topics: [...names], fromBeginning: true });
      running = {
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 1,
        eachBatch: async (payload) => {
          try {
            // The heartbeat's failures typed as the rest (a membership answer: OwnershipLost).
            await eachBatch({ ...payload, heartbeat: () => typed(payload.heartbeat()) });
          } catch (err) {
            // A lost membership (a membership answer, a batch that gave up on
            // a silent coordinator): kafkajs's runner joins the group again
            // only when it meets the bare error, not one wrapping it. The
            // member is told its partitions are going, so that it does not
            // act on them meanwhile (the coordinator watch once left and ran
            // the consumer on top of kafkajs's own join, which left
            // kafkajs's fetchers spinning: runner-stop.ts).
            const lost = membershipError(err);
            if (lost !== undefined && kafkajsRejoinsOn(lost)) {
              listener?.rebalancing();
              throw lost;
            }
            throw err;
          }
        },
      };
      await consumer.run(running);
    },
    rejoin: async () => {
      if (running === undefined) return;
      // disconnect() stops the runner, which waits for the batch in hand
      // (its isRunning() turns false) and leaves the group, ignoring a
      // coordinator that does not answer; then it closes every broker
      // connection and forgets the metadata (leaders, coordinator). The
      // subscription is kept. run() connects again, reads fresh metadata and
      // joins through a live broker; while none answers, kafkajs's own crash
      // and restart loop retries.
      await consumer.disconnect();
      await consumer.run(running);
    },
    commit: async (positions) => {
      const keys = positions.map((p) => commitKey(p.topic, p.partition, p.offset));
      for (const k of keys) acknowledged.delete(k);
      try {
        await typed(consumer.commitOffsets([...positions]));
        if (!keys.every((k) => acknowledged.has(k))) throw new CommitNotSent(keys.length);
      } finally {
        for (const k of keys) acknowledged.delete(k);
      }
    },
    seek: (topic, partition, offset) => consumer.seek({ topic, partition, offset }),
    pause: (names) => consumer.pause(names.map((topic) => ({ topic }))),
    sendDeadLetters: async (letters) => {
      await typed(
        producer.send({
          topic: topics.deadLetter,
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
        }),
      );
    },
    committedOffsets: (topic) =>
      typed(
        (async () => {
          const admin = kafka.admin();
          await admin.connect();
          try {
            const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
            return new Map((offsets?.partitions ?? []).map((p) => [p.partition, { offset: p.offset, metadata: p.metadata }]));
          } finally {
            await admin.disconnect();
          }
        })(),
      ),
    uncommitted: (names, owned) => typed(uncommittedRecords(kafka, groupId, names, owned)),
    disconnect: async () => {
      await consumer.disconnect();
      await producer.disconnect();
    },
  };
}
