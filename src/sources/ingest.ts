/**
 * The consumer loop of `agentledger ingest`: Kafka -> decode -> verify ->
 * ClickHouse, exactly once in effect.
 *
 * The ordering that keeps the guarantee:
 * 1. On the first batch of a partition after start or a rebalance, its durable
 *    progress is read back from ClickHouse; records below it were stored
 *    before (a crash between insert and offset commit) and are skipped.
 * 2. A batch's rows are buffered; its offsets are resolved (so kafkajs fetches
 *    on) but NOT committed.
 * 3. A flush sends the dead letters (acks from all replicas), then writes all
 *    buffered rows with ONE insert per table, then commits the offsets after
 *    them. While it is in flight, the next batches are decoded, verified and
 *    buffered (a buffer is sealed when its flush starts; at most one flush is
 *    in flight, and a failed one is retried before any later one starts), so
 *    offsets are still committed in order, each after its rows. A crash
 *    before the insert loses only uncommitted, unstored work, read again on
 *    restart; a crash after it is caught by step 1. The insert
 *    is one part: one ingested_at for the whole flush (the partition key), a
 *    cap on its bytes (current ClickHouse splits inserts above ~256 MiB).
 * 4. While ClickHouse fails, consumption pauses and the flush is retried with
 *    heartbeats on a timer; nothing is dropped. An insert whose answer was
 *    lost is first made to finish (its query_id is looked up and killed), and
 *    only then is it checked whether it landed.
 * 5. A rebalance drops the buffer and every cache: the rows were not durable,
 *    their offsets not committed, and the next owner of each partition reads
 *    state back from ClickHouse.
 * 6. Fencing: right before every insert, the member proves it still owns its
 *    partitions (an offset commit of what is already durable, which the group
 *    coordinator refuses from a member it expelled). A member that fails it
 *    drops its buffer and stops flushing until it has joined again. An insert
 *    that slips through anyway (a pause between the check and the insert) is
 *    harmless: verdicts are a pure function of durable state and the records,
 *    so its rows are the owner's rows and collapse with them.
 */
import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Consumer, EachBatchPayload, Kafka, Producer } from 'kafkajs';
import { toClickHouseDateTime } from '../decode/time.js';
import { asError, causes, failureMessage, statedKind, within, type FailureKind } from '../observability/errors.js';
import { clickhouseFailure } from '../sink/clickhouse/errors.js';
import { settleQuery } from '../sink/clickhouse/sql.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { KafkaColumns } from '../rows/rows.js';
import { KEY_MISMATCH } from '../pipeline/envelopes.js';
import type { DeadLetter, SourceRecord, Stream, StreamBatch } from '../pipeline/stream.js';
import { undecodableBatch } from './codecs.js';
import { createReliableProducer, ensureTopics, kafkaFailure, TOPIC_CONFIG } from './kafka.js';

export interface IngestDeps {
  readonly kafka: Kafka;
  readonly clickhouse: ClickHouseClient;
  readonly config: Config;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** Told each stream's rows once they are durable (after the derived writes, before the commit); must not block. */
  readonly onDurable?: (rows: readonly KafkaColumns[]) => void;
}

interface Position {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  /**
   * Commit metadata: the Unix seconds of the flush that made `offset` durable
   * (its ingested_at). A later reader knows every row past the commit was
   * inserted after it, and reads only recent parts.
   */
  readonly metadata?: string;
}

/**
 * How far apart two members' clocks (and a flush's stamp and its commit) may
 * be: read-backs look at rows inserted since (last commit's stamp − this).
 */
const CLOCK_SLACK_SECONDS = 15 * 60;

const sinceOf = (metadata: string | null | undefined): number => {
  const stamp = Number(metadata);
  return metadata && Number.isSafeInteger(stamp) && stamp > CLOCK_SLACK_SECONDS ? stamp - CLOCK_SLACK_SECONDS : 0;
};

interface Pending {
  /** Rows per stream, each written by one insert into its table. */
  rows: Map<Stream, KafkaColumns[]>;
  deadLetters: DeadLetter[];
  /** Next offset to commit per "topic:partition", once the rows are durable. */
  positions: Map<string, Position>;
  since: number;
  /** Rows and dead letters buffered, and their estimated size in bytes. */
  count: number;
  bytes: number;
  /** The ingested_at of every row of this buffer (and its Unix seconds), set at its first flush attempt and kept by retries. */
  stamp: string | undefined;
  stampSeconds: number;
  /** Streams whose rows are durable (inserted, or found landed); their derived writes may still be due. */
  landed: Set<Stream>;
  /** The query_id of the last insert tried per stream (a retry settles it, then checks whether it landed). */
  tried: Map<Stream, string>;
  /**
   * The records behind the rows, per stream: what a row the server refuses
   * is dead-lettered as. Only kept (references, no copy), searched only then.
   */
  records: Map<Stream, SourceRecord[]>;
  /** Streams whose state went past rows the server refused: reset once this buffer is durable. */
  rebuild: Set<Stream>;
  /** Per "topic:partition", the first offset of this buffer (where a rewind goes back to). */
  starts: Map<string, Position>;
  /** Per stream, the number of this buffer in the stream's state, once sealed. */
  sealed: Map<Stream, number>;
  /** Set when this member dropped the buffer (a rebalance, a lost ownership): a flush of it ends without committing. */
  dropped: boolean;
}

