/**
 * The two formats agentledger inserts in, behind one shape: rows in, bytes
 * out (RowEncoder), and one insert of a table's rows in either
 * (insertRows). Which one ingest uses is AGENTLEDGER_INSERT_FORMAT
 * (src/config/ingest.ts); docs/benchmarks.md ("Insert formats") has what
 * each costs ClickHouse on 18.16 and current versions.
 */
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { RowBinaryWriter, rowBinaryRow, type RowBinaryRow } from './rowbinary.js';
import type { TableSpec } from './table-spec.js';
import { encodedOf } from '../rows/encoded.js';
import { tsvBody, tsvRow, TsvWriter } from './tsv.js';

export type InsertFormat = 'TabSeparated' | 'RowBinary';
export const INSERT_FORMATS: readonly InsertFormat[] = ['TabSeparated', 'RowBinary'];

/**
 * AGENTLEDGER_INSERT_FORMAT's default (src/config/ingest.ts says the same; a
 * unit test holds them together). RowBinary: on 18.16 it costs the server
 * what TabSeparated does (0.98 of it, within the machine's noise), on 25.8
 * 0.91 (docs/benchmarks.md "Insert formats"), and a value out of its
 * column's range is refused rather than wrapped.
 */
export const DEFAULT_INSERT_FORMAT: InsertFormat = 'RowBinary';

export interface RowEncoder<Row> {
  readonly format: InsertFormat;
  /** Appends one row: its fields in column order, and the format's row end after the last. */
  row(row: Row): void;
  /** Bytes appended since the encoder was made. */
  readonly written: number;
  /** The bytes appended since the last take(), as chunks. */
  take(): Buffer[];
}


class TsvEncoder<Row> implements RowEncoder<Row> {
  readonly format = 'TabSeparated';
  private readonly writer = new TsvWriter();

  constructor(private readonly columns: TableSpec<Row>['columns']) {}

  row(row: Row): void {
    tsvRow(this.writer, row, this.columns);
  }

  get written(): number {
    return this.writer.written;
  }

  take(): Buffer[] {
    return this.writer.take();
  }
}

/** RowBinary has no row end: a row is its fields. */
class RowBinaryEncoder<Row> implements RowEncoder<Row> {
  readonly format = 'RowBinary';
  private readonly writer: RowBinaryWriter;
  private readonly write: RowBinaryRow<Row>;

  private readonly last: number;

  constructor(table: TableSpec<Row>) {
    this.writer = new RowBinaryWriter(table.columns);
    this.write = compiled(table);
    this.last = table.columns.length - 1;
  }

  row(row: Row): void {
    const encoded = encodedOf(row as object);
    if (encoded === undefined) return this.write(this.writer, row);
    if (encoded.format !== 'RowBinary') throw new Error(`a row encoded as ${encoded.format} cannot be written as RowBinary`);
    // A judged row: every column but the last, ingested_at (a DateTime), is written already.
    this.writer.raw(encoded.block, encoded.start, encoded.end);
    this.writer.dateTime(encoded.ingested_at, this.last);
  }

  get written(): number {
    return this.writer.written;
  }

  take(): Buffer[] {
    return this.writer.take();
  }
}

/** A spec's RowBinary row function, compiled once per spec (an encoder is made per insert). */
const ROW_FUNCTIONS = new WeakMap<object, unknown>();
export function compiled<Row>(table: TableSpec<Row>): RowBinaryRow<Row> {
  let write = ROW_FUNCTIONS.get(table) as RowBinaryRow<Row> | undefined;
  if (write === undefined) {
    write = rowBinaryRow(table);
    ROW_FUNCTIONS.set(table, write);
  }
  return write;
}

/** An encoder of `table`'s rows in `format`. */
export function rowEncoder<Row>(format: InsertFormat, table: TableSpec<Row>): RowEncoder<Row> {
  return format === 'RowBinary' ? new RowBinaryEncoder(table) : new TsvEncoder(table.columns);
}

/** Every row of `rows` in `format`, as chunks (a value the format cannot carry throws before any is sent: rowbinary.ts). */
export function encodeRows<Row>(format: InsertFormat, table: TableSpec<Row>, rows: readonly Row[]): Buffer[] {
  const encoder = rowEncoder(format, table);
  for (const row of rows) encoder.row(row);
  return encoder.take();
}

/**
 * `rows` as one INSERT into `name` in `format` (none when there are no
 * rows), named `queryId` on the server when given: the writer finds a lost
 * insert on the server by it (src/ingest/writer.ts).
 *
 * TabSeparated goes through @clickhouse/client's insert(), streamed while
 * it is written (tsv.ts). RowBinary is not among the raw formats insert()
 * takes in @clickhouse/client 1.23 (it refuses the stream), so it goes
 * through exec() with the INSERT statement and the body as its values; and
 * its body is built whole first, so a value it cannot carry throws its
 * ContentError before a byte is sent, never as a request cut mid-body.
 */
export async function insertRows<Row>(
  ch: ClickHouseClient,
  name: string,
  table: TableSpec<Row>,
  rows: readonly Row[],
  format: InsertFormat,
  queryId?: string,
): Promise<void> {
  if (rows.length === 0) return;
  const id = queryId ? { query_id: queryId } : {};
  // Judged rows (rows/encoded.ts) arrive as bytes of the same format
  // (judging/encoded-batch.ts encodes them so); each encoder refuses a row of
  // the other.
  if (format === 'TabSeparated') {
    await ch.insert({ table: name, values: tsvBody(rows, table.columns), format: 'TabSeparated', columns: table.columns, ...id });
    return;
  }
  const body = encodeRows(format, table, rows);
  const result = await ch.exec({
    query: `INSERT INTO ${name} (${table.columns.join(', ')}) FORMAT RowBinary`,
    values: Readable.from(body, { objectMode: false }),
    ...id,
  });
  // An INSERT answers with an empty body; the socket is free once it is read.
  for await (const _ of result.stream) void _;
}
