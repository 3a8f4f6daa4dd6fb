/**
 * A stream judged in worker threads (AGENTLEDGER_JUDGE_THREADS > 1): the
 * driver's side. Each thread (judge-worker.ts) owns the records whose Kafka
 * key hashes to it, so one loop (keyed by its LoopID) or craze session is
 * judged by one thread, in offset order, against that thread's own chain
 * state; a batch is split by key, its parts judged at once, their rows put
 * back in offset order. Everything else of the stream (where rows go, a
 * refused record's malformed row) stays the in-process stream's.
 *
 * Guarantees, and what keeps them:
 * - A verdict is the one the in-process stream gives: per loop the same
 *   records in the same order against the same durable state. A loop whose
 *   records come under other keys (a producer bug that the key-mismatch
 *   note already flags) may be split across threads, as it would be across
 *   partitions of two `ingest` processes.
 * - seal, durable and reset reach every thread in the order the driver
 *   called them, after the batches posted before (a thread handles its
 *   messages one at a time), and the buffer numbers are every thread's own
 *   (each seals at the same calls).
 * - A batch is judged whole or not at all, as far as the driver sees: when
 *   a part fails (ClickHouse away) after other parts were judged, those
 *   parts' outcomes are kept and handed back when the driver retries the
 *   same records, never judged twice (a second judging would find them
 *   pending and drop them as redeliveries). Any other call while parts are
 *   kept is a fatal error: nothing is guessed.
 * - A record that makes ClickHouse refuse a read-back query is isolated in
 *   its part (ingest/isolate.ts), as the in-process stream's batch is.
 */
import { Worker } from 'node:worker_threads';
import type { ClickHouseSettings } from '../clickhouse/client.js';
import type { InsertFormat } from '../store/insert-format.js';
import { ContentError, FatalError, TransientError, type FailureKind } from '../errors/errors.js';
import { processIsolating, type IsolateDeps } from '../ingest/isolate.js';
import type { KafkaColumns } from '../rows/rows.js';
import { NO_CACHE_OBSERVER, type CacheObserver } from '../pipeline/cache-observer.js';
import { PendingLayers } from '../pipeline/pending-layers.js';
import type { DeadLetter, SourceRecord, Stream, StreamBatch } from '../pipeline/stream.js';
import { handlesOf } from './encoded-batch.js';
import { packRecords, type JudgeReply, type JudgeRequest, type JudgeSpec, type JudgeWorkerData } from './threaded-protocol.js';

const WORKER_URL = new URL('./judge-worker.js', import.meta.url);

/** A failure a thread reported, typed again on this side by its kind. */
function failure(kind: FailureKind, message: string): Error {
  if (kind === 'transient') return new TransientError(message);
  if (kind === 'content') return new ContentError(message);
  return new FatalError(message);
}

/** One judging thread: requests answered in order. */
class JudgeThread {
  private readonly worker: Worker;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (r: Extract<JudgeReply, { type: 'judged' }>) => void; reject: (e: Error) => void }>();
  private dead: Error | undefined;

  constructor(data: JudgeWorkerData, onCache: (reply: JudgeReply) => void) {
    // V8's own heap sizes: an 8 MB young generation brought ingest's RSS
    // with 2 threads from 674 to 495 MB but cost 16 µs of CPU per envelope
    // more (bench/e2e.sh, 200,000 envelopes), in collections: the threads
    // are for hosts with cores to spare, where CPU is what they buy.
    this.worker = new Worker(WORKER_URL, { workerData: data });
    // The process exits when the driver is done, whatever the threads do.
    this.worker.unref();
    this.worker.on('message', (reply: JudgeReply) => {
      onCache(reply);
      const w = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (reply.type === 'judged') w?.resolve(reply);
      else w?.reject(failure(reply.kind, reply.message));
    });
    const die = (err: Error): void => {
      // Its chain state is gone with it: nothing judged after could be trusted. Fatal; a restart reads back.
      this.dead ??= new FatalError(`a judging thread stopped: ${err.message}`, { cause: err });
      for (const w of this.waiting.values()) w.reject(this.dead);
      this.waiting.clear();
    };
    this.worker.on('error', die);
    this.worker.on('exit', (code) => die(new Error(`exit code ${code}`)));
  }

  judge(records: readonly SourceRecord[]): Promise<Extract<JudgeReply, { type: 'judged' }>> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    const packed = packRecords(records);
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.post({ type: 'judge', id, records: packed }, [packed.bytes]);
    });
  }

  post(request: JudgeRequest, transfer: ArrayBuffer[] = []): void {
    if (!this.dead) this.worker.postMessage(request, transfer);
  }

  stop(): Promise<number> {
    return this.worker.terminate();
  }
}

