/**
 * What the pipeline needs of durable state, as small interfaces: the
 * ClickHouse stores (store/) implement them for `ingest`, the
 * in-memory chains (verify/memory-chains.ts) for `agentledger verify` and the
 * benchmark. They conform structurally (no import runs back up from the sink;
 * the composition roots check them). Each is the source of truth its pipeline reads back after a
 * restart or a rebalance; memory in front of it is only a cache.
 */
import type { IncarnationHead, StoredHead, StoredVersion } from '../rows/rows.js';

/**
 * Durable progress of one partition: the offset after its last stored record
 * (0 when none), among the rows inserted at or after `since` (Unix seconds; 0
 * reads all): the caller knows nothing later than its last commit was
 * inserted before that.
 */
export interface ProgressPort {
  progress(topic: string, partition: number, since?: number): Promise<bigint>;
}

/** Writes rows with ONE insert: all of them land, or none. `queryId` names it on the server (to settle it after a lost answer). */
export interface InsertPort<Row> {
  insert(rows: readonly Row[], queryId?: string): Promise<void>;
  /** Parses and checks rows as insert() would, storing nothing (a table of engine Null beside the real one). */
  probe(rows: readonly Row[]): Promise<void>;
}

/** Idempotent writes derived from rows already durable (a store's small side tables), repeated until they succeed. */
export interface DerivePort<Row> {
  derive(rows: readonly Row[]): Promise<void>;
  /**
   * derive() again for the rows of a partition stored at or past offset
   * `from` (inserted at or after `since`, Unix seconds): the rows a member
   * that died between its insert and its derived writes left behind.
   */
  rederive(topic: string, partition: number, from: bigint, since: number): Promise<void>;
  /** Whether the derived rows of a partition's stored rows are gone, all of them (a table emptied, a restore without it). */
  derivedLost(topic: string, partition: number): Promise<boolean>;
}

/**
 * What ingest writes a stream's rows through and reads a partition's
 * progress back from: the stream's store itself (Stream.store), called with
 * the stream's topic.
 */
export type StorePort<Row> = ProgressPort & InsertPort<Row> & DerivePort<Row>;

/** Stored chain state of loops. */
export interface ChainPort {
  /**
   * Verified heads of the given loops; loops with no stored envelope are
   * absent. The store's heads reflect every row whose derived writes are
   * done: rows a caller has stored but not derived yet are its own to keep
   * in mind (ChainState holds them pending until then).
   */
  heads(loopIds: readonly string[]): Promise<Map<string, StoredHead>>;
  /** Every stored version of the given (loop, seq) pairs but malformed rows, in the order stored (Kafka offset). */
  versions(keys: readonly (readonly [string, number])[]): Promise<StoredVersion[]>;
}

/** Stored order state of craze incarnations. */
export interface IncarnationPort {
  /** Heads of every incarnation of the given sessions, keyed by incarnationKey(). */
  heads(sessionIds: readonly string[]): Promise<Map<string, IncarnationHead>>;
  /** The subset of (session, incarnation, seq) already stored, as `${incarnationKey}\0${seq}`. */
  seen(keys: readonly (readonly [string, string, number])[]): Promise<Set<string>>;
}
