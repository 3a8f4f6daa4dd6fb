/**
 * A buffer's rows: what one flush writes (rows per stream, dead letters) and
 * what its write has done so far, kept across its retries (stamp, inserts
 * tried, streams landed). Its offsets, and what the rules decide of it, are
 * the machine's (machine.ts, BufferState with the same id).
 */
import type { KafkaColumns } from '../rows/rows.js';
import type { DeadLetter, SourceRecord, Stream, StreamBatch } from '../pipeline/stream.js';

/**
 * How far apart two members' clocks (and a flush's stamp and its commit) may
 * be: read-backs look at rows inserted since (last commit's stamp − this).
 */
export const CLOCK_SLACK_SECONDS = 15 * 60;

/** The oldest insert time (Unix seconds) a read-back after a commit dated `metadata` must look at; 0: all. */
export const sinceOf = (metadata: string | null | undefined): number => {
  const stamp = Number(metadata);
  return metadata && Number.isSafeInteger(stamp) && stamp > CLOCK_SLACK_SECONDS ? stamp - CLOCK_SLACK_SECONDS : 0;
};

export interface Pending {
  /** Rows per stream, each written by one insert into its table. */
  rows: Map<Stream, KafkaColumns[]>;
  deadLetters: DeadLetter[];
  /** The ingested_at of every row of this buffer (and its Unix seconds), set at its first flush attempt and kept by retries. */
  stamp: string | undefined;
  stampSeconds: number;
  /** Streams whose rows are durable (inserted, or found landed); their derived writes may still be due. */
  landed: Set<Stream>;
  /** The query_id of the last insert tried per stream (a retry settles it, then checks whether it landed). */
  tried: Map<Stream, string>;
  /**
   * The records behind the rows, per stream: what a row the server refuses
   * is dead-lettered as. Only kept (references, no copy), searched only then.
   */
  records: Map<Stream, SourceRecord[]>;
  /** Streams whose state went past rows the server refused: reset once this buffer is durable. */
  rebuild: Set<Stream>;
  /** Per stream, the number of this buffer in the stream's state, once sealed. */
  sealed: Map<Stream, number>;
}

export const emptyPending = (): Pending => ({
  rows: new Map(),
  deadLetters: [],
  stamp: undefined,
  stampSeconds: 0,
  landed: new Set(),
  tried: new Map(),
  records: new Map(),
  rebuild: new Set(),
  sealed: new Map(),
});

/**
 * The insert bytes a batch of records adds, over-estimated from the records
 * themselves (cheaper than measuring every row): a row holds its record's
 * text at most twice as long once JSON-escaped, plus columns and state.
 */
export function insertBytes(records: readonly SourceRecord[]): number {
  let n = 0;
  for (const r of records) n += 2 * (r.value?.length ?? 0) + 1024;
  return n;
}

/** Adds a batch's judged records (kept for a refused row's dead letter), rows and dead letters to the buffer. */
export function buffer(p: Pending, stream: Stream, records: readonly SourceRecord[], outcome: StreamBatch<KafkaColumns>): void {
  const kept = p.records.get(stream);
  if (kept) for (const r of records) kept.push(r);
  else p.records.set(stream, [...records]);
  let rows = p.rows.get(stream);
  if (!rows) p.rows.set(stream, (rows = []));
  for (const row of outcome.rows) rows.push(row);
  p.deadLetters.push(...outcome.deadLetters);
}

/** A record's place in its topic, as a map key. */
export const recordKey = (partition: number, offset: string): string => `${partition}:${offset}`;
