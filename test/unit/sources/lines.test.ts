/**
 * The capped line splitter of `verify` and `craze push`: lines at and over
 * the cap, input without a final newline, CRLF, characters cut between
 * chunks, byte offsets for resuming, and a line far over the cap that is
 * counted, not held.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { TOPIC_CONFIG } from '../../../src/kafka/client.js';
import { LineSplitter, MAX_LINE_BYTES, oversizedReason, readLines, type LineItem } from '../../../src/sources/lines.js';

/** Every item of `input` fed in chunks of `size` bytes, with the bytes as text. */
function split(input: string | Buffer, cap: number, size = Infinity): (LineItem & { text?: string })[] {
  const bytes = Buffer.isBuffer(input) ? input : Buffer.from(input, 'utf8');
  const s = new LineSplitter(cap);
  const items: LineItem[] = [];
  for (let i = 0; i < bytes.length; i += Math.min(size, bytes.length)) items.push(...s.push(bytes.subarray(i, i + size)));
  items.push(...s.end());
  return items.map((item) => (item.kind === 'line' ? { ...item, text: item.bytes.toString('utf8') } : item));
}
const texts = (items: ReturnType<typeof split>): (string | number)[] => items.map((i) => (i.kind === 'line' ? i.text! : -i.length));

test('the cap is the largest record the topics accept', () => {
  const max = TOPIC_CONFIG.find((c) => c.name === 'max.message.bytes');
  assert.equal(MAX_LINE_BYTES, Number(max?.value));
  assert.equal(oversizedReason({ kind: 'oversized', length: MAX_LINE_BYTES + 1, number: 1, start: 0, end: 0, terminated: true }, MAX_LINE_BYTES), `line of ${MAX_LINE_BYTES + 1} bytes exceeds the 16 MiB cap`);
});

test('a line of exactly the cap is read; one byte more is reported with its length, and the next line is read', () => {
  const items = split('abcde\nabcdef\nxy\n', 5);
  assert.deepEqual(texts(items), ['abcde', -6, 'xy']);
  assert.deepEqual(
    items.map((i) => [i.number, i.start, i.end, i.terminated]),
    [
      [1, 0, 6, true],
      [2, 6, 13, true],
      [3, 13, 16, true],
    ],
  );
});

test('the cap counts bytes, not characters', () => {
  // "é" is 2 bytes: 3 of them are 6 bytes.
  assert.deepEqual(texts(split('ééé\néé\n', 5)), [-6, 'éé']);
});

test('a last line without a newline is read, unterminated; blank lines and an empty input are lines or nothing', () => {
  const items = split('a\n\nlast', 10);
  assert.deepEqual(texts(items), ['a', '', 'last']);
  assert.deepEqual(
    items.map((i) => [i.terminated, i.end]),
    [
      [true, 2],
      [true, 3],
      [false, 7],
    ],
  );
  assert.deepEqual(split('', 10), []);
  assert.deepEqual(texts(split('\n', 10)), ['']);
  // Over the cap at the end of the input, without a newline.
  assert.deepEqual(texts(split('ok\ntoolong', 4)), ['ok', -7]);
});

test('CRLF: the CR before a newline is not part of the line; a CR elsewhere is', () => {
  assert.deepEqual(texts(split('a\r\nb\rc\r\n\r\nend\r', 10)), ['a', 'b\rc', '', 'end\r']);
  const [first] = split('a\r\nb', 10);
  assert.equal(first?.end, 3, 'the offset is past the CR and the newline');
});

test('chunks of one byte: multibyte characters cut between chunks come out whole, offsets match the single-chunk split', () => {
  const input = 'café ✓\n日本 𝄞 🙂\n{"k":"\u2028"}\ntail é';
  const whole = split(input, 64);
  for (const size of [1, 2, 3, 5, 7]) assert.deepEqual(split(input, 64, size), whole, `chunks of ${size}`);
  assert.deepEqual(texts(whole), ['café ✓', '日本 𝄞 🙂', '{"k":"\u2028"}', 'tail é']);
});

test('a starting offset shifts every position (a follower reading from the middle of a file)', () => {
  const s = new LineSplitter(10, 1000);
  assert.deepEqual(
    [...s.push(Buffer.from('ab\ncd\n')), ...s.end()].map((i) => [i.number, i.start, i.end]),
    [
      [1, 1000, 1003],
      [2, 1003, 1006],
    ],
  );
});

test('64 MiB of one line with a 1 MiB cap: reported with its length, never more than the cap held, the next line read', () => {
  const cap = 1024 * 1024;
  const s = new LineSplitter(cap);
  // One 1 MiB chunk fed 64 times: the test itself holds 1 MiB.
  const chunk = Buffer.alloc(cap, 0x61);
  let maxHeld = 0;
  const items: LineItem[] = [...s.push(Buffer.from('{"first":1}\nx'))];
  for (let i = 0; i < 64; i++) {
    items.push(...s.push(chunk));
    maxHeld = Math.max(maxHeld, s.buffered);
  }
  items.push(...s.push(Buffer.from('\n{"next":2}\n')), ...s.end());
  assert.ok(maxHeld <= cap, `held ${maxHeld} bytes`);
  assert.equal(s.buffered, 0);
  assert.deepEqual(
    items.map((i) => (i.kind === 'line' ? i.bytes.toString() : i.length)),
    ['{"first":1}', 64 * cap + 1, '{"next":2}'],
  );
  assert.deepEqual(
    items.map((i) => i.number),
    [1, 2, 3],
  );
  assert.equal(items[2]?.start, 12 + 64 * cap + 2, 'offsets count the bytes that were dropped');
});

test('readLines reads a stream of chunks the same way', async () => {
  const chunks = ['{"a":', '1}\r\n', 'é'.repeat(3), '\n', 'x'.repeat(9), '\nend'].map((c) => Buffer.from(c));
  const got: (string | number)[] = [];
  for await (const item of readLines(Readable.from(chunks), 8)) got.push(item.kind === 'line' ? item.bytes.toString() : -item.length);
  assert.deepEqual(got, ['{"a":1}', 'ééé', -9, 'end']);
});
