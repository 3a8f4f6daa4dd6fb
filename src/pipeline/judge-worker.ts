/**
 * A judging thread of `ingest` (pipeline/threaded.ts is its other side):
 * one stream's decode → verify → account → rows for the records it is
 * handed, against a chain state of its own (the loops or sessions whose
 * Kafka key hashes to it), reading heads and versions from ClickHouse
 * through a client of its own. Rows go back as one block of insert bytes
 * per batch, transferred, not cloned (rows/encoded.ts).
 *
 * Messages are handled one at a time, in the order they were posted: a
 * seal, durable or reset posted after a batch applies after that batch,
 * exactly as the driver's calls would in one thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createClickHouse } from '../clickhouse/client.js';
import { stateSqlFor } from '../clickhouse/replicas.js';
import { failureMessage, kindOf } from '../errors/errors.js';
import { CRAZE_COLUMNS, ENVELOPE_COLUMNS } from '../store/columns.js';
import { CrazeStore } from '../store/craze-store.js';
import { EnvelopeStore, HEAD_VERDICTS } from '../store/envelope-store.js';
import { tsvEncodedRows, type Columns } from '../store/tsv.js';
import { CacheCounts } from './cache-observer.js';
import { CrazeStream } from './craze.js';
import { EnvelopeStream } from './envelopes.js';
import type { SourceRecord, Stream } from './stream.js';
import { carriedFields, unpackRecords, type JudgeReply, type JudgeRequest, type JudgeWorkerData } from './threaded-protocol.js';

const data = workerData as JudgeWorkerData;

async function open(): Promise<{ stream: Stream; columns: Columns<Record<string, unknown>> }> {
  const clickhouse = createClickHouse(data.clickhouse);
  const sql = await stateSqlFor(clickhouse, data.clickhouse);
  const { spec } = data;
  if (spec.stream === 'envelopes') {
    return {
      stream: new EnvelopeStream(spec.topic, new EnvelopeStore(clickhouse, sql), spec.options, spec.cacheEntries, counts),
      columns: ENVELOPE_COLUMNS as unknown as Columns<Record<string, unknown>>,
    };
  }
  return { stream: new CrazeStream(spec.topic, new CrazeStore(clickhouse, sql), spec.cacheEntries, counts), columns: CRAZE_COLUMNS as unknown as Columns<Record<string, unknown>> };
}

/** The cache's hits, misses and evictions since the last reply, and its size. */
const counts = new CacheCounts();
const opened = open();
const port = parentPort!;
let queue: Promise<unknown> = Promise.resolve();

port.on('message', (request: JudgeRequest) => {
  queue = queue.then(() => handle(request));
});

async function handle(request: JudgeRequest): Promise<void> {
  const { stream, columns } = await opened;
  switch (request.type) {
    case 'start':
      // Sealed as often as the others (buffer numbers are every thread's
      // same), each buffer before durable: nothing of them is this thread's.
      for (let n = 0; n < request.number; n++) stream.seal();
      if (request.number > 0) stream.durable(request.number - 1);
      return;
    case 'seal':
      stream.seal();
      return;
    case 'durable':
      stream.durable(request.upTo ?? undefined);
      return;
    case 'reset':
      stream.reset();
      return;
    case 'judge':
      break;
  }
  const records = unpackRecords(request.records);
  let reply: JudgeReply;
  try {
    const batch = await stream.process(records);
    reply = judged(request.id, records, batch.rows as unknown as Record<string, unknown>[], batch.deadLetters, batch.verdicts, columns, stream.name);
  } catch (err) {
    reply = { type: 'failed', id: request.id, kind: kindOf(err), message: failureMessage(err), cache: takeCounts() };
  }
  port.postMessage(reply, reply.type === 'judged' ? [reply.block] : []);
}

function takeCounts(): JudgeReply['cache'] {
  const cache = { hits: counts.hits, misses: counts.misses, evictions: counts.evictions, entries: counts.entries };
  counts.hits = counts.misses = counts.evictions = 0;
  return cache;
}

function judged(
  id: number,
  records: readonly SourceRecord[],
  rows: readonly Record<string, unknown>[],
  deadLetters: readonly { record: SourceRecord; reason: string }[],
  verdicts: ReadonlyMap<string, number>,
  columns: Columns<Record<string, unknown>>,
  streamName: string,
): JudgeReply {
  const index = new Map<string, number>();
  records.forEach((r, i) => index.set(r.offset, i));
  const record = new Int32Array(rows.length);
  rows.forEach((row, i) => (record[i] = index.get(row.kafka_offset as string) ?? -1));
  const { block, ends } = tsvEncodedRows(rows, columns);
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
    type: 'judged',
    id,
    block: block.buffer as ArrayBuffer,
    ends,
    record,
    carried,
    heads,
    deadLetters: deadLetters.map((d) => [index.get(d.record.offset) ?? -1, d.reason]),
    verdicts: [...verdicts],
    cache: takeCounts(),
  };
}
