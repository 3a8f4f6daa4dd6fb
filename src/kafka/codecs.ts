/**
 * Kafka's compression codecs for kafkajs, which ships only gzip and refuses a
 * snappy, lz4 or zstd record batch with KafkaJSNotImplemented: a consumer
 * would stop at the first such batch, every time it is restarted. Producers
 * in other languages compress by default (franz-go: snappy), so these are
 * registered once per process, for every client, by createKafka.
 *
 * The wire formats, as the clients that write them do:
 * - snappy: the Java client (and librdkafka, franz-go when reading) frames
 *   it the xerial way: the magic `\x82SNAPPY\0`, two 4-byte versions, then
 *   blocks of at most 32 KiB, each a 4-byte big-endian length and one raw
 *   snappy block. franz-go and others write one raw snappy block. Both are
 *   read (the magic decides); this module writes the xerial framing, which
 *   every client reads.
 * - lz4: the LZ4 frame format (magic 0x184D2204), as Kafka has used since
 *   message format v1.
 * - zstd: standard zstd frames, possibly several and without a content size
 *   (the Java client writes none).
 *
 * A batch that cannot be decompressed, or names a codec id Kafka does not
 * define (5 to 7), fails with UndecodableBatchError: not retriable, so the
 * consumer stops instead of restarting into the same batch for ever, and
 * ingest says where (docs/operations.md "Operations").
 */
import { createRequire } from 'node:module';
import { gunzipSync, gzipSync } from 'node:zlib';
import kafkajs, { type CompressionTypes } from 'kafkajs';
import { compress as zstdCompress, decompress as zstdDecompress } from '@mongodb-js/zstd';
import { compressFrameSync, decompressFrameSync } from 'lz4-napi';
import { compressSync as snappyCompress, uncompressSync as snappyUncompress } from 'snappy';
import { causes, failureMessage } from '../errors/errors.js';

/** The `--compression` choices, by Kafka's names. */
export const CODEC_NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export type CodecName = (typeof CODEC_NAMES)[number];

/** Kafka's codec ids (the low 3 bits of a record batch's attributes). */
export const CODEC_IDS = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const satisfies Record<CodecName, number>;

export function isCodecName(text: string): text is CodecName {
  return (CODEC_NAMES as readonly string[]).includes(text);
}

/** The codec as a producer's send takes it. */
/** A codec as the producer takes it (kafkajs's CompressionTypes). */
export type Compression = CompressionTypes;

export function compressionType(name: CodecName): Compression {
  return CODEC_IDS[name];
}

/** Where an undecodable batch is, as far as it is known. */
export interface BatchPlace {
  topic?: string;
  partition?: number;
  /** The offset the consumer fetched from (the batch holds it, or follows the batches before it). */
  fetchOffset?: string;
  /** The batch's own first and last offsets, read from its header. */
  baseOffset?: string;
  lastOffset?: string;
}

/**
 * A record batch the consumer cannot decode: a corrupt compressed payload,
 * or a codec id Kafka does not define. Retrying reads the same bytes again,
 * so it is not retriable (kafkajs then stops the consumer, with no restart).
 */
export class UndecodableBatchError extends Error {
  override readonly name = 'UndecodableBatchError';
  readonly retriable = false;
  readonly place: BatchPlace = {};
  constructor(
    /** Kafka's name of the codec, or `codec id N` for an id Kafka does not define. */
    readonly codec: string,
    /** Why, in a few words. */
    readonly reason: string,
    /**
     * The decompressor's own error. Not `cause`: kafkajs's retrier wraps a
     * non-retriable error with the error's cause when it has one, and this
     * error would be lost to whoever looks at the crash.
     */
    readonly origin?: unknown,
  ) {
    super(reason);
    this.message = this.describe();
  }

  /** Adds what became known of where the batch is; the message says it. */
  at(place: BatchPlace): this {
    Object.assign(this.place, place);
    this.message = this.describe();
    return this;
  }

