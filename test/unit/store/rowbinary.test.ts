/**
 * The RowBinary insert body (src/store/rowbinary.ts) byte for byte: LEB128
 * lengths at their boundaries, strings with every byte the TabSeparated
 * path escapes, 4-byte UTF-8 and lone surrogates, 64-bit integers at their
 * ends from decimal text, DateTime as epoch seconds, and values out of their
 * column's range refused (ContentError), never wrapped. Then the RowEncoder
 * shape both formats share (src/store/insert-format.ts) and the drift check
 * of the declared types (table-spec.ts).
 *
 * The references here are written independently of the encoder: a length is
 * LEB128 by the textbook loop, text is Buffer.from(…, 'utf8'), an integer is
 * Buffer#writeBigInt64LE of BigInt(text).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ContentError } from '../../../src/errors/errors.js';
import { EncodedRow } from '../../../src/rows/encoded.js';
import { ENVELOPE_TABLE, CRAZE_TABLE, LOOP_HEAD_TABLE } from '../../../src/store/columns.js';
import { DEFAULT_INSERT_FORMAT, encodeRows, INSERT_FORMATS, rowEncoder } from '../../../src/store/insert-format.js';
import { specDrift, tableSpec, type ColumnType } from '../../../src/store/table-spec.js';
import { tsvChunks } from '../../../src/store/tsv.js';
import { parseConfig } from '../../../src/config/index.js';

/** One value of `type` as the encoder writes it. */
function one(type: ColumnType, value: unknown): Buffer {
  return Buffer.concat(encodeRows('RowBinary', tableSpec<{ v: unknown }>({ v: type }), [{ v: value }]));
}

function leb128(n: number): Buffer {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b += 128;
    out.push(b);
  } while (n > 0);
  return Buffer.from(out);
}
const stringRef = (s: string): Buffer => {
  const bytes = Buffer.from(s, 'utf8');
  return Buffer.concat([leb128(bytes.length), bytes]);
};
const int64Ref = (text: string, signed: boolean): Buffer => {
  const b = Buffer.alloc(8);
  if (signed) b.writeBigInt64LE(BigInt(text));
  else b.writeBigUInt64LE(BigInt(text));
  return b;
};
const hex = (b: Buffer): string => b.toString('hex');

test('a String is its LEB128 byte length, then its bytes: the length boundaries 127/128/16383/16384', () => {
  assert.equal(hex(one('String', '')), '00');
  for (const [n, prefix] of [
    [1, '01'],
    [127, '7f'],
    [128, '8001'],
    [16383, 'ff7f'],
    [16384, '808001'],
    [2_097_151, 'ffff7f'],
    [2_097_152, '80808001'],
  ] as const) {
    const got = one('String', 'a'.repeat(n));
    assert.equal(hex(got.subarray(0, prefix.length / 2)), prefix, `length ${n}`);
    assert.equal(got.length, prefix.length / 2 + n);
  }
  // The same boundaries reached by multi-byte characters (the length counts bytes, not characters).
  for (const n of [42, 43, 127, 128, 5461, 5462, 16383, 16384]) {
    const s = 'é'.repeat(Math.floor(n / 2)) + 'x'.repeat(n % 2);
    assert.deepEqual(one('String', s), stringRef(s), `${n} bytes of é`);
    const t = '€'.repeat(Math.ceil(n / 3));
    assert.deepEqual(one('String', t), stringRef(t), `${Buffer.byteLength(t)} bytes of €`);
  }
});

test('a String carries NUL, tab, newline, carriage return and backslash as themselves; 4-byte UTF-8; a lone surrogate as U+FFFD', () => {
  assert.equal(hex(one('String', '\0\t\n\r\\')), '05' + '00090a0d5c');
  assert.equal(hex(one('String', '🙂')), '04' + 'f09f9982');
  assert.equal(hex(one('String', 'a🙂b')), '06' + '61f09f998262');
  assert.equal(hex(one('String', '\ud800')), '03' + 'efbfbd');
  assert.equal(hex(one('String', 'x\udc00y')), '05' + '78efbfbd79');
  // In a long field too (the Buffer.write path), and a surrogate pair split by the 16-unit short path's end.
  const long = `${'z'.repeat(40)}\ud83d`;
  assert.deepEqual(one('String', long), Buffer.concat([Buffer.from([43]), Buffer.from('z'.repeat(40)), Buffer.from('efbfbd', 'hex')]));
  assert.deepEqual(one('String', `${'q'.repeat(15)}🙂`), stringRef(`${'q'.repeat(15)}🙂`));
  // A number in a String column is its decimal text, as the TabSeparated path writes it.
  assert.equal(hex(one('String', 42)), '02' + '3432');
});