/** A sealed buffer's flush. */
interface Flight {
  readonly p: Pending;
  /** The flush running, or undefined once it failed (the next try starts it again). */
  done: Promise<void> | undefined;
  /** Running, over (its rows durable), or failed (to be tried again). */
  state: 'running' | 'done' | 'failed';
}

const emptyPending = (): Pending => ({
  rows: new Map(),
  deadLetters: [],
  positions: new Map(),
  since: 0,
  count: 0,
  bytes: 0,
  stamp: undefined,
  stampSeconds: 0,
  landed: new Set(),
  tried: new Map(),
  records: new Map(),
  rebuild: new Set(),
  starts: new Map(),
  sealed: new Map(),
  dropped: false,
});
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The insert bytes a batch of records adds, over-estimated from the records
 * themselves (cheaper than measuring every row): a row holds its record's
 * text at most twice as long once JSON-escaped, plus columns and state.
 */
function insertBytes(records: readonly SourceRecord[]): number {
  let n = 0;
  for (const r of records) n += 2 * (r.value?.length ?? 0) + 1024;
  return n;
}

/** kafkajs's errors for a member the group no longer counts as the owner of its partitions. */
const MEMBERSHIP_ERRORS = new Set(['UNKNOWN_MEMBER_ID', 'ILLEGAL_GENERATION', 'REBALANCE_IN_PROGRESS', 'FENCED_INSTANCE_ID']);

/**
 * The group-membership error behind `err`, if that is what it is: kafkajs's
 * retrier wraps the coordinator's answer (KafkaJSNonRetriableError, the
 * answer as `cause`), and its runner recognises only the bare one.
 */
export function membershipError(err: unknown): Error | undefined {
  for (const e of causes(err)) {
    if (MEMBERSHIP_ERRORS.has(String((e as { type?: unknown }).type))) return e as Error;
  }
  return undefined;
}

/**
 * Whether a failure is worth retrying (transient), was caused by the data
 * sent (content), or neither (fatal): what untilDone does with it. An
 * AgentledgerError says its kind (a TimeoutError of `within` is transient);
 * Kafka's errors follow kafkajs's `retriable`, except a refused login or
 * right, which no retry changes (kafkaFailure); ClickHouse's are classified
 * by code (clickhouseFailure).
 */
export function failureKind(err: unknown): FailureKind {
  return statedKind(err) ?? kafkaFailure(err) ?? clickhouseFailure(err);
}

/** Two outcomes of consecutive records of one partition, as one. */
function concatBatches<Row>(a: StreamBatch<Row>, b: StreamBatch<Row>): StreamBatch<Row> {
  const verdicts = new Map(a.verdicts);
  for (const [v, n] of b.verdicts) verdicts.set(v, (verdicts.get(v) ?? 0) + n);
  return { rows: [...a.rows, ...b.rows], deadLetters: [...a.deadLetters, ...b.deadLetters], verdicts };
}

const recordKey = (partition: number, offset: string): string => `${partition}:${offset}`;

/** Where a record is, for logs. */
const where = (r: SourceRecord): Record<string, unknown> => ({ topic: r.topic, partition: r.partition, offset: r.offset });

export class Ingestor {
  private readonly consumer: Consumer;
  private readonly producer: Producer;
  private readonly byTopic: Map<string, Stream>;
  /** Next offset to process per "topic:partition"; absent until read back from ClickHouse. */
  private readonly progress = new Map<string, bigint>();
  /** Per "topic:partition", the offset after the last record known durable (read back, or flushed). */
  private readonly durable = new Map<string, Position>();
  /** The group's committed offsets and their metadata per topic, read once per generation. */
  private readonly committed = new Map<string, Promise<Map<number, { offset: string; metadata: string | null }>>>();
  /** Set when this member failed to prove it owns its partitions: no timer flush until it joins again. */
  private fenced = false;
  private pending = emptyPending();
  /** The sealed buffer whose flush is in flight, or failed and due again. */
  private inflight: Flight | undefined;
  private lock: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  /** eachBatch calls running now. */
  private inFlight = 0;
  /** The last failure a batch retried (said by the stall watchdog). */
  lastFailure: string | undefined;
  /** Between REBALANCING and GROUP_JOIN: no flush from the timer (it could race the next owner). */
  private rebalancing = false;
  lastActivity = Date.now();
  /**
   * When rows were last made durable and committed, or the member last found
   * nothing to do (a new generation, an empty fetch): what the stall
   * watchdog measures.
   */
  lastProgress = Date.now();
  /** Counts the generations this member joined: work queued in one is dropped in the next. */
  private generation = 0;
  /** The partitions per topic this member was given at its last join. */
  private assignment: Readonly<Record<string, readonly number[]>> = {};
  /** Whether this member owns its partitions: joined, and no rebalance under way. */
  get settled(): boolean {
    return this.joined && !this.rebalancing;
  }
  private joined = false;
  /** Records processed per stream since start (progress lines, not guarantees). */
  readonly processed = new Map<string, number>();
  /** Set when kafkajs gives up (a non-retriable error): the process should exit non-zero and be restarted. */
  onFatal: (err: Error) => void = () => undefined;

