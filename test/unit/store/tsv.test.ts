/**
 * The TabSeparated insert body (src/store/tsv.ts): the bytes the
 * buffer writer produces are the fields' escaped text (tsvField) joined by
 * tabs and newlines, encoded as UTF-8, for any strings: short and long,
 * ASCII and not, every special character, lone surrogates, chunk boundaries
 * inside a row and fields larger than a chunk.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { EncodedRow } from '../../../src/rows/encoded.js';
import { tsvChunks, tsvEncodedRows, tsvField, type Columns } from '../../../src/store/tsv.js';

interface Row {
  a: string;
  b: number;
  c: string;
}
const COLUMNS: Columns<Row> = ['a', 'b', 'c'];

/** The body as text built field by field, the reference the writer is held to. */
const reference = (rows: readonly Row[]): string => rows.map((r) => COLUMNS.map((c) => tsvField(r[c])).join('\t') + '\n').join('');

const body = (rows: readonly Row[], rowsPerChunk?: number): Buffer => Buffer.concat([...tsvChunks(rows, COLUMNS, rowsPerChunk)]);

test('tsvField escapes backslash, tab, newline, carriage return and NUL; writes integers as digits', () => {
  assert.equal(tsvField('a\\b\tc\nd\re\0f'), 'a\\\\b\\tc\\nd\\re\\0f');
  assert.equal(tsvField('{"k":"v\\"w"}'), '{"k":"v\\\\"w"}');
  assert.equal(tsvField(42), '42');
  assert.throws(() => tsvField(1.5), /not a safe integer/);
  assert.throws(() => tsvField(null), /a row holds a null/);
});

test('the body is the escaped fields, tab-separated, one line per row, as UTF-8', () => {
  const rows: Row[] = [
    { a: 'plain', b: 1, c: '' },
    { a: 'tab\there', b: 0, c: 'new\nline\r\0\\' },
    { a: 'é ü 漢字 🙂', b: 9007199254740991, c: 'x'.repeat(200) + '\t' + 'ß'.repeat(70) },
    { a: 'lone \ud800 surrogate', b: 2, c: '\udc00' },
  ];
  assert.deepEqual(body(rows), Buffer.from(reference(rows), 'utf8'));
});

test('a non-ASCII character late in a short field, and one after a special character, are written whole', () => {
  const rows: Row[] = [{ a: `${'a'.repeat(60)}\t\u00e9`, b: 3, c: `\\${'b'.repeat(10)}\u4e2d` }];
  assert.deepEqual(body(rows), Buffer.from(reference(rows), 'utf8'));
});

test('fields larger than a chunk and many rows per chunk give the same bytes', () => {
  const big = 'y'.repeat(600_000) + '\n' + '€'.repeat(100_000);
  const rows: Row[] = Array.from({ length: 1200 }, (_, i) => ({ a: i % 400 === 0 ? big : `row ${i}`, b: i, c: `c\t${i}` }));
  const want = Buffer.from(reference(rows), 'utf8');
  for (const perChunk of [1, 7, 500, 5000]) assert.deepEqual(body(rows, perChunk), want, `rowsPerChunk ${perChunk}`);
});

test('the chunks are separate buffers that stay intact after later ones are written', () => {
  const rows: Row[] = Array.from({ length: 3000 }, (_, i) => ({ a: `a${i}`.repeat(20), b: i, c: 'z'.repeat(i % 97) }));
  const chunks = [...tsvChunks(rows, COLUMNS, 100)];
  assert.ok(chunks.length > 1);
  assert.deepEqual(Buffer.concat(chunks), Buffer.from(reference(rows), 'utf8'));
});

test('any strings: the body equals the reference (property)', () => {
  const text = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 80 }),
    fc.string({ unit: 'binary', maxLength: 80 }),
    fc.string({ unit: fc.constantFrom('\\', '\t', '\n', '\r', '\0', 'a', 'é', '\ud800', '\udfff', '🙂'), maxLength: 150 }),
  );
  const row = fc.record({ a: text, b: fc.maxSafeNat(), c: text });
  fc.assert(
    fc.property(fc.array(row, { maxLength: 30 }), fc.integer({ min: 1, max: 40 }), (rows, perChunk) => {
      assert.deepEqual(body(rows, perChunk), Buffer.from(reference(rows), 'utf8'));
    }),
    { numRuns: 500 },
  );
});

test("a worker thread's encoded rows, stamped by the flush, give the bytes of the rows themselves (property)", () => {
  const text = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 80 }),
    fc.string({ unit: fc.constantFrom('\\', '\t', '\n', '\r', '\0', 'a', 'é', '\ud800', '🙂'), maxLength: 150 }),
  );
  fc.assert(
    fc.property(fc.array(fc.record({ a: text, b: fc.maxSafeNat(), c: text }), { maxLength: 30 }), text, fc.integer({ min: 1, max: 40 }), (rows, stamp, perChunk) => {
      const { block, ends } = tsvEncodedRows(rows, COLUMNS);
      assert.equal(ends.length, rows.length);
      // Handles as the driver holds them: only the last column (the stamp) as a field, the rest as bytes.
      let start = 0;
      const handles = rows.map((_, i) => {
        const h = new EncodedRow('TabSeparated', block, start, ends[i]!, 't', 0, String(i), 'ok', undefined, undefined, undefined, undefined);
        h.ingested_at = stamp;
        start = ends[i]!;
        return h as unknown as Row;
      });
      const stamped = rows.map((r) => ({ ...r, c: stamp }));
      assert.deepEqual(Buffer.concat([...tsvChunks(handles, COLUMNS, perChunk)]), body(stamped));
      // Mixed with rows of fields (a malformed row put in place of a refused one).
      const mixed = [...handles.slice(0, 2), ...stamped.slice(2, 4), ...handles.slice(4)];
      assert.deepEqual(Buffer.concat([...tsvChunks(mixed, COLUMNS, perChunk)]), body(stamped));
    }),
  );
});

test("the encoded rows' block is memory of its own, not a slice of Node's shared pool (it is transferred to another thread)", () => {
  const { block } = tsvEncodedRows([{ a: 'x', b: 1, c: 'y' }], COLUMNS);
  assert.equal(block.byteOffset, 0);
  assert.equal(block.buffer.byteLength, block.length);
});