test('any string is its UTF-8 (lone surrogates as U+FFFD) after its byte length (property)', () => {
  const text = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 200 }),
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.string({ unit: fc.constantFrom('\\', '\t', '\n', '\0', 'a', 'é', '€', '\ud800', '\udfff', '🙂'), maxLength: 300 }),
  );
  fc.assert(
    fc.property(fc.array(text, { maxLength: 20 }), (strings) => {
      const spec = tableSpec<{ v: string }>({ v: 'String' });
      const got = Buffer.concat(encodeRows('RowBinary', spec, strings.map((v) => ({ v }))));
      assert.deepEqual(got, Buffer.concat(strings.map(stringRef)));
    }),
    { numRuns: 500 },
  );
});

test('Int64 and UInt64 from decimal text exactly, at both ends; small numbers from numbers or text', () => {
  for (const text of ['0', '1', '-1', '255', '4294967295', '4294967296', '-4294967297', '9007199254740993', '9223372036854775807', '-9223372036854775808', '-9007199254740991']) {
    assert.deepEqual(one('Int64', text), int64Ref(text, true), `Int64 ${text}`);
  }
  assert.equal(hex(one('Int64', '9223372036854775807')), 'ffffffffffffff7f');
  assert.equal(hex(one('Int64', '-9223372036854775808')), '0000000000000080');
  assert.equal(hex(one('Int64', -1)), 'ffffffffffffffff');
  assert.equal(hex(one('Int64', Number.MIN_SAFE_INTEGER)), '010000000000e0ff');
  for (const text of ['0', '18446744073709551615', '9223372036854775808', '123456789012345']) assert.deepEqual(one('UInt64', text), int64Ref(text, false), `UInt64 ${text}`);
  assert.equal(hex(one('UInt64', '18446744073709551615')), 'ffffffffffffffff');
  assert.equal(hex(one('UInt64', 7)), '0700000000000000');
  assert.equal(hex(one('UInt64', '007')), '0700000000000000');
  assert.equal(hex(one('UInt8', 1)), '01');
  assert.equal(hex(one('UInt8', '255')), 'ff');
  assert.equal(hex(one('UInt16', 65535)), 'ffff');
  assert.equal(hex(one('UInt32', 4294967295)), 'ffffffff');
  assert.equal(hex(one('UInt32', '258')), '02010000');
});

test('an integer out of its column\'s range, or not an integer, throws a ContentError: never wraps', () => {
  const refused: [ColumnType, unknown][] = [
    ['Int64', '9223372036854775808'],
    ['Int64', '-9223372036854775809'],
    ['Int64', '99999999999999999999999'],
    ['UInt64', '18446744073709551616'],
    ['UInt64', '-1'],
    ['UInt64', -1],
    ['UInt32', 4294967296],
    ['UInt32', -1],
    ['UInt16', 65536],
    ['UInt8', 256],
    ['UInt8', '256'],
    ['Int64', '1 is not a number'],
    ['Int64', ' 1'],
    ['Int64', '0x10'],
    ['Int64', '1e3'],
    ['Int64', ''],
    ['Int64', 1.5],
    ['Int64', 2 ** 53],
    ['Int64', null],
    ['UInt64', undefined],
    ['String', null],
    ['String', 1.5],
  ];
  for (const [type, value] of refused) {
    assert.throws(() => one(type, value), (err: unknown) => err instanceof ContentError && /^RowBinary: column v /.test(err.message), `${type} ${String(value)}`);
  }
});

