/**
 * Insert bodies in ClickHouse's TabSeparated format, built directly from the
 * rows: one line per row, the columns in the order the INSERT names them.
 * Both 18.16 and current ClickHouse take it, and it costs less on both sides
 * than JSONEachRow: no key per value to write and to match, no JSON escaping
 * of the payload's quotes (bench/e2e.sh measures both).
 *
 * A string is written as UTF-8 with backslash, tab, newline, carriage return
 * and NUL escaped (ClickHouse's escaped-string rules); a number as its
 * decimal text (rows hold integers only: money and 64-bit counts are decimal
 * strings already). A JavaScript string with a lone surrogate, which no row
 * built from a decoded record holds, is written as U+FFFD, as UTF-8 is.
 */
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { encodedOf } from '../rows/encoded.js';
import { ChunkWriter } from './chunks.js';

/** The row fields an insert writes, in order (never empty: @clickhouse/client's `columns`). */
export type Columns<Row> = [keyof Row & string, ...(keyof Row & string)[]];

/**
 * The column list of `Row`, in the order of the object literal, which must
 * name every field of the row type (one left out does not compile).
 */
export function columnsOf<Row>(every: { readonly [K in keyof Row & string]: true }): Columns<Row> {
  const [first, ...rest] = Object.keys(every) as (keyof Row & string)[];
  if (first === undefined) throw new Error('a table has at least one column');
  return [first, ...rest];
}

const SPECIAL = /[\\\t\n\r\0]/;
const SPECIALS = /[\\\t\n\r\0]/g;
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };
const escape = (c: string): string => ESCAPES[c]!;

/** One value as a TabSeparated field. */
export function tsvField(value: unknown): string {
  if (typeof value === 'string') return SPECIAL.test(value) ? value.replace(SPECIALS, escape) : value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`a row holds ${value}, which is not a safe integer: only integers are written as numbers`);
    return String(value);
  }
  throw new Error(`a row holds a ${value === null ? 'null' : typeof value}: only strings and integers are written`);
}

/** The escape letter of each special byte, by its value (0: not special). */
const ESCAPE_LETTER = new Uint8Array(128);
for (const [c, letter] of [[0x5c, 0x5c], [0x09, 0x74], [0x0a, 0x6e], [0x0d, 0x72], [0x00, 0x30]] as const) ESCAPE_LETTER[c] = letter;
// NUL's letter is '0' (0x30), never 0, so 0 means "not special" for every other byte.

/**
 * Strings up to this length are written by a loop over their characters;
 * longer ones by Buffer.write, whose call costs about as much as 16
 * characters of the loop (16 measured faster than 32 and 64 over ingest's rows).
 */
const SHORT = 16;

/**
 * TabSeparated text written straight into buffers (chunks.ts): no string per
 * field or per row, no UTF-8 encoding of the whole body after it is built.
 * A short ASCII field (verdicts, kinds, slots, offsets, most ids) is copied a
 * character a byte, escaped on the way; a longer (hashes, times, payloads)
 * or non-ASCII one is
 * encoded by Buffer.write, after the RegExp test that finds a special
 * character in the rare field that has one. The bytes are those of
 * tsvField's text encoded as UTF-8 (a unit test holds the two together).
 */
export class TsvWriter extends ChunkWriter {
  /** One value as a TabSeparated field (tsvField's rules). */
  field(value: unknown): void {
    if (typeof value === 'string') this.text(value);
    else this.text(tsvField(value));
  }

  private text(s: string): void {
    const n = s.length;
    if (n <= SHORT) {
      this.room(2 * n);
      const buf = this.buf;
      const start = this.pos;
      let p = start;
      for (let i = 0; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) {
          this.pos = start;
          this.encoded(s);
          return;
        }
        const letter = ESCAPE_LETTER[c]!;
        if (letter === 0) buf[p++] = c;
        else {
          buf[p++] = 0x5c;
          buf[p++] = letter;
        }
      }
      this.pos = p;
      return;
    }
    this.encoded(s);
  }

  /** A field through Buffer.write: escaped first if it holds a special character. */
  private encoded(s: string): void {
    const text = SPECIAL.test(s) ? s.replace(SPECIALS, escape) : s;
    // At most 3 UTF-8 bytes per UTF-16 unit (a surrogate pair: 4 for 2).
    this.room(3 * text.length);
    this.pos += this.buf.write(text, this.pos, 'utf8');
  }
}

const TAB = 0x09;
const NEWLINE = 0x0a;

/**
 * One row as a TabSeparated line: its fields, or for a judged row
 * (rows/encoded.ts) its bytes of every column but the last, ingested_at,
 * then that one.
 */
export function tsvRow<Row>(writer: TsvWriter, row: Row, columns: Columns<Row>): void {
  const last = columns.length - 1;
  const encoded = encodedOf(row as object);
  if (encoded !== undefined) {
    if (encoded.format !== 'TabSeparated') throw new Error(`a row encoded as ${encoded.format} cannot be written as TabSeparated`);
    writer.raw(encoded.block, encoded.start, encoded.end);
    writer.byte(TAB);
    writer.field(encoded.ingested_at);
  } else {
    for (let c = 0; c < last; c++) {
      writer.field(row[columns[c]!]);
      writer.byte(TAB);
    }
    writer.field(row[columns[last]!]);
  }
  writer.byte(NEWLINE);
}

/** Rows as TabSeparated bytes, about `rowsPerChunk` lines at a time (whole rows; a chunk may end inside a row). */
export function* tsvChunks<Row>(rows: readonly Row[], columns: Columns<Row>, rowsPerChunk = 500): Generator<Buffer> {
  const writer = new TsvWriter();
  let inChunk = 0;
  for (const row of rows) {
    tsvRow(writer, row, columns);
    if (++inChunk === rowsPerChunk) {
      yield* writer.take();
      inChunk = 0;
    }
  }
  yield* writer.take();
}

/**
 * Rows as one block of TabSeparated bytes of every column but the last
 * (rows/encoded.ts), and where each row ends in it: what a worker thread
 * hands the driver. `columns` names every column of the insert.
 */
export function tsvEncodedRows<Row>(rows: readonly Row[], columns: Columns<Row>): { block: Buffer; ends: Uint32Array } {
  const last = columns.length - 1;
  const writer = new TsvWriter();
  const ends = new Uint32Array(rows.length);
  rows.forEach((row, i) => {
    for (let c = 0; c < last; c++) {
      if (c > 0) writer.byte(TAB);
      writer.field(row[columns[c]!]);
    }
    ends[i] = writer.written;
  });
  return { block: writer.takeOwned(), ends };
}

/**
 * An insert body for @clickhouse/client (format TabSeparated, `columns`
 * passed beside it): a stream, so the request is on its way while the rest
 * is written. A new one per attempt: a retried insert sends every row again.
 */
export function tsvBody<Row>(rows: readonly Row[], columns: Columns<Row>): Readable {
  return Readable.from(tsvChunks(rows, columns), { objectMode: false });
}

/** `rows` as one TabSeparated INSERT into `table` (none when there are no rows), named `queryId` on the server when given. */
export async function insertTsv<Row>(ch: ClickHouseClient, table: string, rows: readonly Row[], columns: Columns<Row>, queryId?: string): Promise<void> {
  if (rows.length === 0) return;
  await ch.insert({ table, values: tsvBody(rows, columns), format: 'TabSeparated', columns, ...(queryId ? { query_id: queryId } : {}) });
}
