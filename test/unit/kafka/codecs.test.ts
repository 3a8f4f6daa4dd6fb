/**
 * The compression codecs registered with kafkajs (src/kafka/codecs.ts), on
 * bytes other clients wrote (test/fixtures/codecs): whole record batches
 * made by the Java client's MemoryRecordsBuilder, and payloads made by
 * franz-go's own compressor (raw snappy, pierrec lz4 frames, klauspost zstd).
 * The reference for what they hold is the plain text they were made from,
 * and Node's zlib for the Java gzip batch: neither is the code under test.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CODEC_NAMES, kafkaCodec, registerCodecs, snappyDecode, snappyEncode, UndecodableBatchError, undecodableBatch } from '../../../src/kafka/codecs.js';

const FIXTURES = fileURLToPath(new URL('../../../../test/fixtures/', import.meta.url));
const require = createRequire(import.meta.url);
type Decoded = { records: { key: Buffer | null; value: Buffer | null; offset: string }[]; firstOffset: string };
const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => unknown;
const decodeBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (decoder: unknown) => Promise<Decoded>;

registerCodecs();

/** The first 300 lines of honest.jsonl: what every fixture was made from. */
const LINES = readFileSync(`${FIXTURES}envelopes/honest.jsonl`, 'utf8').split('\n').slice(0, 300);
const FRANZ_SOURCE = Buffer.from(LINES.map((l) => `${l}\n`).join(''));
const javaBatch = (codec: string): Buffer => readFileSync(`${FIXTURES}codecs/java-${codec}.batch`);
const franz = (codec: string): Buffer => readFileSync(`${FIXTURES}codecs/franz-${codec}.bin`);
/** A v2 batch's records start after its 61-byte header. */
const payloadOf = (batch: Buffer): Buffer => batch.subarray(61);
const codecOf = (name: (typeof CODEC_NAMES)[number]) => kafkaCodec(name) ?? assert.fail(`no codec ${name}`);

for (const name of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
  test(`kafkajs decodes a ${name} record batch the Java client wrote: every record, in order`, async () => {
    const batch = await decodeBatch(new Decoder(javaBatch(name)));
    assert.equal(batch.records.length, 300);
    batch.records.forEach((r, i) => {
      assert.equal(r.offset, String(i));
      assert.equal(r.value?.toString(), LINES[i]);
      assert.equal(r.key?.toString(), /"LoopID":"([^"]*)"/.exec(LINES[i]!)?.[1]);
    });
  });

  test(`${name}: the Java client's payload decompresses to the bytes zlib reads from its gzip batch`, async () => {
    const reference = gunzipSync(payloadOf(javaBatch('gzip')));
    assert.ok(reference.length > 100_000, 'more than one snappy (32 KiB) and lz4 (64 KiB) block');
    assert.deepEqual(await codecOf(name).decompress(payloadOf(javaBatch(name))), reference);
  });

  test(`${name}: franz-go's compressor's output decompresses to its input`, async () => {
    assert.deepEqual(await codecOf(name).decompress(franz(name)), FRANZ_SOURCE);
  });

  test(`${name}: round trips, empty, small and many blocks`, async () => {
    for (const data of [Buffer.alloc(0), Buffer.from('x'), FRANZ_SOURCE, Buffer.concat([FRANZ_SOURCE, FRANZ_SOURCE, FRANZ_SOURCE])]) {
      const compressed = await codecOf(name).compress({ buffer: data });
      assert.deepEqual(await codecOf(name).decompress(compressed), data);
    }
  });

  test(`${name}: a corrupt payload fails with UndecodableBatchError naming the codec and the batch's offsets`, async () => {
    const batch = Buffer.from(javaBatch(name));
    // Where each format is sure to notice (lz4 and zstd frames from Java carry
    // no checksum: changed data bytes would decode to other bytes).
    if (name === 'gzip') for (let i = batch.length - 8; i < batch.length; i++) batch[i] = batch[i]! ^ 0x5a; // the CRC-32 and length trailer
    if (name === 'snappy') batch.writeUInt32BE(0x7fffffff, 61 + 16); // the first xerial block's length
    if (name === 'lz4') batch.writeUInt32LE(0x7fffffff, 61 + 7); // the first block's size, past the 7-byte frame header
    if (name === 'zstd') batch.set([0x07, 0, 0], 61 + 6); // the first block's header: the reserved block type
    const err = await decodeBatch(new Decoder(batch)).then(
      () => assert.fail('a corrupt batch decoded'),
      (e: unknown) => e,
    );
    const failure = undecodableBatch(err) ?? assert.fail(`not an UndecodableBatchError: ${String(err)}`);
    assert.equal(failure.codec, name);
    assert.equal(failure.retriable, false, 'kafkajs must not retry or restart into it');
    assert.deepEqual({ base: failure.place.baseOffset, last: failure.place.lastOffset }, { base: '0', last: '299' });
    assert.match(failure.message, new RegExp(`^a record batch cannot be decoded \\(topic unknown, partition unknown, offsets 0\\.\\.299\\): its ${name} payload cannot be decompressed \\(.+\\)\\. Nothing from it on is read or committed`));
  });
}

test('snappy: raw snappy and the xerial framing are both read; the Java framing is what is written', () => {
  const xerial = snappyEncode(FRANZ_SOURCE);
  assert.deepEqual(xerial.subarray(0, 16), payloadOf(javaBatch('snappy')).subarray(0, 16), 'magic and versions as the Java client writes them');
  assert.deepEqual(snappyDecode(xerial), FRANZ_SOURCE);
  assert.equal(franz('snappy')[0], 0x83, 'franz-go writes raw snappy (a length varint, no magic)');
  assert.deepEqual(snappyDecode(franz('snappy')), FRANZ_SOURCE);
  assert.throws(() => snappyDecode(xerial.subarray(0, xerial.length - 1)), /runs past the end/);
});

test('zstd: several frames in one payload, and frames without a content size (as Java writes)', async () => {
  const java = payloadOf(javaBatch('zstd'));
  assert.equal(java[4]! & 0xc0, 0, 'the Java frame declares no content size');
  const twice = Buffer.concat([java, franz('zstd')]);
  assert.deepEqual(await codecOf('zstd').decompress(twice), Buffer.concat([gunzipSync(payloadOf(javaBatch('gzip'))), FRANZ_SOURCE]));
});

test('a batch naming a codec id Kafka does not define fails with UndecodableBatchError, not as garbage records', async () => {
  for (const id of [5, 6, 7]) {
    const batch = Buffer.from(javaBatch('gzip'));
    batch.writeInt16BE((batch.readInt16BE(21) & ~0x07) | id, 21);
    const err = await decodeBatch(new Decoder(batch)).then(
      () => assert.fail(`codec id ${id} decoded`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof UndecodableBatchError, String(err));
    assert.equal(err.codec, `codec id ${id}`);
    assert.match(err.message, new RegExp(`codec id ${id}, which Kafka does not define`));
  }
});

test("the fetch kafkajs's consumer makes is the one wrapped to say whose batch failed (kafkajs is pinned: this is its check)", () => {
  const Broker = require('kafkajs/src/broker') as { prototype: { fetch: { toString(): string } } };
  assert.match(Broker.prototype.fetch.toString(), /undecodableBatch\(err\)/, 'Broker.prototype.fetch is wrapped');
  assert.deepEqual([...CODEC_NAMES], ['none', 'gzip', 'snappy', 'lz4', 'zstd']);
  assert.equal(kafkaCodec('none'), undefined);
});