  /** One line: what, where, and that nothing is skipped. */
  private describe(): string {
    const { topic, partition, fetchOffset, baseOffset, lastOffset } = this.place;
    const at = [
      topic === undefined ? 'topic unknown' : `topic ${topic}`,
      partition === undefined ? 'partition unknown' : `partition ${partition}`,
      baseOffset === undefined ? (fetchOffset === undefined ? 'offset unknown' : `fetched from offset ${fetchOffset}`) : `offsets ${baseOffset}..${lastOffset}`,
    ].join(', ');
    return (
      `a record batch cannot be decoded (${at}): ${this.reason}. Nothing from it on is read or committed, and a restart stops here again: ` +
      `fix or replace what wrote it, or move the consumer group past it on purpose (kafka-consumer-groups --reset-offsets)`
    );
  }
}

/** The UndecodableBatchError behind `err` (kafkajs may wrap it), if that is what it is. */
export function undecodableBatch(err: unknown): UndecodableBatchError | undefined {
  for (const e of causes(err)) if (e instanceof UndecodableBatchError) return e;
  return undefined;
}

// ---------------------------------------------------------------- snappy

const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
/** The magic, then the version and the oldest compatible version (both 1), as the Java client writes them. */
const XERIAL_HEADER = Buffer.concat([XERIAL_MAGIC, Buffer.from([0, 0, 0, 1, 0, 0, 0, 1])]);
/** The Java client's block size. */
const XERIAL_BLOCK = 32 * 1024;

const uncompressBlock = (block: Buffer): Buffer => snappyUncompress(block, { asBuffer: true }) as Buffer;

/** Snappy, xerial-framed or raw (the first 8 bytes decide, as every client's reader does). */
export function snappyDecode(data: Buffer): Buffer {
  if (data.length < XERIAL_HEADER.length || !data.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC)) return uncompressBlock(data);
  const blocks: Buffer[] = [];
  for (let at = XERIAL_HEADER.length; at < data.length; ) {
    if (at + 4 > data.length) throw new Error(`xerial snappy frame: a block length is cut off at byte ${at}`);
    const length = data.readUInt32BE(at);
    at += 4;
    if (at + length > data.length) throw new Error(`xerial snappy frame: a block of ${length} bytes at byte ${at} runs past the end (${data.length} bytes)`);
    blocks.push(uncompressBlock(data.subarray(at, at + length)));
    at += length;
  }
  return Buffer.concat(blocks);
}