  constructor(
    private readonly deps: IngestDeps,
    private readonly streams: readonly Stream[],
  ) {
    const { kafka, config } = deps;
    this.byTopic = new Map(streams.map((s) => [s.topic, s]));
    this.consumer = kafka.consumer({
      groupId: config.kafka.groupId,
      sessionTimeout: config.kafka.sessionTimeoutMs,
      heartbeatInterval: Math.max(1000, Math.floor(config.kafka.sessionTimeoutMs / 10)),
      // One fetch is judged as one batch: its size bounds the records in memory at once.
      maxBytesPerPartition: config.kafka.fetchPartitionBytes,
      maxBytes: 8 * config.kafka.fetchPartitionBytes,
    });
    this.producer = createReliableProducer(kafka);
  }

  async start(): Promise<void> {
    const { config, log } = this.deps;
    const topics = this.streams.map((s) => s.topic);
    await ensureTopics(this.deps.kafka, [...topics, config.kafka.topics.deadLetter].map((topic) => ({ topic, configEntries: TOPIC_CONFIG })));
    await this.producer.connect();
    await this.consumer.connect();
    this.consumer.on(this.consumer.events.REBALANCING, () => {
      this.rebalancing = true;
    });
    this.consumer.on(this.consumer.events.GROUP_JOIN, (e) => {
      // Step 5: whatever was buffered belongs to the previous generation.
      this.rebalancing = false;
      this.joined = true;
      // Idleness is measured from owning partitions, not from waiting for them
      // (a killed member holds its partitions until its session times out).
      this.lastActivity = Date.now();
      this.lastProgress = Date.now();
      this.generation++;
      this.assignment = e.payload.memberAssignment;
      this.dropState();
      this.fenced = false;
      log.info('joined consumer group', { memberId: e.payload.memberId, assignment: e.payload.memberAssignment });
    });
    // A fetch whose records were all filtered out by kafkajs (a transaction's
    // control records, an aborted transaction's records) never reaches
    // eachBatch, yet its offsets must be committed too, or the group never
    // reaches the end of the partition (idle exit, lag, the stall watchdog).
    this.consumer.on(this.consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      if (payload.batchSize !== 0 || this.stopping || !this.settled) return;
      const generation = this.generation;
      void this.withLock(() => (generation === this.generation ? this.passFiltered(payload.topic, payload.partition, payload.lastOffset) : Promise.resolve())).catch(
        (err: unknown) => this.deps.log.warn('could not record the offsets of filtered records; the next batch records them', { topic: payload.topic, partition: payload.partition, error: failureMessage(err) }),
      );
    });
    this.consumer.on(this.consumer.events.CRASH, (e) => {
      // A batch kafkajs cannot decode is read again by every retry and every
      // restart: counted, and fatal with where it is (never skipped: its
      // records would be lost without a trace).
      const undecodable = undecodableBatch(e.payload.error);
      if (undecodable) {
        const { topic, partition } = undecodable.place;
        this.deps.metrics.undecodableBatches.inc({ topic: topic ?? 'unknown', partition: partition === undefined ? 'unknown' : String(partition) });
      }
      if (!e.payload.restart) this.onFatal(undecodable ?? e.payload.error);
      else log.warn('consumer restarting after an error', { error: e.payload.error.message });
    });
    await this.consumer.subscribe({ topics, fromBeginning: true });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: (payload) => this.eachBatch(payload),
    });
    const tick = Math.max(50, Math.floor(config.batch.maxWaitMs / 2));
    this.timer = setInterval(() => {
      if (this.inFlight === 0 && !this.stopping && !this.fenced) {
        // The next batch retries a failed timer flush; meanwhile it is counted and said.
        void this.flushIfDue(false, true).catch((err: unknown) => {
          this.deps.metrics.insertFailures.inc();
          if (!membershipError(err) && failureKind(err) !== 'transient') {
            this.deps.log.error('timer flush failed with a failure that retrying cannot fix', { buffered: this.buffered, error: failureMessage(err) });
            this.onFatal(asError(err));
            return;
          }
          this.deps.log.warn('timer flush failed; the buffer is kept and retried', { buffered: this.buffered, error: failureMessage(err) });
        });
      }
    }, tick);
  }

  /** Forgets the buffer and everything read back: it belongs to a generation this member no longer owns. */
  private dropState(): void {
    this.pending.dropped = true;
    this.pending = emptyPending();
    if (this.inflight) this.inflight.p.dropped = true;
    this.inflight = undefined;
    this.progress.clear();
    this.durable.clear();
    this.committed.clear();
    for (const stream of this.streams) stream.reset();
  }

  private withLock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private async eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
    if (this.stopping || !isRunning() || isStale() || batch.messages.length === 0) return;
    this.inFlight++;
    try {
      this.lastActivity = Date.now();
      // Step 4: ClickHouse reads (progress, heads) and the flush are retried
      // here, with heartbeats, until they succeed; nothing is skipped.
      const at = { topic: batch.topic, partition: batch.partition, firstOffset: batch.firstOffset(), lastOffset: batch.lastOffset() };
      let stale = false;
      await this.untilDone(payload, at, () =>
        this.withLock(async () => {
          // A rewind (settleInflight) sought this partition back while the batch waited for the lock.
          if (isStale()) stale = true;
          else await this.processBatch(batch);
        }),
      );
      if (stale) return;
      // Step 2: fetch on, commit later.
      resolveOffset(batch.lastOffset());
      await this.untilDone(payload, at, () => this.flushIfDue(false));
      await within(heartbeat(), this.deps.config.kafka.sessionTimeoutMs, 'heartbeat');
    } finally {
      this.inFlight--;
    }
  }

  private async processBatch(batch: EachBatchPayload['batch']): Promise<void> {
    const { topic, partition } = batch;
    const stream = this.byTopic.get(topic);
    if (!stream) throw new Error(`no stream for topic ${topic}`);
    const tp = `${topic}:${partition}`;
    const from = this.progress.get(tp) ?? (await this.readBack(stream, topic, partition));
    if (!this.pending.starts.has(tp)) this.pending.starts.set(tp, { topic, partition, offset: from.toString() });
    const records: SourceRecord[] = batch.messages
      .filter((m) => BigInt(m.offset) >= from)
      .map((m) => ({ topic, partition, offset: m.offset, timestamp: m.timestamp, key: m.key, value: m.value, headers: m.headers }));
    if (records.length > 0) {
      const outcome = await this.processIsolating(stream, records);
      const kept = this.pending.records.get(stream);
      if (kept) for (const r of records) kept.push(r);
      else this.pending.records.set(stream, [...records]);
      for (const [verdict, n] of outcome.verdicts) {
        // Not a verdict: stored envelopes whose Kafka key is not their LoopID, also counted by their verdict.
        if (verdict === KEY_MISMATCH) this.deps.metrics.keyMismatches.inc({ topic }, n);
        else this.deps.metrics.records.inc({ stream: stream.name, verdict }, n);
      }
      this.processed.set(stream.name, (this.processed.get(stream.name) ?? 0) + records.length);
      let rows = this.pending.rows.get(stream);
      if (!rows) this.pending.rows.set(stream, (rows = []));
      for (const row of outcome.rows) rows.push(row);
      this.pending.bytes += insertBytes(records);
      this.pending.count += outcome.rows.length + outcome.deadLetters.length;
      this.pending.deadLetters.push(...outcome.deadLetters);
    }
    const after = BigInt(batch.lastOffset()) + 1n;
    if (this.pending.positions.size === 0) this.pending.since = Date.now();
    this.pending.positions.set(tp, { topic, partition, offset: after.toString() });
    this.progress.set(tp, after);
    this.deps.metrics.lag.set({ topic, partition: String(partition) }, Number(BigInt(batch.highWatermark) - after));
  }

  /**
   * Records in the buffer's positions that a partition's records up to
   * `lastOffset` were all filtered out (no row, nothing to judge), so the
   * next commit moves past them. Never moves a position back.
   */
  private async passFiltered(topic: string, partition: number, lastOffset: string): Promise<void> {
    const stream = this.byTopic.get(topic);
    if (!stream) return;
    const tp = `${topic}:${partition}`;
    const from = this.progress.get(tp) ?? (await this.readBack(stream, topic, partition));
    const after = BigInt(lastOffset) + 1n;
    if (after <= from) return;
    if (!this.pending.starts.has(tp)) this.pending.starts.set(tp, { topic, partition, offset: from.toString() });
    if (this.pending.positions.size === 0) this.pending.since = Date.now();
    this.pending.positions.set(tp, { topic, partition, offset: after.toString() });
    this.progress.set(tp, after);
  }

  /**
   * Step 1: where a partition resumes, read back on its first batch of a
   * generation. The last commit dates the rows it does not cover, so only
   * recent parts are read; its offset is durable already (committed after
   * the insert), and the stored rows say how far past it they reach.
   */
  private async readBack(stream: Stream, topic: string, partition: number): Promise<bigint> {
    const tp = `${topic}:${partition}`;
    const commit = (await this.committedOffsets(topic)).get(partition);
    const since = sinceOf(commit?.metadata);
    const stored = await stream.progress(partition, since);
    const committed = commit && Number(commit.offset) >= 0 ? BigInt(commit.offset) : 0n;
    // Rows past the commit: their writer may have died between its insert
    // and its derived writes. Made again now, before any head is read back
    // (heads are read from the derived table alone); all of them when the
    // derived table lost every row of the partition.
    if (await stream.derivedLost(partition)) {
      this.deps.log.warn('the derived rows of this partition are all gone; writing them again from its stored rows', { stream: stream.name, topic, partition });
      await stream.rederive(partition, 0n, 0);
    } else if (stored > committed) await stream.rederive(partition, committed, since);
    const next = stored > committed ? stored : committed;
    this.progress.set(tp, next);
    this.durable.set(tp, { topic, partition, offset: next.toString(), ...(commit?.metadata ? { metadata: commit.metadata } : {}) });
    return next;
  }

  /**
   * stream.process(), and when ClickHouse refuses a read-back query built
   * from the records' content, the same on halves, down to the records that
   * cause it: each becomes a malformed row and a dead letter, the others are
   * judged as usual and in order (a half that succeeds has moved the
   * stream's pending state exactly as one call would have).
   */
  private async processIsolating(stream: Stream, records: readonly SourceRecord[]): Promise<StreamBatch<KafkaColumns>> {
    try {
      return await stream.process(records);
    } catch (err) {
      if (failureKind(err) !== 'content') throw err;
      if (records.length === 1) {
        const reason = `refused by ClickHouse: ${failureMessage(err)}`;
        const { row, deadLetter } = stream.quarantine(records[0]!, reason);
        this.deps.metrics.poisonRecords.inc({ topic: stream.topic });
        this.deps.log.warn('a record made ClickHouse refuse a query; it is dead-lettered', { ...where(records[0]!), reason });
        return { rows: [row], deadLetters: [deadLetter], verdicts: new Map([['malformed', 1]]) };
      }
      const half = records.length >>> 1;
      const first = await this.processIsolating(stream, records.slice(0, half));
      return concatBatches(first, await this.processIsolating(stream, records.slice(half)));
    }
  }

  /** The group's committed offsets of a topic, with their metadata: read once per generation. */
  private committedOffsets(topic: string): Promise<Map<number, { offset: string; metadata: string | null }>> {
    let found = this.committed.get(topic);
    if (!found) {
      found = (async () => {
        const admin = this.deps.kafka.admin();
        await admin.connect();
        try {
          const [offsets] = await admin.fetchOffsets({ groupId: this.deps.config.kafka.groupId, topics: [topic] });
          return new Map((offsets?.partitions ?? []).map((p) => [p.partition, { offset: p.offset, metadata: p.metadata }]));
        } finally {
          await admin.disconnect();
        }
      })();
      // A failed read is retried by the next batch, not cached.
      found.catch(() => this.committed.delete(topic));
      this.committed.set(topic, found);
    }
    return found;
  }

  /**
   * Runs `work` until it succeeds, retrying transient failures with backoff.
   * The group is kept informed with heartbeats on a timer, during the work
   * and between tries, so a long read-back or outage does not get the member
   * expelled; a heartbeat that fails while waiting (the broker restarting) is
   * one more transient failure, met by the next try. The batch is abandoned
   * when this member lost its partitions (step 5), when kafkajs stopped the
   * runner that gave it (it restarts with a new generation), or on a failure
   * that retrying cannot fix (reported through onFatal).
   *
   * Backpressure is the handler itself: kafkajs fetches a partition's next
   * batch only once eachBatch returns. Consumption is never paused through
   * kafkajs here: a pause outlives the batch that set it, and one left behind
   * by a failure on the way out stalled ingest for good after a broker
   * restart (member alive, heartbeats answered, every partition paused).
   */
  private async untilDone(
    { heartbeat, isRunning }: Pick<EachBatchPayload, 'heartbeat' | 'isRunning'>,
    at: Record<string, unknown>,
    work: () => Promise<void>,
  ): Promise<void> {
    const { log, metrics, config } = this.deps;
    const beat = Math.max(500, Math.floor(config.kafka.sessionTimeoutMs / 10));
    let failures = 0;
    try {
      for (let attempt = 0; ; attempt++) {
        let failure: unknown;
        try {
          await this.whileBeating(heartbeat, beat, work);
          if (failures > 0) log.info('ClickHouse and Kafka answer again; ingest goes on', { ...at, afterFailures: failures });
          return;
        } catch (err) {
          failure = err;
        }
        for (;;) {
          this.abandonIfLost(failure, isRunning);
          failures++;
          metrics.insertFailures.inc();
          this.lastFailure = failureMessage(failure);
          const kind = failureKind(failure);
          if (kind !== 'transient') {
            const error = asError(failure);
            log.error(kind === 'content' ? 'ClickHouse refused data that could not be traced to a record' : 'a failure that retrying cannot fix', {
              ...at,
              error: failureMessage(error),
            });
            this.onFatal(error);
            throw error;
          }
          metrics.paused.set(1);
          const wait = Math.min(5_000, 250 * 2 ** Math.min(attempt, 5));
          log.warn('ClickHouse or Kafka failed; the batch waits and is retried', { ...at, attempt: attempt + 1, inMs: wait, error: failureMessage(failure) });
          try {
            await this.whileBeating(heartbeat, beat, () => sleep(wait));
            break;
          } catch (err) {
            // A heartbeat failed while waiting: judged like a failed try.
            failure = err;
            attempt++;
          }
        }
      }
    } finally {
      if (failures > 0) metrics.paused.set(0);
    }
  }

  /** Throws what ends a batch rather than retrying it: a stop, a lost membership, a runner kafkajs stopped. */
  private abandonIfLost(failure: unknown, isRunning: () => boolean): void {
    if (this.stopping) throw failure;
    const lost = membershipError(failure);
    if (lost) throw lost;
    if (!isRunning()) throw new Error(`the consumer runner stopped (kafkajs restarts it); the batch is abandoned: ${failureMessage(failure)}`, { cause: failure });
  }

  /** Runs `work` with a heartbeat every `every` ms; a failed heartbeat fails it (once the work is over). */
  private async whileBeating(heartbeat: () => Promise<void>, every: number, work: () => Promise<void>): Promise<void> {
    let failure: Error | undefined;
    const timer = setInterval(() => {
      heartbeat().catch((err: unknown) => {
        failure ??= asError(err);
        this.fenced = true;
      });
    }, every);
    try {
      await work();
    } finally {
      clearInterval(timer);
    }
    if (failure !== undefined) throw failure;
    await within(heartbeat(), this.deps.config.kafka.sessionTimeoutMs, 'heartbeat');
  }

  /**
   * Flushes when the buffer is full or old enough, or always when `force`d (at
   * shutdown). The timer calls it without retrying: a failure leaves the buffer
   * for the next batch, which retries.
   */
  async flushIfDue(force: boolean, fromTimer = false): Promise<void> {
    const { config } = this.deps;
    await this.withLock(async () => {
      if (fromTimer && (this.rebalancing || this.fenced)) return;
      // Every buffered row has its partition's position recorded, so an empty
      // positions map means an empty buffer.
      const p = this.pending;
      const full = p.count >= config.batch.maxRows || p.bytes >= config.batch.maxBytes;
      const due = p.positions.size > 0 && (force || full || Date.now() - p.since >= config.batch.maxWaitMs);
      // A flush in flight finishes on its own. It is waited for before the
      // next one starts (offsets are committed in order), at a stop, and to
      // try it again once it failed (before any later buffer is written).
      const flight = this.inflight;
      if (flight !== undefined && (due || force || flight.state !== 'running')) await this.settleInflight();
      // A rewind (settleInflight) may have dropped the buffer.
      if (!due || this.pending !== p) return;
      // Sealed: what the streams judge from now on belongs to the next buffer.
      for (const stream of this.streams) p.sealed.set(stream, stream.seal());
      this.pending = emptyPending();
      const started: Flight = { p, done: this.flush(p), state: 'running' };
      // Settled by settleInflight, here or at a later flushIfDue (a batch, the timer, stop).
      // One that succeeds with nothing to read back is over by itself.
      started.done?.then(
        () => {
          started.state = 'done';
          if (this.inflight === started && p.rebuild.size === 0) this.inflight = undefined;
        },
        () => (started.state = 'failed'),
      );
      this.inflight = started;
      if (force || !config.batch.overlap) await this.settleInflight();
    });
  }

  /**
   * Waits for the flush in flight; a failed one is tried again, awaited, and
   * its failure thrown (the caller's retry loop comes back here). Once the
   * buffer is durable, a stream whose state went past rows the server refused
   * is read back: the buffer judged meanwhile on that state is dropped and
   * its partitions rewound, to be judged again. Runs under the lock.
   */
  private async settleInflight(): Promise<void> {
    const flight = this.inflight;
    if (flight === undefined) return;
    if (flight.done === undefined) {
      flight.state = 'running';
      flight.done = this.flush(flight.p);
    }
    try {
      await flight.done;
    } catch (err) {
      flight.done = undefined;
      flight.state = 'failed';
      throw err;
    }
    flight.state = 'done';
    if (this.inflight === flight) this.inflight = undefined;
    if (flight.p.dropped || flight.p.rebuild.size === 0) return;
    const next = this.pending;
    if (next.starts.size > 0) {
      next.dropped = true;
      this.pending = emptyPending();
      for (const [tp, start] of next.starts) {
        this.progress.set(tp, BigInt(start.offset));
        this.consumer.seek({ topic: start.topic, partition: start.partition, offset: start.offset });
      }
      this.deps.log.info('read back after rows the server refused: the batches judged meanwhile are judged again', { partitions: [...next.starts.keys()] });
      for (const stream of this.streams) stream.reset();
    } else {
      for (const stream of flight.p.rebuild) stream.reset();
    }
    flight.p.rebuild.clear();
  }

  /**
   * Step 6: proves this member still owns the partitions it is about to
   * write, by committing again the offsets already durable (the coordinator
   * refuses a commit from an expelled member or an old generation). On
   * refusal the buffer is dropped: another member owns those records now.
   */
  private async fence(p: Pending): Promise<void> {
    const durable = [...p.positions.keys()].map((tp) => this.durable.get(tp)).filter((d): d is Position => d !== undefined);
    try {
      await within(this.consumer.commitOffsets(durable), this.deps.config.kafka.sessionTimeoutMs, 'ownership check (offset commit)');
    } catch (err) {
      this.fenced = true;
      const lost = membershipError(err);
      if (!lost) throw err;
      this.deps.metrics.fenced.inc();
      this.deps.log.warn('this member no longer owns its partitions; its buffer is dropped, the new owner reads the records again', {
        buffered: p.count,
        error: lost.message,
      });
      if (!p.dropped) this.dropState();
      throw lost;
    }
    this.fenced = false;
  }

  /** Step 3: dead letters, then one insert per table, then the offset commit. */
  private async flush(p: Pending): Promise<void> {
    const { metrics, clickhouse } = this.deps;
    await this.fence(p);
    this.deps.log.debug('flush started', { rows: p.count, partitions: p.positions.size });
    await this.sendDeadLetters(p);
    // One ingested_at for the whole flush, kept by its retries: ingested_at is
    // the partition key, so the insert is one part, and a retried insert lands
    // in the partition of the first.
    if (p.stamp === undefined) {
      p.stampSeconds = Math.floor(Date.now() / 1000);
      p.stamp = toClickHouseDateTime({ seconds: p.stampSeconds, nanos: 0 });
      for (const rows of p.rows.values()) for (const row of rows) row.ingested_at = p.stamp;
    }
    // One insert per table. Each table is the progress of its own topic's
    // partitions, so a crash between two inserts leaves each topic either
    // stored or to be read again, never half.
    for (const [stream, rows] of p.rows) {
      if (rows.length === 0) continue;
      if (!p.landed.has(stream)) {
        const previous = p.tried.get(stream);
        // A failed attempt may still be running on the server (its answer was
        // lost, not its work): let it finish or kill it, then ask whether it
        // landed. Inserting again first could store every row twice.
        if (previous !== undefined) await settleQuery(clickhouse, previous);
        if (previous === undefined || !(await this.landed(stream, rows, p.stampSeconds))) {
          const started = process.hrtime.bigint();
          for (let isolated = 0; ; isolated++) {
            const queryId = `agentledger-${stream.name}-${randomUUID()}`;
            p.tried.set(stream, queryId);
            try {
              await stream.insert(rows, queryId);
              break;
            } catch (err) {
              const kind = failureKind(err);
              if (kind === 'transient') throw err;
              // An error answer does not prove that nothing landed: a view on
              // the table that throws after the part was written answers with
              // an error too. Settled and checked like a lost answer first.
              await settleQuery(clickhouse, queryId);
              if (await this.landed(stream, rows, p.stampSeconds)) {
                metrics.insertFailures.inc();
                this.deps.log.warn('ClickHouse answered an insert with an error, but its rows are stored', { stream: stream.name, error: failureMessage(err) });
                break;
              }
              // Refused for its data: set aside the rows the server cannot
              // take and insert the rest. Twice is enough: a malformed row
              // refused in turn is not the data's fault.
              if (kind !== 'content' || isolated === 2) throw err;
              await this.isolatePoison(p, stream, rows, err);
            }
          }
          metrics.insertSeconds.observe({ stream: stream.name }, Number(process.hrtime.bigint() - started) / 1e9);
          metrics.batchRows.observe({ stream: stream.name }, rows.length);
        }
        p.landed.add(stream);
      }
      // The store's derived tables (loop_heads), idempotent, before the commit
      // that dates them: a failure here is retried with the flush.
      await stream.derive(rows);
      // Only now may the stream's state let go of the rows' heads: the store
      // answers heads from its derived tables alone, so a head it cached or
      // held pending must stay until they have it.
      stream.durable(p.sealed.get(stream));
      this.deps.onDurable?.(rows);
      p.rows.delete(stream);
    }
    // Dropped meanwhile (a rebalance): the partitions are another member's now, and so is their commit.
    if (p.dropped) return;
    const metadata = String(p.stampSeconds);
    const commits = [...p.positions.values()].map((position) => ({ ...position, metadata }));
    for (const c of commits) this.durable.set(`${c.topic}:${c.partition}`, c);
    if (commits.length > 0) {
      this.deps.log.debug('committing offsets', { partitions: commits.length });
      // The rows are durable: committing now only saves re-reading them, and
      // dates them for the next reader. A refusal means this member lost its
      // partitions: no timer flush until it joins again.
      await within(this.consumer.commitOffsets(commits), this.deps.config.kafka.sessionTimeoutMs, 'offset commit').then(
        () => (this.lastProgress = Date.now()),
        (err: unknown) => {
          this.fenced = true;
          this.deps.log.warn('offset commit failed (progress is kept in ClickHouse)', { error: failureMessage(err) });
        },
      );
      p.positions.clear();
    }
  }

  /** The buffered dead letters, with their source records' headers and where they came from. */
  private async sendDeadLetters(p: Pending): Promise<void> {
    if (p.deadLetters.length === 0) return;
    const { config, metrics } = this.deps;
    await this.producer.send({
      topic: config.kafka.topics.deadLetter,
      acks: -1,
      messages: p.deadLetters.map((d) => ({
        key: d.record.key,
        value: d.record.value,
        headers: {
          ...d.record.headers,
          'x-agentledger-reason': d.reason,
          'x-source-topic': d.record.topic,
          'x-source-partition': String(d.record.partition),
          'x-source-offset': d.record.offset,
        },
      })),
    });
    for (const d of p.deadLetters) metrics.deadLetters.inc({ topic: d.record.topic });
    // Sent: a retry of this flush must not send them again.
    p.deadLetters = [];
  }

  /**
   * After ClickHouse refused an insert for its data (nothing of it landed:
   * the server parses before it writes): finds the rows it cannot take by
   * inserting halves into the stream's probe, which stores nothing; replaces
   * the rows of each such record by its one malformed row, and dead-letters
   * the record. If no row is refused alone, the refusal is not the data's:
   * it is thrown as it came (and is fatal).
   */
  private async isolatePoison(p: Pending, stream: Stream, rows: KafkaColumns[], refusal: unknown): Promise<void> {
    const refused = new Map<number, string>();
    // `known`: this range was refused already (the whole insert), no need to probe it.
    const search = async (lo: number, hi: number, known: boolean): Promise<void> => {
      let why = known ? refusal : undefined;
      if (!known) {
        try {
          await stream.probe(rows.slice(lo, hi));
          return;
        } catch (err) {
          if (failureKind(err) !== 'content') throw err;
          why = err;
        }
      }
      if (hi - lo === 1) {
        refused.set(lo, failureMessage(why));
        return;
      }
      const mid = lo + ((hi - lo) >>> 1);
      await search(lo, mid, false);
      await search(mid, hi, false);
    };
    await search(0, rows.length, true);
    if (refused.size === 0) throw refusal;

    const reasons = new Map<string, string>();
    for (const [i, message] of refused) {
      const key = recordKey(rows[i]!.kafka_partition, rows[i]!.kafka_offset);
      if (!reasons.has(key)) reasons.set(key, `refused by ClickHouse: ${message}`);
    }
    const records = new Map<string, SourceRecord>();
    for (const r of p.records.get(stream) ?? []) {
      const key = recordKey(r.partition, r.offset);
      if (reasons.has(key)) records.set(key, r);
    }
    const done = new Set<string>();
    const kept: KafkaColumns[] = [];
    for (const row of rows) {
      const key = recordKey(row.kafka_partition, row.kafka_offset);
      const reason = reasons.get(key);
      if (reason === undefined) {
        kept.push(row);
        continue;
      }
      if (done.has(key)) continue;
      done.add(key);
      const record = records.get(key);
      // Every row comes from a buffered record; without it there is nothing to dead-letter.
      if (!record) throw new Error(`no buffered record for the refused row at ${stream.topic}:${key}`);
      const { row: malformed, deadLetter } = stream.quarantine(record, reason);
      malformed.ingested_at = row.ingested_at;
      kept.push(malformed);
      p.deadLetters.push(deadLetter);
      this.deps.metrics.poisonRecords.inc({ topic: stream.topic });
      this.deps.log.warn("ClickHouse refused a record's row; it is dead-lettered and stored as malformed", { ...where(record), reason });
    }
    rows.splice(0, rows.length, ...kept);
    // The stream's state moved past the refused rows as if they were stored: it is read back after this flush.
    p.rebuild.add(stream);
    await this.sendDeadLetters(p);
  }

  /**
   * Whether an insert of `rows` is in ClickHouse: its rows land together, so
   * the last row's offset being below its partition's stored progress says so.
   */
  private async landed(stream: Stream, rows: readonly KafkaColumns[], stampSeconds: number): Promise<boolean> {
    const last = rows[rows.length - 1];
    // If it landed, it carries this flush's stamp: only parts since then are read.
    const since = Math.max(0, stampSeconds - CLOCK_SLACK_SECONDS);
    return last !== undefined && (await stream.progress(last.kafka_partition, since)) > BigInt(last.kafka_offset);
  }

  /**
   * Whether the group has committed every partition of its topics up to the
   * high watermark: nothing is left for any member, including partitions a
   * killed member still holds until its session times out.
   */
  async caughtUp(): Promise<boolean> {
    return (await this.uncommitted()) === 0n;
  }

  /** Records waiting in the partitions this member was given (past the group's commit): what the stall watchdog asks. */
  waiting(): Promise<bigint> {
    return this.uncommitted(this.assignment);
  }

  /** Records past the group's committed offsets, in every partition of the topics, or only in those of `owned`. */
  private async uncommitted(owned?: Readonly<Record<string, readonly number[]>>): Promise<bigint> {
    const topics = this.streams.map((s) => s.topic).filter((t) => owned === undefined || (owned[t]?.length ?? 0) > 0);
    if (topics.length === 0) return 0n;
    const admin = this.deps.kafka.admin();
    await admin.connect();
    try {
      const committed = await admin.fetchOffsets({ groupId: this.deps.config.kafka.groupId, topics });
      let waiting = 0n;
      for (const topic of topics) {
        const high = await admin.fetchTopicOffsets(topic);
        const mine = committed.find((c) => c.topic === topic);
        for (const p of high) {
          if (owned !== undefined && !owned[topic]?.includes(p.partition)) continue;
          const c = mine?.partitions.find((x) => x.partition === p.partition);
          const at = c && Number(c.offset) >= 0 ? BigInt(c.offset) : BigInt(p.low);
          if (at < BigInt(p.high)) waiting += BigInt(p.high) - at;
        }
      }
      return waiting;
    } finally {
      await admin.disconnect();
    }
  }

  /** Rows and dead letters waiting for a flush. */
  get buffered(): number {
    return this.pending.count + (this.inflight?.p.count ?? 0);
  }

  /**
   * Graceful stop: stop fetching, let the batch in hand finish, flush (unless
   * `flush` is false: after a fatal failure) and commit while still a member
   * of the group (kafkajs commits only for a running consumer), then leave
   * the group. Resolves true when everything buffered was flushed (or nothing
   * was buffered), false otherwise.
   */
  async stop(flush = true): Promise<boolean> {
    if (this.stopping) return true;
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    try {
      this.consumer.pause(this.streams.map((s) => ({ topic: s.topic })));
    } catch {
      // A consumer kafkajs stopped for good (a crash it does not restart from) has no group left to pause.
    }
    const deadline = Date.now() + this.deps.config.kafka.sessionTimeoutMs;
    while (this.inFlight > 0 && Date.now() < deadline) await sleep(20);
    // After a fatal failure the buffer would only fail again: it is read again on restart.
    let flushed = !flush && this.pending.positions.size === 0 && this.inflight === undefined;
    for (let attempt = 0; flush && attempt < 5 && !flushed; attempt++) {
      try {
        await this.flushIfDue(true);
        flushed = true;
      } catch (err) {
        this.deps.log.error('final flush failed; the records will be read again on restart', {
          attempt: attempt + 1,
          error: failureMessage(err),
        });
        await sleep(500 * (attempt + 1));
      }
    }
    await this.consumer.disconnect();
    await this.producer.disconnect();
    return flushed;
  }
}