test('DateTime(\'UTC\') is UInt32 epoch seconds of the text read as UTC; out of range or not a date throws', () => {
  assert.equal(hex(one("DateTime('UTC')", '1970-01-01 00:00:00')), '00000000');
  assert.equal(hex(one("DateTime('UTC')", '1970-01-01 00:00:01')), '01000000');
  assert.equal(hex(one("DateTime('UTC')", '2106-02-07 06:28:15')), 'ffffffff');
  const seconds = Date.UTC(2026, 10, 30, 10, 0, 0) / 1000;
  const want = Buffer.alloc(4);
  want.writeUInt32LE(seconds);
  assert.deepEqual(one("DateTime('UTC')", '2026-11-30 10:00:00'), want);
  assert.deepEqual(one("DateTime('UTC')", seconds), want);
  for (const bad of ['2106-02-07 06:28:16', '1969-12-31 23:59:59', '2026-02-30 00:00:00', '2026-11-30T10:00:00', '2026-11-30 24:00:00', '', -1]) {
    assert.throws(() => one("DateTime('UTC')", bad), ContentError, String(bad));
  }
  // The cache of the last text per column: two columns, alternating values.
  const spec = tableSpec<{ a: string; b: string }>({ a: "DateTime('UTC')", b: "DateTime('UTC')" });
  const rows = [
    { a: '2026-01-01 00:00:00', b: '2026-01-01 00:00:01' },
    { a: '2026-01-01 00:00:00', b: '2026-01-01 00:00:02' },
  ];
  const got = Buffer.concat(encodeRows('RowBinary', spec, rows));
  const t = Date.UTC(2026, 0, 1) / 1000;
  assert.deepEqual([0, 4, 8, 12].map((o) => got.readUInt32LE(o)), [t, t + 1, t, t + 2]);
});

test('FixedString(32) from 64 hex characters; empty as 32 zero bytes', () => {
  const h = 'ab'.repeat(32);
  assert.equal(hex(one('FixedString(32)', h)), h);
  assert.equal(hex(one('FixedString(32)', '')), '00'.repeat(32));
  for (const bad of ['ab', 'zz'.repeat(32), 'ab'.repeat(33), 5]) assert.throws(() => one('FixedString(32)', bad), ContentError);
});

test('a row is its fields in column order with no row end; written counts every byte; take() hands each byte once', () => {
  interface Row {
    s: string;
    n: string;
    p: number;
    t: string;
  }
  const spec = tableSpec<Row>({ s: 'String', n: 'Int64', p: 'UInt32', t: "DateTime('UTC')" });
  const encoder = rowEncoder<Row>('RowBinary', spec);
  assert.equal(encoder.format, 'RowBinary');
  encoder.row({ s: 'ab', n: '-2', p: 3, t: '1970-01-01 00:00:04' });
  assert.equal(encoder.written, 3 + 8 + 4 + 4);
  const first = Buffer.concat(encoder.take());
  assert.equal(hex(first), '026162' + 'feffffffffffffff' + '03000000' + '04000000');
  encoder.row({ s: '', n: '0', p: 0, t: '1970-01-01 00:00:00' });
  assert.equal(encoder.written, 19 + 17);
  assert.equal(hex(Buffer.concat(encoder.take())), '00' + '00'.repeat(16));
  assert.deepEqual(encoder.take(), []);
  // Fields larger than a chunk, between small ones.
  const big = 'y'.repeat(600_000) + '€'.repeat(100_000);
  const rows: Row[] = Array.from({ length: 50 }, (_, i) => ({ s: i % 10 === 0 ? big : `r${i}`, n: String(i), p: i, t: '2026-01-01 00:00:00' }));
  const e2 = rowEncoder<Row>('RowBinary', spec);
  for (const r of rows) e2.row(r);
  const chunks = e2.take();
  assert.ok(chunks.length > 1);
  const body = Buffer.concat(chunks);
  assert.equal(body.length, e2.written);
  const want = Buffer.concat(rows.flatMap((r) => [stringRef(r.s), int64Ref(r.n, true), Buffer.from([r.p, 0, 0, 0]), Buffer.from(one("DateTime('UTC')", r.t))]));
  assert.deepEqual(body, want);
});

test('the TabSeparated encoder has the same shape and writes what tsvChunks writes', () => {
  interface Row {
    a: string;
    b: number;
  }
  const spec = tableSpec<Row>({ a: 'String', b: 'UInt64' });
  const rows: Row[] = [
    { a: 'tab\there', b: 1 },
    { a: '\ud800', b: 2 },
  ];
  const encoder = rowEncoder<Row>('TabSeparated', spec);
  for (const r of rows) encoder.row(r);
  const body = Buffer.concat(encoder.take());
  assert.equal(encoder.written, body.length);
  assert.deepEqual(body, Buffer.concat([...tsvChunks(rows, spec.columns)]));
  assert.equal(body.toString('utf8'), 'tab\\there\t1\n\ufffd\t2\n');
});

