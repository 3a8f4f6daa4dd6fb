/**
 * The edges of the ingest loop (src/ingest/ingestor.ts): the consumer group
 * it is a member of, the dead-letter producer, and what it asks ClickHouse
 * besides the streams. The loop sees them only through IngestEdges, narrowed
 * to what it uses, so that unit tests drive it against a fake group (the way
 * kafkajs tests its runner against a stubbed consumer group); kafkaEdges()
 * is the real one, over kafkajs and the ClickHouse client.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { ConsumerRunConfig, Kafka } from 'kafkajs';
import type { Config } from '../config/index.js';
import type { DeadLetter, RecordHeaders } from '../pipeline/stream.js';
import { TransientError } from '../observability/errors.js';
import { settleQuery } from '../sink/clickhouse/sql.js';
import { createReliableProducer, ensureTopics, TOPIC_CONFIG } from '../sources/kafka.js';
import { uncommittedRecords } from './lag.js';
import type { Position } from './pending.js';

/** A fetched record, as kafkajs gives it. */
export interface GroupMessage {
  readonly offset: string;
  readonly timestamp: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers?: RecordHeaders;
}

/** One fetch of one partition: kafkajs's Batch, narrowed. */
export interface GroupBatch {
  readonly topic: string;
  readonly partition: number;
  readonly highWatermark: string;
  readonly messages: readonly GroupMessage[];
  firstOffset(): string | null;
  lastOffset(): string;
}

/** kafkajs's EachBatchPayload, narrowed to what the loop uses (auto-resolve and auto-commit are off). */
export interface BatchPayload {
  readonly batch: GroupBatch;
  /** The offset the next fetch of this partition starts after. */
  resolveOffset(offset: string): void;
  /** Tells the coordinator this member is alive; fails once it was expelled. */
  heartbeat(): Promise<void>;
  /** Whether the runner that gave this batch still runs. */
  isRunning(): boolean;
  /** Whether the partition was sought elsewhere (or lost) since this batch was fetched. */
  isStale(): boolean;
}

/** A group's committed offset of one partition, and its metadata (the Unix seconds of the flush that made it durable). */
export interface Committed {
  readonly offset: string;
  readonly metadata: string | null;
}

/** What the consumer group tells its member (kafkajs's instrumentation events). */
export interface GroupListener {
  /** A rebalance started: the member may lose its partitions. */
  rebalancing(): void;
  /** The member joined a new generation with these partitions per topic. */
  joined(memberId: string, assignment: Readonly<Record<string, readonly number[]>>): void;
  /** kafkajs ended processing a fetch; `batchSize` 0: every record of it was filtered out (control records, an aborted transaction). */
  batchEnded(topic: string, partition: number, batchSize: number, lastOffset: string): void;
  /** The consumer crashed; kafkajs restarts it when `restart`, else it is stopped for good. */
  crashed(error: Error, restart: boolean): void;
  /** The group's coordinator answered this member: a heartbeat or an offset commit acknowledged. */
  coordinatorAnswered(): void;
}

export interface IngestEdges {
  /** Creates the topics (consumed, and the dead-letter topic) where missing. */
  ensureTopics(topics: readonly string[]): Promise<void>;
  /** Connects the dead-letter producer and the consumer. */
  connect(): Promise<void>;
  /** Where the group's events go; called once, before run(). */
  listen(listener: GroupListener): void;
  /** Subscribes to `topics` from the beginning and hands every fetch to `eachBatch`, one partition at a time. */
  run(topics: readonly string[], eachBatch: (payload: BatchPayload) => Promise<void>): Promise<void>;
  /**
   * Stops the consumer (leaving the group, as far as its coordinator
   * answers), drops its connections and cached metadata, and runs it again
   * with the same handler: the new run reads the cluster's metadata and
   * looks the group's coordinator up afresh, then joins (joined() follows).
   */
  rejoin(): Promise<void>;
  /**
   * Commits offsets for this member; the coordinator refuses it (a membership
   * error) from a member it expelled or of an old generation, and a commit
   * the client did not send fails too (CommitNotSent), never passing silently.
   */
  commit(positions: readonly Position[]): Promise<void>;
  /** The next fetch of a partition starts at `offset`; batches fetched before become stale. */
  seek(topic: string, partition: number, offset: string): void;
  /** Stops fetching these topics (at a stop). */
  pause(topics: readonly string[]): void;
  /** Sends dead letters to the dead-letter topic, acknowledged by every in-sync replica. */
  sendDeadLetters(letters: readonly DeadLetter[]): Promise<void>;
  /** Makes a ClickHouse query that may still run (its answer lost) finish or die. */
  settle(queryId: string): Promise<void>;
  /** The group's committed offsets of a topic, per partition. */
  committedOffsets(topic: string): Promise<Map<number, Committed>>;
  /** Records past the group's commit in the topics' partitions, or only in those of `owned`. */
  uncommitted(topics: readonly string[], owned?: Readonly<Record<string, readonly number[]>>): Promise<bigint>;
  /** Leaves the group and closes the producer. */
  disconnect(): Promise<void>;
}

/**
 * An offset commit kafkajs did not send: its runner was not running (stopping,
 * or restarting after a crash, while it waits for the batch in flight), and
 * then consumer.commitOffsets returns as if it had committed. Nothing proves
 * this member still owns the partitions, so it counts as a lost membership
 * (membershipError, by its `type`): the fence refuses the flush and the buffer
 * is dropped, to be read again by whoever owns the partitions next.
 */
export class CommitNotSent extends TransientError {
  override name = 'CommitNotSent';
  readonly type = 'CONSUMER_NOT_RUNNING';
  constructor(partitions: number) {
    super(`offset commit of ${partitions} partition(s) not sent: the consumer is not running (stopping, or restarting after a crash); ownership is not proven`);
  }
}

const commitKey = (topic: string, partition: number | string, offset: string): string => `${topic}:${String(partition)}:${offset}`;

/** The edges over kafkajs and ClickHouse: what `agentledger ingest` runs on. */
export function kafkaEdges(kafka: Kafka, clickhouse: ClickHouseClient, config: Config): IngestEdges {
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
      // kafkajs emits these only for an answer: a heartbeat it did not send (its interval not over) or that failed says nothing.
      consumer.on(consumer.events.HEARTBEAT, () => listener.coordinatorAnswered());
      consumer.on(consumer.events.COMMIT_OFFSETS, () => listener.coordinatorAnswered());
    },
    run: async (names, eachBatch) => {
      await consumer.subscribe({ topics: [...names], fromBeginning: true });
      running = { autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: 1, eachBatch };
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
        await consumer.commitOffsets([...positions]);
        if (!keys.every((k) => acknowledged.has(k))) throw new CommitNotSent(keys.length);
      } finally {
        for (const k of keys) acknowledged.delete(k);
      }
    },
    seek: (topic, partition, offset) => consumer.seek({ topic, partition, offset }),
    pause: (names) => consumer.pause(names.map((topic) => ({ topic }))),
    sendDeadLetters: async (letters) => {
      await producer.send({
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
      });
    },
    settle: (queryId) => settleQuery(clickhouse, queryId),
    committedOffsets: async (topic) => {
      const admin = kafka.admin();
      await admin.connect();
      try {
        const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
        return new Map((offsets?.partitions ?? []).map((p) => [p.partition, { offset: p.offset, metadata: p.metadata }]));
      } finally {
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
