/**
 * Insert bodies in ClickHouse's RowBinary format, built directly from the
 * rows by each column's declared type (table-spec.ts): a row is its fields
 * one after the other, with no separator and no row end. 18.16 and current
 * ClickHouse both take it with a column list (`INSERT INTO t (c, …) FORMAT
 * RowBinary`; test/integration/rowbinary.test.ts, test/modern/rowbinary.py).
 *
 * The server parses no text: a String is its UTF-8 bytes after their length
 * (LEB128), an integer its little-endian bytes, a DateTime its UInt32 epoch
 * seconds. So the encoder is where a value that does not fit its column is
 * found, and it throws a ContentError there, as the server refuses text it
 * cannot parse in a TabSeparated field (CANNOT_PARSE_*): never a wrapped
 * number, never a shifted row. (Stricter than TabSeparated on 18.16, which
 * stores an integer out of its column's range as another value without a
 * word: 18446744073709551616 into UInt64 as 0; rowbinary.test.ts.) The writer's poison isolation (src/ingest/writer.ts) treats
 * both alike: it probes halves of the rows until the one that cannot be
 * taken is found.
 *
 * Every value reads back as the TabSeparated insert of the same row stores
 * it (test/integration/rowbinary.test.ts compares the two byte for byte):
 * - a JavaScript string as UTF-8, a lone surrogate as U+FFFD (what
 *   Buffer.write and the TabSeparated writer do);
 * - an integer column from a safe integer or from its decimal text (64-bit
 *   values are decimal strings in the rows: exact through BigInt, and out of
 *   the column's range throws);
 * - DateTime('UTC') from 'YYYY-MM-DD hh:mm:ss' read as UTC, which is how
 *   the server reads that text for a column of time zone UTC; from a number
 *   as epoch seconds.
 */
import { ContentError } from '../errors/errors.js';
import { ChunkWriter } from './chunks.js';
import type { ColumnType, TableSpec } from './table-spec.js';

/** Strings up to this length are tried as ASCII by a loop; longer ones go through Buffer.write (tsv.ts's measure). */
const SHORT = 16;

const TWO_32 = 2 ** 32;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;
const UINT_MAX: Readonly<Record<1 | 2 | 4, number>> = { 1: 0xff, 2: 0xffff, 4: 0xffff_ffff };
/** Decimal text of an integer as the TabSeparated path's rows hold it: optional minus, digits. */
const DECIMAL = /^-?[0-9]+$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/**
 * The value of decimal text of at most 15 characters (optional minus, then
 * digits: DECIMAL), NaN for any other text. A loop over the characters
 * rather than the RegExp and Number(): ten of these per envelopes row.
 */
function shortDecimal(text: string): number {
  const n = text.length;
  let i = n > 0 && text.charCodeAt(0) === 0x2d ? 1 : 0;
  if (i === n) return NaN;
  let value = 0;
  for (; i < n; i++) {
    const d = text.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return NaN;
    value = value * 10 + d;
  }
  return text.charCodeAt(0) === 0x2d ? -value : value;
}

/** LEB128 bytes of a length. */
const varintBytes = (n: number): number => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x20_0000 ? 3 : n < 0x1000_0000 ? 4 : 5);

/**
 * Fields as RowBinary, each by its type; `column` (the field's index in the
 * spec) only names it in an error.
 */
export class RowBinaryWriter extends ChunkWriter {
  /** The last DateTime text and its seconds, per column: ingested_at is one per insert, times mostly share seconds. */
  private readonly lastTime: string[] = [];
  private readonly lastSeconds: number[] = [];

  constructor(private readonly columnNames: readonly string[]) {
    super();
  }

  private refuse(column: number, value: unknown, why: string): never {
    const shown = typeof value === 'string' ? JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value) : String(value);
    throw new ContentError(`RowBinary: column ${this.columnNames[column] ?? `#${column}`} ${why}: ${shown}`);
  }

