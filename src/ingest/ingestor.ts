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
import { asError, failureMessage, within } from '../observability/errors.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { KafkaColumns } from '../rows/rows.js';
import { KEY_MISMATCH } from '../pipeline/envelopes.js';
import type { SourceRecord, Stream } from '../pipeline/stream.js';
import { undecodableBatch } from '../sources/codecs.js';
import { failureKind, kafkajsRejoinsOn, membershipError } from './failures.js';
import { Flusher } from './flusher.js';
import { processIsolating } from './isolate.js';
import type { BatchPayload, GroupBatch, GroupListener, IngestEdges } from './group.js';
import { ReadBack } from './read-back.js';
import { BatchRetry } from './retry.js';
import { CoordinatorWatch } from './coordinator-watch.js';
import { buffer, emptyPending, type Flight } from './pending.js';

export interface IngestDeps {
  /** The consumer group, the dead-letter producer and ClickHouse's query control: kafkaEdges() in production, a fake in unit tests. */
  readonly edges: IngestEdges;
  readonly config: Config;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** Told each stream's rows once they are durable (after the derived writes, before the commit); must not block. */
  readonly onDurable?: (rows: readonly KafkaColumns[]) => void;
  /** The wait between tries of a failed batch or final flush; a timer by default. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** The coordinator watch's clock (ms); Date.now by default. */
  readonly now?: () => number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class Ingestor {
  private readonly edges: IngestEdges;
  private readonly byTopic: Map<string, Stream>;
  /** Next offset to process per "topic:partition"; absent until read back from ClickHouse. */
  private readonly progress = new Map<string, bigint>();
  /** The flush protocol; it keeps the durable offsets and whether this member was fenced. */
  private readonly flusher: Flusher;
  /** Step 4: a batch's work retried with heartbeats. */
  private readonly retry: BatchRetry;
  /** Step 1: where each partition resumes. */
  private readonly resume: ReadBack;
  /** Step 5's other half: a coordinator silent for a session timeout makes this member join again. */
  private readonly coordinator: CoordinatorWatch;
  /** The rejoin under way, if any (stop() waits for it). */
  private rejoining: Promise<void> | undefined;
  private watchTimer: NodeJS.Timeout | undefined;
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
  /** When rows were last made durable and committed (progress that is not a join or an idle check). */
  lastDurable = Date.now();
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
    const { edges, config } = deps;
    this.edges = edges;
    this.byTopic = new Map(streams.map((s) => [s.topic, s]));
    this.resume = new ReadBack(edges, deps.log);
    this.coordinator = new CoordinatorWatch({
      silenceMs: config.kafka.sessionTimeoutMs,
      now: deps.now ?? Date.now,
      settled: () => this.settled && !this.stopping,
      rejoin: (why) => this.rejoin(why),
    });
    this.flusher = new Flusher({
      ports: {
        commit: (positions, what) => this.toCoordinator(within(edges.commit(positions), config.kafka.sessionTimeoutMs, what)),
        sendDeadLetters: (letters) => edges.sendDeadLetters(letters),
        settle: (queryId) => edges.settle(queryId),
      },
      metrics: deps.metrics,
      log: deps.log,
      onFenced: () => this.dropState(),
      onCommitted: () => (this.lastProgress = this.lastDurable = Date.now()),
      ...(deps.onDurable ? { onDurable: deps.onDurable } : {}),
    });
    this.retry = new BatchRetry({
      log: deps.log,
      metrics: deps.metrics,
      sessionTimeoutMs: config.kafka.sessionTimeoutMs,
      stopping: () => this.stopping,
      onRetry: (message) => (this.lastFailure = message),
      onFatal: (err) => this.onFatal(err),
      onHeartbeatFailed: (err) => {
        this.flusher.fenced = true;
        this.coordinatorFailed(err);
      },
      ...(deps.sleep ? { sleep: deps.sleep } : {}),
      ...(deps.now ? { now: deps.now } : {}),
    });
  }

