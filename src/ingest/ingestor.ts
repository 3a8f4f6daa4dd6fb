/**
 * The consumer loop of `agentledger ingest`: Kafka -> decode -> verify ->
 * ClickHouse, exactly once in effect. This is the driver: it owns the
 * consumer group, the timers and the lock, feeds the machine (machine.ts,
 * where every exactly-once rule is) each event that happens, and carries
 * out its commands: read a partition back, judge a batch into a buffer,
 * seal it, fence, write and commit it (flight.ts), drop what the member no
 * longer holds, rewind.
 *
 * What the driver itself keeps:
 * - Judging and settling a flush run under one lock, so a rewind never lands
 *   in the middle of a batch's judging; a flight runs beside the judging of
 *   the next batches (AGENTLEDGER_BATCH_OVERLAP).
 * - While ClickHouse or Kafka fails, the batch in hand is retried with
 *   heartbeats (retry.ts); nothing is dropped, and kafkajs fetches nothing
 *   more until the batch returns.
 * - An insert whose answer was lost is settled before it is tried again
 *   (writer.ts).
 * - A coordinator silent for a session timeout makes the member join again
 *   (the Kafka adapter's coordinator watch tells it `lost`), as a lost
 *   membership.
 */
import type { Config } from '../config/index.js';
import { UndecodableBatchError } from '../kafka/codecs.js';
import type { BatchPayload, GroupListener, Position } from '../kafka/contract.js';
import { asError, failureMessage, kindOf, ownershipLost, within } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Stream } from '../pipeline/stream.js';
import type { KafkaColumns } from '../rows/rows.js';
import type { IngestEdges } from './edges.js';
import { FlightRun } from './flight.js';
import { buffered, initialState, owning, step, type Command, type Event, type IngestState, type MachineLimits } from './machine.js';
import { Buffers } from './buffers.js';
import { judgeBatch, type JudgeDeps } from './judge.js';
import { ReadBack } from './read-back.js';
import { BatchRetry } from './retry.js';
import { Writer } from './writer.js';

export interface IngestDeps {
  /** The consumer group, the dead-letter producer and ClickHouse's query control: ingestEdges() in production, a fake in unit tests. */
  readonly edges: IngestEdges;
  readonly config: Config;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** Told each stream's rows once they are durable (after the derived writes, before the commit); must not block. */
  readonly onDurable?: (rows: readonly KafkaColumns[]) => void;
  /** The wait between tries of a failed batch or final flush; a timer by default. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** The retries' clock of a coordinator's silence (ms); Date.now by default. */
  readonly now?: () => number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class Ingestor {
  private readonly edges: IngestEdges;
  private readonly byTopic: Map<string, Stream>;
  private readonly limits: MachineLimits;
  private state: IngestState = initialState();
  private readonly buffers: Buffers;
  /** The flight's run, if one was started. */
  private flight: FlightRun | undefined;
  private readonly writer: Writer;
  private readonly retry: BatchRetry;
  private readonly resume: ReadBack;
  private lock: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  /** eachBatch calls running now. */
  private inFlight = 0;
  /** The last failure a batch retried (said by the stall watchdog). */
  lastFailure: string | undefined;
  lastActivity = Date.now();
  /**
   * When rows were last made durable and committed, or the member last found
   * nothing to do (a new generation, an empty fetch): what the stall
   * watchdog measures.
   */
  lastProgress = Date.now();
  /** When rows were last made durable and committed (progress that is not a join or an idle check). */
  lastDurable = Date.now();
  /** The partitions per topic this member was given at its last join. */
  private assignment: Readonly<Record<string, readonly number[]>> = {};
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
    this.limits = { maxRows: config.batch.maxRows, maxBytes: config.batch.maxBytes, maxWaitMs: config.batch.maxWaitMs, overlap: config.batch.overlap };
    this.resume = new ReadBack(edges, deps.log);
    this.buffers = new Buffers({
      streams,
      resume: this.resume,
      seek: (topic, partition, offset) => edges.seek(topic, partition, offset),
      log: deps.log,
      onCommitted: () => (this.lastProgress = this.lastDurable = Date.now()),
    });
    this.writer = new Writer({
      ports: { sendDeadLetters: (letters) => edges.sendDeadLetters(letters), settle: (queryId) => edges.settle(queryId) },
      metrics: deps.metrics,
      log: deps.log,
      ...(deps.onDurable ? { onDurable: deps.onDurable } : {}),
    });
    this.retry = new BatchRetry({
      log: deps.log,
      metrics: deps.metrics,
      sessionTimeoutMs: config.kafka.sessionTimeoutMs,
      stopping: () => this.stopping,
      onRetry: (message) => (this.lastFailure = message),
      onFatal: (err) => this.onFatal(err),
      onHeartbeatFailed: () => void this.apply({ type: 'heartbeatFailed' }),
      ...(deps.sleep ? { sleep: deps.sleep } : {}),
      ...(deps.now ? { now: deps.now } : {}),
    });
  }

