/**
 * A judged batch's rows as insert bytes (rows/encoded.ts), made as soon as
 * they are judged: what a judging thread hands back (threaded.ts), and what
 * one thread keeps too (EncodedStream). A row object lives only while its
 * batch is judged; until its flush, a row is its bytes and a small handle,
 * so what survives a collection is a few objects per row, not thirty
 * fields and their strings.
 */
import { EncodedRow } from '../rows/encoded.js';
import type { KafkaColumns } from '../rows/rows.js';
import { HEAD_VERDICTS } from '../store/envelope-store.js';
import { tsvEncodedRows, type Columns } from '../store/tsv.js';
import type { DeadLetter, SourceRecord, Stream, StreamBatch } from '../pipeline/stream.js';

/** A batch's rows as bytes, and what the driver reads of them (transferable between threads). */
export interface EncodedBatch {
  /** Every row's columns but ingested_at, in insert order; row i ends at ends[i]. */
  readonly block: ArrayBuffer;
  readonly ends: Uint32Array;
  /** The record (its index in the batch) of each row. */
  readonly record: Int32Array;
  /** Per field of carriedFields().carried, its value in every row. */
  readonly carried: readonly (readonly unknown[])[];
  /** Rows that carry carriedFields().head too: [row, values]. */
  readonly heads: readonly (readonly [number, readonly unknown[]])[];
  /** [record, reason] of each dead letter. */
  readonly deadLetters: readonly (readonly [number, string])[];
  readonly verdicts: readonly (readonly [string, number])[];
}

/**
 * The row fields the driver reads outside an insert (rows/encoded.ts): the
 * alerts' news (alerts/trigger.ts newsOf) and, on a head row, what
 * loop_heads takes (envelope-store.ts derive), in this order.
 */
export function carriedFields(stream: string): { carried: readonly string[]; head: readonly string[] } {
  if (stream === 'envelopes') return { carried: ['loop_id', 'seq', 'kind_class', 'verdict'], head: ['hash', 'computed_hash', 'time_text'] };
  return { carried: ['verdict', 'subagent_change'], head: [] };
}

/** A judged batch of `records` as bytes in the order of `columns` (the insert's). */
export function encodeBatch(records: readonly SourceRecord[], batch: StreamBatch<KafkaColumns>, columns: Columns<Record<string, unknown>>, streamName: string): EncodedBatch {
  const rows = batch.rows as unknown as readonly Record<string, unknown>[];
  const index = new Map<string, number>();
  records.forEach((r, i) => index.set(r.offset, i));
  const record = new Int32Array(rows.length);
  rows.forEach((row, i) => (record[i] = index.get(row.kafka_offset as string) ?? -1));
  const { block, ends } = tsvEncodedRows(rows, columns);
  const fields = carriedFields(streamName);
  const carried: unknown[][] = fields.carried.map((f) => rows.map((row) => row[f]));
  // The loop_heads fields only on the row that moves its loop's head
  // furthest in this batch: the only one a flush's derive can pick
  // (envelope-store.ts: per loop, the highest head-moving seq).
  const heads: [number, unknown[]][] = [];
  if (fields.head.length > 0) {
    const furthest = new Map<string, number>();
    rows.forEach((row, i) => {
      if (!HEAD_VERDICTS.has(row.verdict as string)) return;
      const loop = row.loop_id as string;
      const at = furthest.get(loop);
      if (at === undefined || (row.seq as number) > (rows[at]!.seq as number)) furthest.set(loop, i);
    });
    for (const i of furthest.values()) heads.push([i, fields.head.map((f) => rows[i]![f])]);
  }
  return {
    block: block.buffer as ArrayBuffer,
    ends,
    record,
    carried,
    heads,
    deadLetters: batch.deadLetters.map((d) => [index.get(d.record.offset) ?? -1, d.reason]),
    verdicts: [...batch.verdicts],
  };
}

/** An encoded batch as rows: handles of its bytes (rows/encoded.ts) carrying what the driver reads. */
export function handlesOf(records: readonly SourceRecord[], encoded: EncodedBatch, streamName: string): StreamBatch<KafkaColumns> {
  const block = Buffer.from(encoded.block);
  const fields = carriedFields(streamName);
  const column = <T>(name: string): readonly T[] | undefined => encoded.carried[fields.carried.indexOf(name)] as readonly T[] | undefined;
  const verdicts = column<string>('verdict')!;
  const [loopIds, seqs, kindClasses, changes] = [column<string>('loop_id'), column<number>('seq'), column<string>('kind_class'), column<string>('subagent_change')];
  const rows: EncodedRow[] = [];
  let start = 0;
  for (let i = 0; i < encoded.ends.length; i++) {
    const record = records[encoded.record[i]!]!;
    const end = encoded.ends[i]!;
    rows.push(new EncodedRow(block, start, end, record.topic, record.partition, record.offset, verdicts[i]!, loopIds?.[i], seqs?.[i], kindClasses?.[i], changes?.[i]));
    start = end;
  }
  for (const [i, [hash, computedHash, timeText]] of encoded.heads) {
    const row = rows[i]!;
    row.hash = hash as string;
    row.computed_hash = computedHash as string;
    row.time_text = timeText as string;
  }
  const deadLetters: DeadLetter[] = encoded.deadLetters.map(([i, reason]) => ({ record: records[i]!, reason }));
  // A handle is a row to the driver: every field it reads of one is there (rows/encoded.ts).
  return { rows: rows, deadLetters, verdicts: new Map(encoded.verdicts) };
}

/** A stream judged in this thread whose rows are kept as bytes from the moment they are judged (one judging thread). */
export class EncodedStream<Row extends KafkaColumns> implements Stream<Row> {
  readonly name: string;
  readonly topic: string;
  readonly store: Stream<Row>['store'];

  /** `columns`: the insert's, in order. */
  constructor(
    private readonly local: Stream<Row>,
    private readonly columns: Columns<Row>,
  ) {
    this.name = local.name;
    this.topic = local.topic;
    this.store = local.store;
  }

  async process(records: readonly SourceRecord[]): Promise<StreamBatch<Row>> {
    const batch = await this.local.process(records);
    const encoded = encodeBatch(records, batch, this.columns, this.name);
    return handlesOf(records, encoded, this.name) as StreamBatch<Row>;
  }

  quarantine(record: SourceRecord, reason: string): { row: Row; deadLetter: DeadLetter } {
    return this.local.quarantine(record, reason);
  }

  seal(): number {
    return this.local.seal();
  }

  durable(upTo?: number): void {
    this.local.durable(upTo);
  }

  reset(): void {
    this.local.reset();
  }
}
