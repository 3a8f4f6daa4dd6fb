/**
 * The contract between agentledger and its Kafka client: what the ingest
 * core and the commands may ask of Kafka. Only src/kafka/ imports the client
 * (kafkajs); what it must make up for stays in this folder: the runner
 * patch (runner-stop.ts), the checked send (checked-send.ts), the codecs
 * (codecs.ts), the rejoin lists (errors.ts), the filtered fetches and the
 * coordinator watch (group.ts, coordinator-watch.ts) behind this interface.
 */
import type { DeadLetter, RecordHeaders } from '../pipeline/stream.js';

/** A committed (or to-be-committed) offset of one partition. */
export interface Position {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  /**
   * Commit metadata: the Unix seconds of the flush that made `offset` durable
   * (its ingested_at). A later reader knows every row past the commit was
   * inserted after it, and reads only recent parts.
   */
  readonly metadata?: string;
}

/** A fetched record. */
export interface GroupMessage {
  readonly offset: string;
  readonly timestamp: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers?: RecordHeaders;
}

/** One fetch of one partition. */
export interface GroupBatch {
  readonly topic: string;
  readonly partition: number;
  readonly highWatermark: string;
  readonly messages: readonly GroupMessage[];
  firstOffset(): string | null;
  lastOffset(): string;
}

/** A batch and what its handler may do while it holds it (offsets are resolved and committed by the handler, never by the client). */
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

/** What the consumer group tells its member. */
export interface GroupListener {
  /**
   * The member's partitions are being revoked: a rebalance started, or the
   * batch handler threw a lost membership (OwnershipLost) and the client
   * joins again. Nothing it holds is its own until joined().
   */
  rebalancing(): void;
  /** The member joined `generation` (counted by this member, from 1) with these partitions per topic. */
  joined(memberId: string, generation: number, assignment: Readonly<Record<string, readonly number[]>>): void;
  /**
   * A fetch of a partition whose records were all filtered out by the client
   * (a transaction's control records, an aborted transaction's records): no
   * batch reaches the handler, yet the offsets up to `lastOffset` are the
   * member's to commit.
   */
  filtered(topic: string, partition: number, lastOffset: string): void;
  /**
   * The consumer crashed (an UndecodableBatchError for a fetch the client
   * cannot decode); the client restarts it when `restart`, else it is
   * stopped for good.
   */
  crashed(error: Error, restart: boolean): void;
  /**
   * The member leaves the group to join it again (its coordinator silent for
   * a session, or rejoin() asked): everything it holds is dropped now, the
   * next owner of each partition reads it back; joined() follows.
   */
  lost(why: string): void;
}

/**
 * What agentledger asks of Kafka: a consumer group membership, its offsets
 * and lag, the dead-letter producer and topic administration.
 * kafkaGroup() (group.ts) is the adapter over kafkajs; test/support/fake-group.ts
 * is the unit tests' fake, and test/integration/kafka-contract.test.ts proves
 * an adapter against a real broker through this interface alone.
 */
export interface KafkaGroup {
  /** Creates the topics (consumed, and the dead-letter topic) where missing. */
  ensureTopics(topics: readonly string[]): Promise<void>;
  /** Connects the dead-letter producer and the consumer. */
  connect(): Promise<void>;
  /** Where the group's events go; called once, before run(). */
  listen(listener: GroupListener): void;
  /** Subscribes to `topics` from the beginning and hands every fetch to `eachBatch`, one partition at a time. */
  run(topics: readonly string[], eachBatch: (payload: BatchPayload) => Promise<void>): Promise<void>;
  /**
   * Leaves the group and joins it again with a fresh client state (cached
   * metadata and coordinator forgotten), telling the listener lost(why)
   * first; nothing while the member holds no generation (the client joining
   * already, a rejoin or a stop under way). The adapter does so by itself
   * when the group's coordinator has been silent for a session timeout after
   * a request failed (coordinator-watch.ts).
   */
  rejoin(why: string): Promise<void>;
  /**
   * Commits offsets for this member; the coordinator refuses it
   * (OwnershipLost) from a member it expelled or of an old generation, and a
   * commit the client did not send fails too (CommitNotSent, an
   * OwnershipLost), never passing silently: a commit that resolves proves
   * the member owned the partitions.
   */
  commit(positions: readonly Position[]): Promise<void>;
  /** The next fetch of a partition starts at `offset`; batches fetched before become stale. */
  seek(topic: string, partition: number, offset: string): void;
  /** Stops fetching these topics (at a stop). */
  pause(topics: readonly string[]): void;
  /** Sends dead letters to the dead-letter topic, acknowledged by every in-sync replica. */
  sendDeadLetters(letters: readonly DeadLetter[]): Promise<void>;
  /** The group's committed offsets of a topic, per partition. */
  committedOffsets(topic: string): Promise<Map<number, Committed>>;
  /** Records past the group's commit in the topics' partitions, or only in those of `owned`. */
  uncommitted(topics: readonly string[], owned?: Readonly<Record<string, readonly number[]>>): Promise<bigint>;
  /** Leaves the group and closes the producer. */
  disconnect(): Promise<void>;
}

