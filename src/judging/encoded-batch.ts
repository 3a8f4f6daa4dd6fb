/**
 * A judged batch's rows as insert bytes (rows/encoded.ts), made as soon as
 * they are judged: what a judging thread hands back (threaded.ts), as
 * transferable bytes rather than objects to clone. A row object lives only
 * while its batch is judged; until its flush, a row is its bytes and a
 * small handle. (One thread keeps its rows as objects: encoding them twice,
 * once here and once into the insert, cost it 7 µs of CPU per envelope for
 * 20 MB of RSS, bench/e2e.sh.)
 */
import { EncodedRow } from '../rows/encoded.js';
import type { KafkaColumns } from '../rows/rows.js';
import { HEAD_VERDICTS } from '../store/envelope-store.js';
import { compiled, type InsertFormat } from '../store/insert-format.js';
import { RowBinaryWriter } from '../store/rowbinary.js';
import type { TableSpec } from '../store/table-spec.js';
import { tsvEncodedRows } from '../store/tsv.js';
import type { DeadLetter, SourceRecord, StreamBatch } from '../pipeline/stream.js';

/** A batch's rows as bytes, and what the driver reads of them (transferable between threads). */
export interface EncodedBatch {
  readonly format: InsertFormat;
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
  /**
   * Rows the encoder refused (a value RowBinary cannot carry), kept as
   * fields: [row, the row]. Their insert is refused as before, and the
   * writer's poison isolation finds them (ingest/writer.ts).
   */
  readonly refused: readonly (readonly [number, Readonly<Record<string, unknown>>])[];
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

/** The spec of every column of `table` but the last (ingested_at, which the flush writes), once per table. */
const ALL_BUT_LAST = new WeakMap<object, TableSpec<Record<string, unknown>>>();
function allButLast(table: TableSpec<Record<string, unknown>>): TableSpec<Record<string, unknown>> {
  let spec = ALL_BUT_LAST.get(table);
  if (spec === undefined) {
    const [first, ...rest] = table.columns.slice(0, -1);
    spec = { columns: [first!, ...rest], types: table.types.slice(0, -1) };
    ALL_BUT_LAST.set(table, spec);
  }
  return spec;
}

/**
 * Rows as RowBinary of every column but the last, and where each ends; a
 * row the encoder refuses is left out (its end is its start) and named.
 * The rare refusal starts the block again without it: the writer cannot
 * take back a row half written.
 */
function rowBinaryRows(rows: readonly Record<string, unknown>[], table: TableSpec<Record<string, unknown>>): { block: Buffer; ends: Uint32Array; refused: Set<number> } {
  const spec = allButLast(table);
  const write = compiled(spec);
  const refused = new Set<number>();
  for (;;) {
    const writer = new RowBinaryWriter(spec.columns);
    const ends = new Uint32Array(rows.length);
    let failed = -1;
    for (let i = 0; i < rows.length && failed < 0; i++) {
      if (!refused.has(i)) {
        try {
          write(writer, rows[i]!);
        } catch {
          failed = i;
        }
      }
      ends[i] = writer.written;
    }
    if (failed >= 0) {
      refused.add(failed);
      continue;
    }
    return { block: writer.takeOwned(), ends, refused };
  }
}

/** A judged batch of `records` as bytes of `format`, in the order of `table`'s columns (the insert's). */
export function encodeBatch(records: readonly SourceRecord[], batch: StreamBatch<KafkaColumns>, table: TableSpec<Record<string, unknown>>, format: InsertFormat, streamName: string): EncodedBatch {
  const rows = batch.rows as unknown as readonly Record<string, unknown>[];
  const index = new Map<string, number>();
  records.forEach((r, i) => index.set(r.offset, i));
  const record = new Int32Array(rows.length);
  rows.forEach((row, i) => (record[i] = index.get(row.kafka_offset as string) ?? -1));
  const { block, ends, refused } = format === 'RowBinary' ? rowBinaryRows(rows, table) : { ...tsvEncodedRows(rows, table.columns), refused: new Set<number>() };
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
    format,
    refused: [...refused].map((i) => [i, rows[i]!]),
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
    rows.push(new EncodedRow(encoded.format, block, start, end, record.topic, record.partition, record.offset, verdicts[i]!, loopIds?.[i], seqs?.[i], kindClasses?.[i], changes?.[i]));
    start = end;
  }
  for (const [i, [hash, computedHash, timeText]] of encoded.heads) {
    const row = rows[i]!;
    row.hash = hash as string;
    row.computed_hash = computedHash as string;
    row.time_text = timeText as string;
  }
  const out: KafkaColumns[] = rows;
  for (const [i, row] of encoded.refused) out[i] = row as unknown as KafkaColumns;
  const deadLetters: DeadLetter[] = encoded.deadLetters.map(([i, reason]) => ({ record: records[i]!, reason }));
  // A handle is a row to the driver: every field it reads of one is there (rows/encoded.ts).
  return { rows: rows, deadLetters, verdicts: new Map(encoded.verdicts) };
}