test('the tables\' specs: one type per column, names unique, envelopes ends with the Kafka columns', () => {
  for (const spec of [ENVELOPE_TABLE, CRAZE_TABLE, LOOP_HEAD_TABLE]) {
    assert.equal(spec.types.length, spec.columns.length);
    assert.equal(new Set(spec.columns).size, spec.columns.length);
    assert.deepEqual(spec.columns.slice(-4), ['kafka_topic', 'kafka_partition', 'kafka_offset', 'ingested_at']);
    assert.deepEqual(spec.types.slice(-4), ['String', 'UInt32', 'UInt64', "DateTime('UTC')"]);
  }
});

test('specDrift names a type that differs, a column the table lacks, and a stored column no insert names; ALIAS columns are not inserted', () => {
  const spec = tableSpec<{ a: string; b: string }>({ a: 'String', b: 'UInt64' });
  assert.deepEqual(
    specDrift('t', [
      { name: 'a', type: 'String', default_kind: '' },
      { name: 'b', type: 'UInt64', default_kind: 'DEFAULT' },
      { name: 'x', type: 'Int64', default_kind: 'ALIAS' },
    ], spec),
    [],
  );
  assert.deepEqual(
    specDrift('t', [
      { name: 'b', type: 'UInt32', default_kind: '' },
      { name: 'c', type: 'String', default_kind: '' },
    ], spec),
    ['t.a is inserted as String but the table stores no such column', 't.b is UInt32 in the table but inserted as UInt64', 't.c is stored but no insert names it'],
  );
});

test('AGENTLEDGER_INSERT_FORMAT: its default is DEFAULT_INSERT_FORMAT; both formats are taken, anything else refused', () => {
  assert.equal(parseConfig({}).insertFormat, DEFAULT_INSERT_FORMAT);
  for (const format of INSERT_FORMATS) assert.equal(parseConfig({ AGENTLEDGER_INSERT_FORMAT: format }).insertFormat, format);
  assert.throws(() => parseConfig({ AGENTLEDGER_INSERT_FORMAT: 'Native' }), /AGENTLEDGER_INSERT_FORMAT/);
});

test('a judged row (rows/encoded.ts): each format writes its bytes then ingested_at, and refuses a row of the other format', () => {
  interface Row {
    a: string;
    ingested_at: string;
  }
  const spec = tableSpec<Row>({ a: 'String', ingested_at: "DateTime('UTC')" });
  const block = Buffer.from('xx\tpre\tencoded\tyy', 'utf8');
  const row = new EncodedRow('TabSeparated', block, 3, 14, 't', 0, '1', 'ok', 'loop', 1, 'ModelCalled', undefined);
  row.ingested_at = '2026-12-07 12:00:00';
  const tsv = rowEncoder<Row>('TabSeparated', spec);
  tsv.row(row as unknown as Row);
  tsv.row({ a: 'plain', ingested_at: '2026-12-07 12:00:00' });
  assert.equal(Buffer.concat(tsv.take()).toString('utf8'), 'pre\tencoded\t2026-12-07 12:00:00\nplain\t2026-12-07 12:00:00\n');
  assert.throws(() => rowEncoder<Row>('RowBinary', spec).row(row as unknown as Row), /cannot be written as RowBinary/);
  // A RowBinary one: its bytes, then ingested_at as UInt32 seconds; the same bytes as the row of fields.
  const plain = { a: 'encoded', ingested_at: '2026-12-07 12:00:00' };
  const whole = rowEncoder<Row>('RowBinary', spec);
  whole.row(plain);
  const bytes = Buffer.concat(whole.take());
  const binary = new EncodedRow('RowBinary', bytes, 0, bytes.length - 4, 't', 0, '1', 'ok', 'loop', 1, 'ModelCalled', undefined);
  binary.ingested_at = plain.ingested_at;
  const rb = rowEncoder<Row>('RowBinary', spec);
  rb.row(binary as unknown as Row);
  assert.deepEqual(Buffer.concat(rb.take()), bytes);
  assert.throws(() => rowEncoder<Row>('TabSeparated', spec).row(binary as unknown as Row), /cannot be written as TabSeparated/);
});