  /** Whether this member owns its partitions: joined, and no rebalance under way. */
  get settled(): boolean {
    return owning(this.state);
  }

  /** Rows and dead letters waiting for a flush. */
  get buffered(): number {
    return buffered(this.state);
  }

  /** Whether kafkajs has handed a batch that is not done yet (ingest's own retries are at work). */
  get batchInHand(): boolean {
    return this.inFlight > 0;
  }

  async start(): Promise<void> {
    const topics = this.streams.map((s) => s.topic);
    await this.edges.ensureTopics([...topics, this.deps.config.kafka.topics.deadLetter]);
    await this.edges.connect();
    this.edges.listen(this.membership());
    await this.edges.run(topics, (payload) => this.eachBatch(payload));
    const tick = Math.max(50, Math.floor(this.deps.config.batch.maxWaitMs / 2));
    this.timer = setInterval(() => {
      if (this.inFlight === 0 && !this.stopping && !this.state.fenced) {
        // The next batch retries a failed timer flush; meanwhile it is counted and said.
        void this.flushIfDue(false, true).catch((err: unknown) => {
          this.deps.metrics.insertFailures.inc();
          if (!ownershipLost(err) && kindOf(err) !== 'transient') {
            this.deps.log.error('timer flush failed with a failure that retrying cannot fix', { buffered: this.buffered, error: failureMessage(err) });
            this.onFatal(asError(err));
            return;
          }
          this.deps.log.warn('timer flush failed; the buffer is kept and retried', { buffered: this.buffered, error: failureMessage(err) });
        });
      }
    }, tick);
  }

  /** What judging a batch needs of the driver. */
  private get judging(): JudgeDeps {
    return { apply: (event) => this.apply(event), state: () => this.state, streams: this.byTopic, resume: this.resume, buffers: this.buffers, processed: this.processed, log: this.deps.log, metrics: this.deps.metrics };
  }

  /** A flight of buffer `id`, started by the machine's fence. */
  private fly(id: number, fence: readonly Position[]): FlightRun {
    return new FlightRun(id, fence, this.buffers.of(id), {
      apply: (event) => this.apply(event),
      commit: (positions, what) => within(this.edges.commit(positions), this.deps.config.kafka.sessionTimeoutMs, what),
      writer: this.writer,
      log: this.deps.log,
      metrics: this.deps.metrics,
    });
  }

  /** Feeds `event` to the machine and carries out the commands that need no waiting; returns them all. */
  private apply(event: Event): readonly Command[] {
    const { state, commands } = step(this.state, event, this.limits);
    this.state = state;
    for (const c of commands) {
      if (c.type === 'fence') this.flight = this.fly(c.buffer, c.positions);
      else this.buffers.carryOut(c);
    }
    return commands;
  }

  /**
   * Leaves the group and joins it again with a fresh client state (the stall
   * watchdog, when no batch comes while records wait): the group tells the
   * member `lost` first, which drops what it holds, as at a rebalance. Does
   * nothing while stopping, while the client is joining or restarting
   * already, or while a rejoin is under way.
   */
  rejoin(why: string): Promise<void> {
    return this.edges.rejoin(why);
  }