/** Which thread of `threads` judges a record: FNV-1a of its key (a record with no key: by partition). */
export function threadOf(record: SourceRecord, threads: number): number {
  const { key } = record;
  if (key === null) return record.partition % threads;
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key[i]!, 0x01000193);
  return (h >>> 0) % threads;
}

export interface ThreadedOptions {
  readonly threads: number;
  readonly spec: JudgeSpec;
  readonly clickhouse: ClickHouseSettings;
  /** The insert's format (AGENTLEDGER_INSERT_FORMAT): rows are encoded in it. */
  readonly format: InsertFormat;
  /** Hears the threads' cache counts together. */
  readonly observer?: CacheObserver;
  /** What isolating a refused record says (ingest/isolate.ts). */
  readonly isolate: IsolateDeps;
}

/** A part of a batch a thread judged: its records and outcome. */
interface Part {
  readonly first: string;
  readonly last: string;
  readonly count: number;
  readonly outcome: StreamBatch<KafkaColumns>;
}

export class ThreadedStream<Row extends KafkaColumns> implements Stream<Row> {
  readonly name: string;
  readonly topic: string;
  readonly store: Stream<Row>['store'];
  private readonly threads: (JudgeThread | undefined)[];
  /** The buffer numbers every thread's state gives (they all seal and reset at the same calls). */
  private readonly numbers = new PendingLayers<null>(() => null);
  /** Parts judged of a batch whose other parts failed, per thread: handed back when the same records come again. */
  private kept = new Map<number, Part>();
  /** Set when parts were kept across a call they do not belong to: the threads' state is not the driver's. */
  private broken: Error | undefined;
  private readonly entries: number[];
  private readonly observer: CacheObserver;

  /** `local`: the in-process stream whose store and malformed rows these are. */
  constructor(
    private readonly local: Stream<Row>,
    private readonly options: ThreadedOptions,
  ) {
    this.name = local.name;
    this.topic = local.topic;
    this.store = local.store;
    this.observer = options.observer ?? NO_CACHE_OBSERVER;
    this.entries = new Array<number>(options.threads).fill(0);
    this.threads = new Array<JudgeThread | undefined>(options.threads).fill(undefined);
  }

  /**
   * Thread `i`, started on its first part (a topic that carries nothing
   * costs no thread: loading the code takes a thread about a second of
   * CPU). It starts at the buffer number the others are at, every buffer
   * before durable, as if it had sealed with them.
   */
  private thread(i: number): JudgeThread {
    let t = this.threads[i];
    if (t === undefined) {
      t = this.threads[i] = new JudgeThread({ spec: this.options.spec, clickhouse: this.options.clickhouse, format: this.options.format }, (reply) => this.counted(i, reply));
      t.post({ type: 'start', number: this.numbers.number });
    }
    return t;
  }

  private counted(thread: number, reply: JudgeReply): void {
    const { hits, misses, evictions, entries } = reply.cache;
    if (hits > 0) this.observer.hit(hits);
    if (misses > 0) this.observer.miss(misses);
    if (evictions > 0) this.observer.evicted(evictions);
    this.entries[thread] = entries;
    this.observer.size(this.entries.reduce((a, b) => a + b, 0));
  }