  async start(): Promise<void> {
    const topics = this.streams.map((s) => s.topic);
    await this.edges.ensureTopics([...topics, this.deps.config.kafka.topics.deadLetter]);
    await this.edges.connect();
    this.edges.listen(this.membership());
    await this.edges.run(topics, (payload) => this.eachBatch(payload));
    const tick = Math.max(50, Math.floor(this.deps.config.batch.maxWaitMs / 2));
    this.timer = setInterval(() => {
      if (this.inFlight === 0 && !this.stopping && !this.flusher.fenced) {
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
    this.watchTimer = setInterval(() => void this.coordinator.check(), Math.min(1_000, Math.max(100, Math.floor(this.deps.config.kafka.sessionTimeoutMs / 10))));
    this.watchTimer.unref();
  }

  /** A request to the coordinator, told to the coordinator watch: an answer, or a failure without one. */
  private async toCoordinator<T>(request: Promise<T>): Promise<T> {
    try {
      const answer = await request;
      this.coordinator.answered();
      return answer;
    } catch (err) {
      this.coordinatorFailed(err);
      throw err;
    }
  }

  /**
   * A membership error is the coordinator's answer (kafkajs joins again by
   * itself), and CommitNotSent says kafkajs is restarting its runner: only
   * the other failures are a coordinator's silence.
   */
  private coordinatorFailed(err: unknown): void {
    if (!membershipError(err)) this.coordinator.failed(err);
  }

  /** Whether kafkajs has handed a batch that is not done yet (ingest's own retries are at work). */
  get batchInHand(): boolean {
    return this.inFlight > 0;
  }

  /**
   * Leaves the group and joins it again with a fresh client state (the
   * coordinator watch; the stall watchdog, when no batch comes while records
   * wait). What is buffered is dropped first, as at a rebalance: the next
   * owner of each partition, this member or another, reads it back. Does
   * nothing while stopping, while kafkajs is joining or restarting already,
   * or while a rejoin is under way.
   */
  async rejoin(why: string): Promise<void> {
    if (this.stopping || !this.settled || this.rejoining !== undefined) return;
    const { log, metrics } = this.deps;
    log.warn(`${why}: leaving the consumer group and joining it again to find its coordinator; the buffer is dropped and read again`, { buffered: this.buffered });
    metrics.coordinatorRejoins.inc();
    // Not settled until joined() (no timer flush, no second rejoin).
    this.rebalancing = true;
    this.dropState();
    this.rejoining = this.edges.rejoin();
    try {
      await this.rejoining;
    } catch (err) {
      log.error('could not run the consumer again after leaving the group', { error: failureMessage(err) });
      this.onFatal(asError(err));
    } finally {
      this.rejoining = undefined;
    }
  }

  /** What this member does when the group moves: steps 5 and 6, and a crash. */
  private membership(): GroupListener {
    const { log, metrics } = this.deps;
    return {
      rebalancing: () => {
        this.rebalancing = true;
      },
      joined: (memberId, assignment) => {
        // Step 5: whatever was buffered belongs to the previous generation.
        this.rebalancing = false;
        this.joined = true;
        // Idleness is measured from owning partitions, not from waiting for them
        // (a killed member holds its partitions until its session times out).
        this.lastActivity = Date.now();
        this.lastProgress = Date.now();
        this.generation++;
        this.assignment = assignment;
        this.dropState();
        this.flusher.fenced = false;
        this.coordinator.answered();
        log.info('joined consumer group', { memberId, assignment });
      },
      // A fetch whose records were all filtered out by kafkajs (a transaction's
      // control records, an aborted transaction's records) never reaches
      // eachBatch, yet its offsets must be committed too, or the group never
      // reaches the end of the partition (idle exit, lag, the stall watchdog).
      batchEnded: (topic, partition, batchSize, lastOffset) => {
        if (batchSize !== 0 || this.stopping || !this.settled) return;
        const generation = this.generation;
        void this.withLock(() => (generation === this.generation ? this.passFiltered(topic, partition, lastOffset) : Promise.resolve())).catch((err: unknown) =>
          log.warn('could not record the offsets of filtered records; the next batch records them', { topic, partition, error: failureMessage(err) }),
        );
      },
      crashed: (error, restart) => {
        // A batch kafkajs cannot decode is read again by every retry and every
        // restart: counted, and fatal with where it is (never skipped: its
        // records would be lost without a trace).
        const undecodable = undecodableBatch(error);
        if (undecodable) {
          const { topic, partition } = undecodable.place;
          metrics.undecodableBatches.inc({ topic: topic ?? 'unknown', partition: partition === undefined ? 'unknown' : String(partition) });
        }
        if (!restart) this.onFatal(undecodable ?? error);
        else {
          // kafkajs joins again by itself: not settled until it has (no rejoin of ours meanwhile).
          this.rebalancing = true;
          log.warn('consumer restarting after an error', { error: error.message });
        }
      },
      coordinatorAnswered: () => this.coordinator.answered(),
    };
  }

  /** Forgets the buffer and everything read back: it belongs to a generation this member no longer owns. */
  private dropState(): void {
    this.pending.dropped = true;
    this.pending = emptyPending();
    if (this.inflight) this.inflight.p.dropped = true;
    this.inflight = undefined;
    this.progress.clear();
    this.flusher.durable.clear();
    this.resume.clear();
    for (const stream of this.streams) stream.reset();
  }

  private withLock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private async eachBatch(payload: BatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
    if (this.stopping || !isRunning() || isStale() || batch.messages.length === 0) return;
    this.inFlight++;
    try {
      this.lastActivity = Date.now();
      // Step 4: ClickHouse reads (progress, heads) and the flush are retried
      // here, with heartbeats, until they succeed; nothing is skipped.
      const at = { topic: batch.topic, partition: batch.partition, firstOffset: batch.firstOffset(), lastOffset: batch.lastOffset() };
      let stale = false;
      await this.retry.untilDone(payload, at, () =>
        this.withLock(async () => {
          // A rewind (settleInflight) sought this partition back while the batch waited for the lock.
          if (isStale()) stale = true;
          else await this.processBatch(batch);
        }),
      );
      if (stale) return;
      // Step 2: fetch on, commit later.
      resolveOffset(batch.lastOffset());
      await this.retry.untilDone(payload, at, () => this.flushIfDue(false));
      await this.toCoordinator(within(heartbeat(), this.deps.config.kafka.sessionTimeoutMs, 'heartbeat'));
    } catch (err) {
      // kafkajs joins the group again on this error (a batch that gave up on
      // a silent coordinator, a membership answer): not settled until it
      // has, so the coordinator watch does not leave and run the consumer on
      // top of kafkajs's own join (that stop, mid-join, once left kafkajs's
      // fetchers spinning: src/sources/runner-stop.ts).
      if (kafkajsRejoinsOn(err)) this.rebalancing = true;
      throw err;
    } finally {
      this.inFlight--;
    }
  }

  private async processBatch(batch: GroupBatch): Promise<void> {
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
      const outcome = await processIsolating(stream, records, this.deps);
      buffer(this.pending, stream, records, outcome);
      for (const [verdict, n] of outcome.verdicts) {
        // Not a verdict: stored envelopes whose Kafka key is not their LoopID, also counted by their verdict.
        if (verdict === KEY_MISMATCH) this.deps.metrics.keyMismatches.inc({ topic }, n);
        else this.deps.metrics.records.inc({ stream: stream.name, verdict }, n);
      }
      this.processed.set(stream.name, (this.processed.get(stream.name) ?? 0) + records.length);
    }
    // A batch wholly below the progress (a redelivery, or the records a crash
    // stored but did not commit) must not move it back: the records past it
    // would be judged twice. Its position is the progress, durable already,
    // so the commit still catches up with what is stored.
    const end = BigInt(batch.lastOffset()) + 1n;
    const after = end > from ? end : from;
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

  /** Step 1: where a partition resumes, read back on its first batch of a generation. */
  private async readBack(stream: Stream, topic: string, partition: number): Promise<bigint> {
    const durable = await this.resume.resume(stream, topic, partition);
    const next = BigInt(durable.offset);
    this.progress.set(`${topic}:${partition}`, next);
    this.flusher.durable.set(`${topic}:${partition}`, durable);
    return next;
  }

  /**
   * Flushes when the buffer is full or old enough, or always when `force`d (at
   * shutdown). The timer calls it without retrying: a failure leaves the buffer
   * for the next batch, which retries.
   */
  async flushIfDue(force: boolean, fromTimer = false): Promise<void> {
    const { config } = this.deps;
    await this.withLock(async () => {
      if (fromTimer && (this.rebalancing || this.flusher.fenced)) return;
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
      const started: Flight = { p, done: this.flusher.flush(p), state: 'running' };
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
      flight.done = this.flusher.flush(flight.p);
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
        this.edges.seek(start.topic, start.partition, start.offset);
      }
      this.deps.log.info('read back after rows the server refused: the batches judged meanwhile are judged again', { partitions: [...next.starts.keys()] });
      for (const stream of this.streams) stream.reset();
    } else {
      for (const stream of flight.p.rebuild) stream.reset();
    }
    flight.p.rebuild.clear();
  }

  /**
   * Whether the group has committed every partition of its topics up to the
   * high watermark: nothing is left for any member, including partitions a
   * killed member still holds until its session times out.
   */
  async caughtUp(): Promise<boolean> {
    return (await this.edges.uncommitted(this.streams.map((s) => s.topic))) === 0n;
  }

  /** Records waiting in the partitions this member was given (past the group's commit): what the stall watchdog asks. */
  waiting(): Promise<bigint> {
    return this.edges.uncommitted(this.streams.map((s) => s.topic), this.assignment);
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
    if (this.watchTimer) clearInterval(this.watchTimer);
    // A rejoin under way ends first: pause and disconnect act on the consumer it runs again.
    if (this.rejoining) await within(this.rejoining, this.deps.config.kafka.sessionTimeoutMs, 'rejoin').catch(() => undefined);
    try {
      this.edges.pause(this.streams.map((s) => s.topic));
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
        await (this.deps.sleep ?? sleep)(500 * (attempt + 1));
      }
    }
    await this.edges.disconnect();
    return flushed;
  }
}