  /** What this member does when the group moves, and a crash. */
  private membership(): GroupListener {
    const { log, metrics } = this.deps;
    return {
      rebalancing: () => void this.apply({ type: 'revoking' }),
      joined: (memberId, generation, assignment) => {
        // Idleness is measured from owning partitions, not from waiting for them
        // (a killed member holds its partitions until its session times out).
        this.lastActivity = Date.now();
        this.lastProgress = Date.now();
        this.assignment = assignment;
        this.apply({ type: 'assigned', partitions: Object.entries(assignment).flatMap(([topic, ps]) => ps.map((partition) => ({ topic, partition }))) });
        log.info('joined consumer group', { memberId, generation, assignment });
      },
      // A fetch whose records were all filtered out never reaches eachBatch,
      // yet its offsets must be committed too, or the group never reaches
      // the end of the partition (idle exit, lag, the stall watchdog).
      filtered: (topic, partition, lastOffset) => {
        if (this.stopping || !this.settled) return;
        void this.withLock(() => judgeBatch(this.judging, topic, partition, lastOffset, undefined)).catch((err: unknown) =>
          log.warn('could not record the offsets of filtered records; the next batch records them', { topic, partition, error: failureMessage(err) }),
        );
      },
      crashed: (error, restart) => {
        // A batch kafkajs cannot decode is read again by every retry and every
        // restart: counted, and fatal with where it is (never skipped: its
        // records would be lost without a trace).
        if (error instanceof UndecodableBatchError) {
          const { topic, partition } = error.place;
          metrics.undecodableBatches.inc({ topic: topic ?? 'unknown', partition: partition === undefined ? 'unknown' : String(partition) });
        }
        if (!restart) this.onFatal(error);
        else {
          // kafkajs joins again by itself: not owning until it has (no rejoin of ours meanwhile).
          this.apply({ type: 'revoking' });
          log.warn('consumer restarting after an error', { error: error.message });
        }
      },
      lost: (why) => {
        log.warn(`${why}: leaving the consumer group and joining it again to find its coordinator; the buffer is dropped and read again`, { buffered: this.buffered });
        metrics.coordinatorRejoins.inc();
        this.apply({ type: 'lost' });
      },
    };
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
      // ClickHouse reads (progress, heads) and the flush are retried here,
      // with heartbeats, until they succeed; nothing is skipped.
      const at = { topic: batch.topic, partition: batch.partition, firstOffset: batch.firstOffset(), lastOffset: batch.lastOffset() };
      let stale = false;
      await this.retry.untilDone(payload, at, () =>
        this.withLock(async () => {
          // A rewind sought this partition back while the batch waited for the lock.
          if (isStale()) stale = true;
          else await judgeBatch(this.judging, batch.topic, batch.partition, batch.lastOffset(), batch);
        }),
      );
      if (stale) return;
      // Fetch on, commit later.
      resolveOffset(batch.lastOffset());
      await this.retry.untilDone(payload, at, () => this.flushIfDue(false));
      await within(heartbeat(), this.deps.config.kafka.sessionTimeoutMs, 'heartbeat');
    } finally {
      this.inFlight--;
    }
  }

  /**
   * Flushes when the buffer is full or old enough, or always when `force`d (at
   * shutdown); waits for the flight when the machine says so, and throws its
   * failure (the caller's retry comes back here). The timer calls it without
   * retrying: a failure leaves the buffer for the next batch, which retries.
   */
  async flushIfDue(force: boolean, fromTimer = false): Promise<void> {
    await this.withLock(async () => {
      for (;;) {
        const commands = this.apply({ type: 'flushCheck', force, fromTimer, now: Date.now() });
        const wait = commands.find((c) => c.type === 'await');
        const run = this.flight;
        if (wait === undefined || run === undefined || run.buffer !== wait.buffer) return;
        await run.done;
        if (run.failure !== undefined) throw asError(run.failure);
      }
    });
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
      this.edges.pause(this.streams.map((s) => s.topic));
    } catch {
      // A consumer kafkajs stopped for good (a crash it does not restart from) has no group left to pause.
    }
    const deadline = Date.now() + this.deps.config.kafka.sessionTimeoutMs;
    while (this.inFlight > 0 && Date.now() < deadline) await sleep(20);
    this.apply({ type: 'stop' });
    // After a fatal failure the buffer would only fail again: it is read again on restart.
    let flushed = !flush && this.state.open.positions.size === 0 && this.state.flight === undefined;
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
