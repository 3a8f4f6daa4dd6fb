/**
 * pipeline/: per input topic, records -> decode -> verify/account -> rows and
 * dead letters. This file is the contract between the ingest loop
 * (ingest/: offsets, batching, retries, commits) and a topic's
 * pipeline (how its records become rows, where they go, how far that table
 * says a partition has been stored).
 */
import type { KafkaColumns } from '../rows/rows.js';
import type { StorePort } from './ports.js';

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

/**
 * A StreamBatch filled record by record, with the steps every stream's
 * process() takes alike: count a verdict, and refuse a record that did not
 * decode (counted malformed, dead-lettered, and stored as its malformed row).
 */
export interface BatchBuilder<Row, V extends string> {
  readonly batch: StreamBatch<Row>;
  count(verdict: V | 'malformed'): void;
  refuse(record: SourceRecord, reason: string): void;
}

export function batchBuilder<Row, V extends string = string>(malformedRow: (record: SourceRecord, reason: string) => Row): BatchBuilder<Row, V> {
  const batch: StreamBatch<Row> = { rows: [], deadLetters: [], verdicts: new Map() };
  const count = (verdict: V | 'malformed'): void => void batch.verdicts.set(verdict, (batch.verdicts.get(verdict) ?? 0) + 1);
  return {
    batch,
    count,
    refuse(record, reason) {
      count('malformed');
      batch.deadLetters.push({ record, reason });
      batch.rows.push(malformedRow(record, reason));
    },
  };
}

export interface Stream<Row extends KafkaColumns = KafkaColumns> {
  /** Short name for logs and metrics: `envelopes`, `craze`. */
  readonly name: string;
  readonly topic: string;
  /**
   * Where the rows go and how far each partition is stored (ports.ts): the
   * flush and the read-back call it directly, with this stream's topic.
   */
  readonly store: StorePort<Row>;
  /** Records of one partition (in order, already past the store's progress) -> rows and dead letters; their ingested_at is left to the flush. */
  process(records: readonly SourceRecord[]): Promise<StreamBatch<Row>>;
  /**
   * What a record becomes when the store refused it (its row, or a query
   * built from it): its malformed row, and its dead letter with the reason.
   */
  quarantine(record: SourceRecord, reason: string): { row: Row; deadLetter: DeadLetter };
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
