/**
 * The consumer group over kafkajs (src/kafka/contract.ts's KafkaGroup): the
 * membership and its events, offsets committed only when the coordinator
 * acknowledged them, the group's commits and lag, the dead-letter producer,
 * and the coordinator watch (coordinator-watch.ts): a member whose
 * coordinator has been silent for a session leaves and joins again, telling
 * its listener `lost` first.
 */
import type { ConsumerRunConfig, Kafka } from 'kafkajs';
import type { Config } from '../config/index.js';
import { asError, ownershipLost, within } from '../errors/errors.js';
import { createReliableProducer, ensureTopics, TOPIC_CONFIG } from './client.js';
import { undecodableBatch } from './codecs.js';
import type { GroupListener, KafkaGroup } from './contract.js';
import { CoordinatorWatch } from './coordinator-watch.js';
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
  // Whether the member holds a generation: joined, and no rebalance, restart,
  // rejoin or stop under way (kafkajs joins by itself then: a leave and join
  // of ours on top of it once left its fetchers spinning, runner-stop.ts).
  let settled = false;
  let stopping = false;
  let rejoining: Promise<void> | undefined;
  let watchTimer: NodeJS.Timeout | undefined;
  const watch = new CoordinatorWatch({ silenceMs: sessionTimeoutMs, now: Date.now, settled: () => settled, rejoin: (why) => leaveAndJoin(why) });
  /**
   * A request to the coordinator (a commit, a heartbeat), bounded by the
   * session timeout and told to the watch: a failure without an answer
   * starts its count; a lost membership is the coordinator's answer.
   */
  const toCoordinator = async <T>(request: Promise<T>, what: string): Promise<T> => {
    try {
      const answer = await within(typed(request), sessionTimeoutMs, what);
      watch.answered();
      return answer;
    } catch (err) {
      if (!ownershipLost(err)) watch.failed(err);
      throw err;
    }
  };
  /**
   * Stops the consumer (leaving the group, as far as its coordinator
   * answers), drops its connections and cached metadata, and runs it again
   * with the same handler: the new run reads the cluster's metadata and
   * looks the group's coordinator up afresh, then joins. The listener is
   * told `lost` first. Nothing while the member holds no generation.
   */
  const leaveAndJoin = async (why: string): Promise<void> => {
    const config = running;
    if (!settled || rejoining !== undefined || config === undefined) return;
    settled = false;
    listener?.lost(why);
    // disconnect() stops the runner, which waits for the batch in hand (its
    // isRunning() turns false) and leaves the group, ignoring a coordinator
    // that does not answer; then it closes every broker connection and
    // forgets the metadata (leaders, coordinator). The subscription is kept.
    // run() connects again and joins through a live broker; while none
    // answers, kafkajs's own crash and restart loop retries.
    rejoining = consumer.disconnect().then(() => consumer.run(config));
    try {
      await rejoining;
    } catch (err) {
      listener?.crashed(asError(err), false);
    } finally {
      rejoining = undefined;
    }
  };
  return {
    ensureTopics: (names) => ensureTopics(kafka, names.map((topic) => ({ topic, configEntries: TOPIC_CONFIG }))),
    connect: async () => {
      await producer.connect();
      await consumer.connect();
    },
    listen: (to) => {
      listener = to;
      consumer.on(consumer.events.REBALANCING, () => {
        settled = false;
        to.rebalancing();
      });
      consumer.on(consumer.events.GROUP_JOIN, (e) => {
        settled = !stopping;
        watch.answered();
        to.joined(e.payload.memberId, ++generation, e.payload.memberAssignment);
      });
      // A fetch whose records kafkajs filtered out (control records, an
      // aborted transaction's) never reaches eachBatch: its end is the only
      // sign of it.
      consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
        if (payload.batchSize === 0) to.filtered(payload.topic, payload.partition, payload.lastOffset);
      });
      // A batch kafkajs cannot decode crashes the consumer with a bare codec error: typed here with where it is.
      consumer.on(consumer.events.CRASH, (e) => {
        // Restarting, kafkajs joins again by itself.
        settled = false;
        to.crashed(undecodableBatch(e.payload.error) ?? e.payload.error, e.payload.restart);
      });
      // kafkajs emits these only for an answer: a heartbeat it did not send (its interval not over) or that failed says nothing.
      consumer.on(consumer.events.HEARTBEAT, () => watch.answered());
      consumer.on(consumer.events.COMMIT_OFFSETS, () => watch.answered());
    },
    run: async (names, eachBatch) => {
      await consumer.subscribe({ topics: [...names], fromBeginning: true });
      running = {
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 1,
        eachBatch: async (payload) => {
          try {
            // The heartbeat's failures typed as the rest (a membership answer: OwnershipLost), and told to the watch.
            await eachBatch({ ...payload, heartbeat: () => toCoordinator(payload.heartbeat(), 'heartbeat') });
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
              settled = false;
              listener?.rebalancing();
              throw lost;
            }
            throw err;
          }
        },
      };
      await consumer.run(running);
      watchTimer = setInterval(() => void watch.check(), Math.min(1_000, Math.max(100, Math.floor(sessionTimeoutMs / 10))));
      watchTimer.unref();
    },
    rejoin: (why) => leaveAndJoin(why),
    commit: async (positions) => {
      const keys = positions.map((p) => commitKey(p.topic, p.partition, p.offset));
      for (const k of keys) acknowledged.delete(k);
      try {
        await toCoordinator(consumer.commitOffsets([...positions]), 'offset commit');
        if (!keys.every((k) => acknowledged.has(k))) throw new CommitNotSent(keys.length);
      } finally {
        for (const k of keys) acknowledged.delete(k);
      }
    },
    seek: (topic, partition, offset) => consumer.seek({ topic, partition, offset }),
    pause: (names) => {
      // Only a stop pauses: the watch leaves the member alone from now on.
      stopping = true;
      settled = false;
      consumer.pause(names.map((topic) => ({ topic })));
    },
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
      stopping = true;
      settled = false;
      clearInterval(watchTimer);
      // A rejoin under way ends first: the disconnect acts on the consumer it runs again.
      if (rejoining !== undefined) await within(rejoining, sessionTimeoutMs, 'rejoin').catch(() => undefined);
      await consumer.disconnect();
      await producer.disconnect();
    },
  };
}