  private varint(n: number): void {
    const buf = this.buf;
    let p = this.pos;
    while (n >= 0x80) {
      buf[p++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    buf[p++] = n;
    this.pos = p;
  }

  /** String: LEB128 byte length, then the UTF-8 bytes. A number is written as its decimal text, as tsvField does. */
  string(value: unknown, column: number): void {
    const s = typeof value === 'string' ? value : this.integerText(value, column);
    const n = s.length;
    if (n <= SHORT) {
      // Room for the length byte and the longest UTF-8 of n units.
      this.room(1 + 3 * n);
      const buf = this.buf;
      const start = this.pos;
      let p = start + 1;
      for (let i = 0; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) {
          this.encoded(s);
          return;
        }
        buf[p++] = c;
      }
      buf[start] = n;
      this.pos = p;
      return;
    }
    this.encoded(s);
  }

  /**
   * A string through Buffer.write. Its UTF-8 length is at most 3 bytes per
   * UTF-16 unit: when n and 3n take as many LEB128 bytes, the text is
   * written after that many and the length put before it; else it is
   * measured first.
   */
  private encoded(s: string): void {
    const n = s.length;
    const most = 3 * n;
    const prefix = varintBytes(n);
    if (prefix === varintBytes(most)) {
      this.room(prefix + most);
      const start = this.pos;
      const bytes = this.buf.write(s, start + prefix, 'utf8');
      this.varint(bytes);
      this.pos = start + prefix + bytes;
      return;
    }
    const bytes = Buffer.byteLength(s, 'utf8');
    this.room(5 + bytes);
    this.varint(bytes);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  private integerText(value: unknown, column: number): string {
    if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
    return this.refuse(column, value, 'is a String: only strings and integers are written');
  }

  /** UInt8, UInt16, UInt32: `bytes` little-endian. */
  uint(value: unknown, column: number, bytes: 1 | 2 | 4): void {
    const n = this.smallInteger(value, column);
    if (n < 0 || n > UINT_MAX[bytes]) this.refuse(column, value, `is out of UInt${bytes * 8}'s range`);
    this.room(bytes);
    if (bytes === 1) this.buf[this.pos] = n;
    else if (bytes === 2) this.buf.writeUInt16LE(n, this.pos);
    else this.buf.writeUInt32LE(n, this.pos);
    this.pos += bytes;
  }

  /** A safe integer from a number or from its decimal text. */
  private smallInteger(value: unknown, column: number): number {
    if (typeof value === 'number') {
      if (Number.isSafeInteger(value)) return value;
    } else if (typeof value === 'string' && value.length <= 15) {
      const n = shortDecimal(value);
      if (!Number.isNaN(n)) return n;
    }
    return this.refuse(column, value, 'is not an integer');
  }

  /**
   * Int64 or UInt64, little-endian: from a safe integer, or from decimal text
   * (exact through BigInt beyond 15 digits). Out of range throws.
   */
  int64(value: unknown, column: number, signed: boolean): void {
    let n: number;
    if (typeof value === 'number') {
      if (!Number.isSafeInteger(value)) this.refuse(column, value, 'is not an integer');
      n = value;
    } else if (typeof value === 'string') {
      n = value.length <= 15 ? shortDecimal(value) : NaN;
      if (Number.isNaN(n)) {
        if (!DECIMAL.test(value)) this.refuse(column, value, 'is not an integer');
        this.bigInt64(value, column, signed);
        return;
      }
    } else return this.refuse(column, value, 'is not an integer');
    if (!signed && n < 0) this.refuse(column, value, 'is out of UInt64\'s range');
    // A safe integer as two 32-bit halves: the high one floored, so a negative
    // number's halves are its two's complement.
    const high = Math.floor(n / TWO_32);
    this.room(8);
    this.buf.writeUInt32LE(n - high * TWO_32, this.pos);
    this.buf.writeUInt32LE(high >>> 0, this.pos + 4);
    this.pos += 8;
  }

  private bigInt64(text: string, column: number, signed: boolean): void {
    const n = BigInt(text);
    if (signed ? n < INT64_MIN || n > INT64_MAX : n > UINT64_MAX || n < 0n) this.refuse(column, text, `is out of ${signed ? 'Int64' : 'UInt64'}'s range`);
    this.room(8);
    this.buf.writeBigUInt64LE(BigInt.asUintN(64, n), this.pos);
    this.pos += 8;
  }

  /** DateTime('UTC'): UInt32 epoch seconds, from 'YYYY-MM-DD hh:mm:ss' (UTC) or from epoch seconds. */
  dateTime(value: unknown, column: number): void {
    let seconds: number;
    if (typeof value === 'string') {
      if (value === this.lastTime[column]) seconds = this.lastSeconds[column]!;
      else {
        seconds = this.parseDateTime(value, column);
        this.lastTime[column] = value;
        this.lastSeconds[column] = seconds;
      }
    } else if (typeof value === 'number' && Number.isSafeInteger(value)) seconds = value;
    else return this.refuse(column, value, 'is not a DateTime');
    if (seconds < 0 || seconds > UINT_MAX[4]) this.refuse(column, value, 'is out of DateTime\'s range');
    this.room(4);
    this.buf.writeUInt32LE(seconds, this.pos);
    this.pos += 4;
  }

  private parseDateTime(text: string, column: number): number {
    const m = DATE_TIME.exec(text);
    if (m === null) return this.refuse(column, text, 'is not a DateTime (YYYY-MM-DD hh:mm:ss)');
    const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [number, number, number, number, number, number];
    const ms = Date.UTC(year, month - 1, day, hour, minute, second);
    // Date.UTC carries a day 31 of a 30-day month into the next: such text is refused, not moved.
    const check = new Date(ms);
    if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1 || hour > 23 || minute > 59 || second > 59) {
      this.refuse(column, text, 'is not a real date and time');
    }
    return ms / 1000;
  }

  /** FixedString(32) from 64 hex characters ('' as 32 zero bytes). */
  fixedHex(value: unknown, column: number): void {
    this.room(32);
    if (value === '') this.buf.fill(0, this.pos, this.pos + 32);
    else if (typeof value !== 'string' || value.length !== 64 || this.buf.write(value, this.pos, 'hex') !== 32) {
      this.refuse(column, value, 'is not 64 hex characters');
    }
    this.pos += 32;
  }
}

/** The writer call of one field of `type`: JavaScript text, compiled into a table's row function. */
function fieldCode(type: ColumnType, value: string, column: number): string {
  switch (type) {
    case 'String':
      return `w.string(${value}, ${column});`;
    case 'UInt8':
      return `w.uint(${value}, ${column}, 1);`;
    case 'UInt16':
      return `w.uint(${value}, ${column}, 2);`;
    case 'UInt32':
      return `w.uint(${value}, ${column}, 4);`;
    case 'UInt64':
      return `w.int64(${value}, ${column}, false);`;
    case 'Int64':
      return `w.int64(${value}, ${column}, true);`;
    case "DateTime('UTC')":
      return `w.dateTime(${value}, ${column});`;
    case 'FixedString(32)':
      return `w.fixedHex(${value}, ${column});`;
  }
}

/** Appends one row's fields to a writer. */
export type RowBinaryRow<Row> = (w: RowBinaryWriter, row: Row) => void;

/**
 * The row function of a table: one writer call per column, compiled once
 * from the spec (as rows/envelope-facts.ts compiles blankFacts), so each
 * field is a direct property read and a call of its type's method, with no
 * dispatch per field. The text compiled is built from the declared column
 * names and types only, never from input.
 */
export function rowBinaryRow<Row>(spec: TableSpec<Row>): RowBinaryRow<Row> {
  const body = spec.columns.map((name, i) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`column ${name} is not a plain identifier`);
    return fieldCode(spec.types[i]!, `row.${name}`, i);
  });
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function('w', 'row', body.join('\n')) as RowBinaryRow<Row>;
}
