/**
 * pipeline/: per input topic, records -> decode -> verify/account -> rows and
 * dead letters. This file is the contract between the ingest loop
 * (ingest/: offsets, batching, retries, commits) and a topic's
 * pipeline (how its records become rows, where they go, how far that table
 * says a partition has been stored).
 */
import type { KafkaColumns } from '../rows/rows.js';

export interface SourceRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  /** The record's Kafka timestamp, ms since the epoch as decimal text. */
  readonly timestamp: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /** The record's Kafka headers (a dead letter carries them on: a trace id must survive). */
  readonly headers?: RecordHeaders;
}

/** Kafka record headers as kafkajs gives and takes them. */
export type RecordHeaders = Readonly<Record<string, Buffer | string | (Buffer | string)[] | undefined>>;

export interface DeadLetter {
  readonly record: SourceRecord;
  readonly reason: string;
}

export interface StreamBatch<Row> {
  readonly rows: Row[];
  readonly deadLetters: DeadLetter[];
  /** Records by verdict, for metrics. */
  readonly verdicts: Map<string, number>;
}

export interface Stream<Row extends KafkaColumns = KafkaColumns> {
  /** Short name for logs and metrics: `envelopes`, `craze`. */
  readonly name: string;
  readonly topic: string;
  /**
   * The offset after the last record of this partition whose row is stored (0
   * when none). `since` (Unix seconds, 0 when unknown): every row of this
   * partition that the last offset commit does not cover was inserted at or
   * after it, which lets the store read only recent parts.
   */
  progress(partition: number, since?: number): Promise<bigint>;
  /** Records of one partition (in order, already past `progress`) -> rows and dead letters. */
  process(records: readonly SourceRecord[]): Promise<StreamBatch<Row>>;
  /** Writes rows with ONE insert, named `queryId` on the server: all of them land, or none. */
  insert(rows: readonly Row[], queryId?: string): Promise<void>;
  /**
   * Sends rows through everything an insert does but store them: the
   * server's parsing and type checks. Used to find the rows of a refused
   * insert that the server cannot take.
   */
  probe(rows: readonly Row[]): Promise<void>;
  /**
   * What a record becomes when the store refused it (its row, or a query
   * built from it): its malformed row, and its dead letter with the reason.
   */
  quarantine(record: SourceRecord, reason: string): { row: Row; deadLetter: DeadLetter };
  /** After `rows` are durable (inserted, or found landed): the store's idempotent derived writes, before the offset commit. */
  derive(rows: readonly Row[]): Promise<void>;
  /**
   * At takeover, when a partition's stored rows reach past its last commit
   * (offset `from`, dated `since`): the derived writes of those rows, which
   * their writer may have died before making.
   */
  rederive(partition: number, from: bigint, since: number): Promise<void>;
  /**
   * At takeover: whether every derived row of this partition's stored rows
   * is gone (its derived table emptied, or not restored with the rows). The
   * caller then derives them again from offset 0.
   */
  derivedLost(partition: number): Promise<boolean>;
  /**
   * The rows process() returned so far form a buffer being flushed: returns
   * its number. What process() returns next belongs to the next buffer, which
   * may be judged while this one's insert is in flight.
   */
  seal(): number;
  /**
   * Every row of buffer `upTo` and of those before it (every row process()
   * returned, when omitted) is durable: inserted (or found landed), and its
   * derived writes done.
   */
  durable(upTo?: number): void;
  /** Forgets every cache (after a rebalance). */
  reset(): void;
}