  async process(records: readonly SourceRecord[]): Promise<StreamBatch<Row>> {
    if (this.broken) throw this.broken;
    const parts: SourceRecord[][] = this.threads.map(() => []);
    for (const r of records) parts[threadOf(r, this.threads.length)]!.push(r);
    const kept = this.kept;
    this.kept = new Map();
    const settled = await Promise.allSettled(
      parts.map(async (part, i): Promise<Part | undefined> => {
        if (part.length === 0) return undefined;
        const first = part[0]!.offset;
        const last = part[part.length - 1]!.offset;
        const before = kept.get(i);
        kept.delete(i);
        if (before !== undefined) {
          if (before.first === first && before.last === last && before.count === part.length) return before;
          throw this.break(`thread ${i} kept a judged part of offsets ${before.first}–${before.last}, and was handed ${first}–${last}`);
        }
        return { first, last, count: part.length, outcome: await this.judgePart(i, part) };
      }),
    );
    if (kept.size > 0) throw this.break(`threads ${[...kept.keys()].join(', ')} kept judged parts the retried batch does not hold`);
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed !== undefined) {
      settled.forEach((s, i) => {
        if (s.status === 'fulfilled' && s.value !== undefined) this.kept.set(i, s.value);
      });
      throw failed.reason;
    }
    const outcomes = settled.flatMap((s) => (s.status === 'fulfilled' && s.value !== undefined ? [s.value.outcome] : []));
    return merge(outcomes) as StreamBatch<Row>;
  }

  /** A part through its thread, a record ClickHouse refuses a query for isolated as in one thread. */
  private judgePart(i: number, part: readonly SourceRecord[]): Promise<StreamBatch<KafkaColumns>> {
    const thread = this.thread(i);
    let judgedSome = false;
    const partStream: Pick<Stream, 'topic' | 'process' | 'quarantine'> = {
      topic: this.topic,
      quarantine: (record: SourceRecord, reason: string) => this.local.quarantine(record, reason),
      process: async (records: readonly SourceRecord[]): Promise<StreamBatch<KafkaColumns>> => {
        try {
          const reply = await thread.judge(records);
          judgedSome = true;
          return handlesOf(records, reply, this.name);
        } catch (err) {
          // Halves judged before this one moved the thread's state: its part cannot be judged again whole.
          if (judgedSome && !(err instanceof ContentError)) throw this.break(`a judging thread failed after judging part of an isolated batch: ${(err as Error).message}`);
          throw err;
        }
      },
    };
    return processIsolating(partStream, part, this.options.isolate);
  }

  private break(message: string): Error {
    this.broken ??= new FatalError(`judging threads out of step with the driver: ${message}`);
    return this.broken;
  }

  quarantine(record: SourceRecord, reason: string): { row: Row; deadLetter: DeadLetter } {
    return this.local.quarantine(record, reason);
  }

  seal(): number {
    // Parts kept for a retry belong to the buffer being judged: sealing now would hand them to the next one.
    if (this.kept.size > 0) this.break('a buffer was sealed while judged parts waited for their batch');
    for (const t of this.threads) t?.post({ type: 'seal' });
    return this.numbers.seal();
  }

  durable(upTo?: number): void {
    for (const t of this.threads) t?.post({ type: 'durable', upTo: upTo ?? null });
  }

  reset(): void {
    // What was kept was judged for the buffer a reset drops.
    this.kept = new Map();
    for (const t of this.threads) t?.post({ type: 'reset' });
    this.numbers.reset();
  }

  /** Stops the threads. */
  async close(): Promise<void> {
    await Promise.all(this.threads.flatMap((t) => (t === undefined ? [] : [t.stop()])));
  }
}

/** The parts' outcomes as one batch: rows and dead letters back in offset order (each part is in order). */
function merge(outcomes: readonly StreamBatch<KafkaColumns>[]): StreamBatch<KafkaColumns> {
  if (outcomes.length === 1) return outcomes[0]!;
  const verdicts = new Map<string, number>();
  for (const o of outcomes) for (const [v, n] of o.verdicts) verdicts.set(v, (verdicts.get(v) ?? 0) + n);
  return {
    rows: mergeBy(outcomes.map((o) => o.rows), (r) => r.kafka_offset),
    deadLetters: mergeBy(outcomes.map((o) => o.deadLetters), (d) => d.record.offset),
    verdicts,
  };
}

/** Lists each in offset order, merged into one in offset order. */
function mergeBy<T>(lists: readonly (readonly T[])[], offsetOf: (t: T) => string): T[] {
  const out: T[] = [];
  const at = lists.map(() => 0);
  for (;;) {
    let best = -1;
    let bestOffset = '';
    lists.forEach((list, i) => {
      const t = list[at[i]!];
      if (t === undefined) return;
      const o = offsetOf(t);
      if (best < 0 || offsetBefore(o, bestOffset)) {
        best = i;
        bestOffset = o;
      }
    });
    if (best < 0) return out;
    out.push(lists[best]![at[best]!++]!);
  }
}

/** Whether decimal offset `a` is below `b` (no BigInt per comparison: shorter is smaller, then by text). */
const offsetBefore = (a: string, b: string): boolean => a.length < b.length || (a.length === b.length && a < b);
