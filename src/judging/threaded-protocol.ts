/**
 * What the driver's side (threaded.ts) and a judging thread
 * (judge-worker.ts) send each other. Records cross as one transferred block
 * of their keys and values (a kafkajs record's bytes are a view into its
 * whole fetch, which a structured clone would copy whole for every record);
 * rows come back as one block of insert bytes.
 */
import type { ClickHouseSettings } from '../clickhouse/client.js';
import type { FailureKind } from '../errors/errors.js';
import type { InsertFormat } from '../store/insert-format.js';
import type { EncodedBatch } from './encoded-batch.js';
import type { EnvelopeBatchOptions } from '../pipeline/envelopes.js';
import type { SourceRecord } from '../pipeline/stream.js';

/** Which stream a thread judges, and how. */
export type JudgeSpec =
  | { readonly stream: 'envelopes'; readonly topic: string; readonly options: EnvelopeBatchOptions; readonly cacheEntries: number }
  | { readonly stream: 'craze'; readonly topic: string; readonly cacheEntries: number };

export interface JudgeWorkerData {
  readonly spec: JudgeSpec;
  readonly clickhouse: ClickHouseSettings;
  /** The format rows are encoded in (AGENTLEDGER_INSERT_FORMAT): the insert's. */
  readonly format: InsertFormat;
}

/** Records of one partition: their keys and values in `bytes`, at `bounds` (key start, key end, value start, value end per record; -1 for null). */
export interface PackedRecords {
  readonly topic: string;
  readonly partition: number;
  readonly offsets: readonly string[];
  readonly timestamps: readonly string[];
  readonly bytes: ArrayBuffer;
  readonly bounds: Int32Array;
}

export type JudgeRequest =
  | { readonly type: 'judge'; readonly id: number; readonly records: PackedRecords }
  /** A thread started late: the buffer number the others are at (every one before durable). */
  | { readonly type: 'start'; readonly number: number }
  | { readonly type: 'seal' }
  | { readonly type: 'durable'; readonly upTo: number | null }
  | { readonly type: 'reset' };

/** A thread's cache counts since its last reply. */
export interface CacheDelta {
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
  readonly entries: number;
}

export type JudgeReply =
  | ({ readonly type: 'judged'; readonly id: number; readonly cache: CacheDelta } & EncodedBatch)
  | { readonly type: 'failed'; readonly id: number; readonly kind: FailureKind; readonly message: string; readonly cache: CacheDelta };

/** Records of one partition as a request's block. */
export function packRecords(records: readonly SourceRecord[]): PackedRecords {
  let size = 0;
  for (const r of records) size += (r.key?.length ?? 0) + (r.value?.length ?? 0);
  const bytes = new ArrayBuffer(size);
  const view = Buffer.from(bytes);
  const bounds = new Int32Array(4 * records.length);
  let at = 0;
  records.forEach((r, i) => {
    for (const [j, b] of [r.key, r.value].entries()) {
      if (b === null) {
        bounds[4 * i + 2 * j] = bounds[4 * i + 2 * j + 1] = -1;
        continue;
      }
      bounds[4 * i + 2 * j] = at;
      at += b.copy(view, at);
      bounds[4 * i + 2 * j + 1] = at;
    }
  });
  const first = records[0];
  return { topic: first?.topic ?? '', partition: first?.partition ?? 0, offsets: records.map((r) => r.offset), timestamps: records.map((r) => r.timestamp), bytes, bounds };
}

/** A request's records, their keys and values views into its block (headers stay with the driver, which dead-letters). */
export function unpackRecords(p: PackedRecords): SourceRecord[] {
  const view = Buffer.from(p.bytes);
  const at = (start: number, end: number): Buffer | null => (start < 0 ? null : view.subarray(start, end));
  return p.offsets.map((offset, i) => ({
    topic: p.topic,
    partition: p.partition,
    offset,
    timestamp: p.timestamps[i]!,
    key: at(p.bounds[4 * i]!, p.bounds[4 * i + 1]!),
    value: at(p.bounds[4 * i + 2]!, p.bounds[4 * i + 3]!),
  }));
}