/** Snappy in the xerial framing. */
export function snappyEncode(data: Buffer): Buffer {
  const parts: Buffer[] = [XERIAL_HEADER];
  for (let at = 0; at < data.length; at += XERIAL_BLOCK) {
    const block = snappyCompress(data.subarray(at, at + XERIAL_BLOCK));
    const length = Buffer.alloc(4);
    length.writeUInt32BE(block.length);
    parts.push(length, block);
  }
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------- the registration

/** What kafkajs hands a codec's compress: its encoder, whose buffer holds the records. */
interface Encoder {
  readonly buffer: Buffer;
}

interface Codec {
  compress(encoder: Encoder): Promise<Buffer>;
  decompress(data: Buffer): Promise<Buffer>;
}

/** The length of a v2 record batch's header before its (compressed) records. */
const BATCH_HEADER = 61;

/**
 * The batch's first and last offsets, from the header bytes just before its
 * records. kafkajs hands decompress a slice of the fetch response, so they
 * are there; they are used only when they look like this batch's header
 * (magic 2, this codec's id in the attributes).
 */
function headerOffsets(data: Buffer, id: number): Pick<BatchPlace, 'baseOffset' | 'lastOffset'> {
  if (data.byteOffset < BATCH_HEADER) return {};
  const header = Buffer.from(data.buffer, data.byteOffset - BATCH_HEADER, BATCH_HEADER);
  if (header.readInt8(16) !== 2 || (header.readInt16BE(21) & 0x07) !== id) return {};
  const base = header.readBigInt64BE(0);
  return { baseOffset: base.toString(), lastOffset: (base + BigInt(header.readInt32BE(23))).toString() };
}

function codec(name: Exclude<CodecName, 'none'>, encode: (data: Buffer) => Buffer | Promise<Buffer>, decode: (data: Buffer) => Buffer | Promise<Buffer>): Codec {
  const id = CODEC_IDS[name];
  return {
    compress: async (encoder) => encode(encoder.buffer),
    async decompress(data) {
      try {
        return await decode(data);
      } catch (err) {
        throw new UndecodableBatchError(name, `its ${name} payload cannot be decompressed (${failureMessage(err)})`, err).at(headerOffsets(data, id));
      }
    },
  };
}

const CODECS: Record<Exclude<CodecName, 'none'>, Codec> = {
  gzip: codec('gzip', (data) => gzipSync(data), (data) => gunzipSync(data)),
  snappy: codec('snappy', snappyEncode, snappyDecode),
  lz4: codec('lz4', (data) => compressFrameSync(data), (data) => decompressFrameSync(data)),
  zstd: codec(
    'zstd',
    (data) => zstdCompress(data, 3),
    (data) => zstdDecompress(data),
  ),
};

/** The codec kafkajs uses for `name` (none: undefined), for tests and benchmarks. */
export function kafkaCodec(name: CodecName): Codec | undefined {
  return name === 'none' ? undefined : CODECS[name];
}

let registered = false;

/**
 * Registers the codecs with kafkajs, once per process: kafkajs keeps one
 * table for all its clients. Idempotent; createKafka calls it.
 */
export function registerCodecs(): void {
  if (registered) return;
  registered = true;
  const table = kafkajs.CompressionCodecs as Record<number, () => Codec>;
  for (const name of ['gzip', 'snappy', 'lz4', 'zstd'] as const) table[CODEC_IDS[name]] = () => CODECS[name];
  // Ids Kafka does not define: without an entry kafkajs would read the
  // compressed bytes as plain records.
  for (const id of [5, 6, 7]) {
    table[id] = () => {
      throw new UndecodableBatchError(`codec id ${id}`, `the batch names compression codec id ${id}, which Kafka does not define (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)`);
    };
  }
  placeUndecodableBatches();
}

interface FetchRequest {
  topics: { topic: string; partitions: { partition: number; fetchOffset: string }[] }[];
  [option: string]: unknown;
}

/**
 * kafkajs decodes a whole fetch response (every partition of a broker) at
 * once, so a batch it cannot decode fails the fetch without saying whose it
 * is. When that happens, the fetch is made again one partition at a time
 * (only then: it is the consumer's last request before it stops) to find
 * the partition, and the error is given its topic, partition and the offset
 * fetched. kafkajs is pinned to an exact version; its unit test checks that
 * Broker.prototype.fetch is still there.
 */
function placeUndecodableBatches(): void {
  const require = createRequire(import.meta.url);
  const Broker = require('kafkajs/src/broker') as { prototype: { fetch(this: unknown, request: FetchRequest): Promise<unknown> } };
  const fetch = Broker.prototype.fetch;
  Broker.prototype.fetch = async function (this: unknown, request: FetchRequest) {
    try {
      return await fetch.call(this, request);
    } catch (err) {
      const failure = undecodableBatch(err);
      if (!failure || failure.place.topic !== undefined) throw err;
      const alone = request.topics.flatMap(({ topic, partitions }) => partitions.map((p) => ({ topic, p })));
      if (alone.length === 1) failure.at({ topic: alone[0]!.topic, partition: alone[0]!.p.partition, fetchOffset: alone[0]!.p.fetchOffset });
      else {
        for (const { topic, p } of alone) {
          const found = await fetch.call(this, { ...request, maxWaitTime: 0, topics: [{ topic, partitions: [p] }] }).then(
            () => undefined,
            (e: unknown) => undecodableBatch(e),
          );
          if (found) {
            failure.at({ ...found.place, topic, partition: p.partition, fetchOffset: p.fetchOffset });
            break;
          }
        }
      }
      throw err;
    }
  };
}
