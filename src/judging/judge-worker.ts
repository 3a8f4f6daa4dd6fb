/**
 * A judging thread of `ingest` (judging/threaded.ts is its other side):
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
import { CRAZE_TABLE, ENVELOPE_TABLE } from '../store/columns.js';
import type { TableSpec } from '../store/table-spec.js';
import { CrazeStore } from '../store/craze-store.js';
import { EnvelopeStore } from '../store/envelope-store.js';
import { CacheCounts } from '../pipeline/cache-observer.js';
import { CrazeStream } from '../pipeline/craze.js';
import { EnvelopeStream } from '../pipeline/envelopes.js';
import type { Stream } from '../pipeline/stream.js';
import { encodeBatch } from './encoded-batch.js';
import { unpackRecords, type JudgeReply, type JudgeRequest, type JudgeWorkerData } from './threaded-protocol.js';

const data = workerData as JudgeWorkerData;

async function open(): Promise<{ stream: Stream; table: TableSpec<Record<string, unknown>> }> {
  const clickhouse = createClickHouse(data.clickhouse);
  const sql = await stateSqlFor(clickhouse, data.clickhouse);
  const { spec } = data;
  if (spec.stream === 'envelopes') {
    return {
      stream: new EnvelopeStream(spec.topic, new EnvelopeStore(clickhouse, sql, data.format), spec.options, spec.cacheEntries, counts),
      table: ENVELOPE_TABLE as unknown as TableSpec<Record<string, unknown>>,
    };
  }
  return { stream: new CrazeStream(spec.topic, new CrazeStore(clickhouse, sql, data.format), spec.cacheEntries, counts), table: CRAZE_TABLE as unknown as TableSpec<Record<string, unknown>> };
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
  const { stream, table } = await opened;
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
    reply = { type: 'judged', id: request.id, ...encodeBatch(records, batch, table, data.format, stream.name), cache: takeCounts() };
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

