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
 *    buffered rows with ONE insert, then commits the offsets after them. A
 *    crash before the insert loses only uncommitted, unstored work, read again
 *    on restart; a crash after it is caught by step 1.
 * 4. While ClickHouse fails, consumption pauses and the flush is retried with
 *    heartbeats; nothing is dropped.
 * 5. A rebalance drops the buffer and every cache: the rows were not durable,
 *    their offsets not committed, and the next owner of each partition reads
 *    state back from ClickHouse.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { Consumer, EachBatchPayload, Kafka, Producer } from 'kafkajs';
import type { Config } from '../config/index.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { KafkaColumns } from '../sink/clickhouse/rows.js';
import type { DeadLetter, SourceRecord, Stream } from '../pipeline/stream.js';
import { createReliableProducer, ensureTopics, TOPIC_CONFIG } from './kafka.js';

export interface IngestDeps {
  readonly kafka: Kafka;
  readonly clickhouse: ClickHouseClient;
  readonly config: Config;
  readonly log: Logger;
  readonly metrics: Metrics;
}

interface Pending {
  /** Rows per stream, each written by one insert into its table. */
  rows: Map<Stream, KafkaColumns[]>;
  deadLetters: DeadLetter[];
  /** Next offset to commit per "topic:partition", once the rows are durable. */
  positions: Map<string, { topic: string; partition: number; offset: string }>;
  since: number;
  /** Inserts tried for this buffer so far (a retry first checks whether the last one landed). */
  attempts: number;
}

const emptyPending = (): Pending => ({ rows: new Map(), deadLetters: [], positions: new Map(), since: 0, attempts: 0 });
const rowCount = (p: Pending): number => [...p.rows.values()].reduce((n, r) => n + r.length, 0);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class Ingestor {
  private readonly consumer: Consumer;
  private readonly producer: Producer;
  private readonly byTopic: Map<string, Stream>;
  /** Next offset to process per "topic:partition"; absent until read back from ClickHouse. */
  private readonly progress = new Map<string, bigint>();
  private pending = emptyPending();
  private lock: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  /** eachBatch calls running now. */
  private inFlight = 0;
  private paused = false;
  /** Between REBALANCING and GROUP_JOIN: no flush from the timer (it could race the next owner). */
  private rebalancing = false;
  lastActivity = Date.now();
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
      maxBytesPerPartition: 4 * 1024 * 1024,
      maxBytes: 32 * 1024 * 1024,
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
      this.pending = emptyPending();
      this.progress.clear();
      for (const stream of this.streams) stream.reset();
      log.info('joined consumer group', { memberId: e.payload.memberId, assignment: e.payload.memberAssignment });
    });
    this.consumer.on(this.consumer.events.CRASH, (e) => {
      if (!e.payload.restart) this.onFatal(e.payload.error);
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
      if (this.inFlight === 0 && !this.stopping) void this.flushIfDue(false, true).catch(() => undefined);
    }, tick);
  }

  private withLock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private async eachBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    if (this.stopping || !isRunning() || isStale() || batch.messages.length === 0) return;
    this.inFlight++;
    try {
      this.lastActivity = Date.now();
      // Step 4: ClickHouse reads (progress, heads) and the flush are retried
      // here, with heartbeats, until they succeed; nothing is skipped.
      await this.untilDone(heartbeat, () => this.withLock(() => this.processBatch(batch)));
      // Step 2: fetch on, commit later.
      resolveOffset(batch.lastOffset());
      await this.untilDone(heartbeat, () => this.flushIfDue(false));
      await heartbeat();
    } finally {
      this.inFlight--;
    }
  }

  private async processBatch(batch: EachBatchPayload['batch']): Promise<void> {
    const { topic, partition } = batch;
    const stream = this.byTopic.get(topic);
    if (!stream) throw new Error(`no stream for topic ${topic}`);
    const tp = `${topic}:${partition}`;
    let next = this.progress.get(tp);
    if (next === undefined) {
      // Step 1.
      next = await stream.progress(partition);
      this.progress.set(tp, next);
    }
    const from = next;
    const records: SourceRecord[] = batch.messages
      .filter((m) => BigInt(m.offset) >= from)
      .map((m) => ({ topic, partition, offset: m.offset, timestamp: m.timestamp, key: m.key, value: m.value }));
    if (records.length > 0) {
      const outcome = await stream.process(records);
      for (const [verdict, n] of outcome.verdicts) this.deps.metrics.records.inc({ stream: stream.name, verdict }, n);
      this.processed.set(stream.name, (this.processed.get(stream.name) ?? 0) + records.length);
      let rows = this.pending.rows.get(stream);
      if (!rows) this.pending.rows.set(stream, (rows = []));
      for (const row of outcome.rows) rows.push(row);
      this.pending.deadLetters.push(...outcome.deadLetters);
    }
    const after = BigInt(batch.lastOffset()) + 1n;
    if (this.pending.positions.size === 0) this.pending.since = Date.now();
    this.pending.positions.set(tp, { topic, partition, offset: after.toString() });
    this.progress.set(tp, after);
    this.deps.metrics.lag.set({ topic, partition: String(partition) }, Number(BigInt(batch.highWatermark) - after));
  }

  /**
   * Runs `work` until it succeeds. Meanwhile consumption is paused (no
   * prefetching while ClickHouse is down) and the group is kept informed with
   * heartbeats; a rebalance makes heartbeat() throw, which abandons the batch
   * (step 5).
   */
  private async untilDone(heartbeat: () => Promise<void>, work: () => Promise<void>): Promise<void> {
    const { log, metrics } = this.deps;
    const topics = this.streams.map((s) => ({ topic: s.topic }));
    for (let attempt = 0; ; attempt++) {
      try {
        await work();
        if (this.paused) {
          this.paused = false;
          metrics.paused.set(0);
          this.consumer.resume(topics);
          log.info('ClickHouse answers again; consumption resumed');
        }
        return;
      } catch (err) {
        metrics.insertFailures.inc();
        if (this.stopping) throw err;
        if (!this.paused) {
          this.paused = true;
          metrics.paused.set(1);
          this.consumer.pause(topics);
        }
        const wait = Math.min(30_000, 250 * 2 ** Math.min(attempt, 7));
        log.warn('ClickHouse failed; consumption paused, retrying', { attempt: attempt + 1, inMs: wait, error: err instanceof Error ? err.message : String(err) });
        await heartbeat();
        await sleep(wait);
      }
    }
  }

  /**
   * Flushes when the buffer is full or old enough, or always when `force`d (at
   * shutdown). The timer calls it without retrying: a failure leaves the buffer
   * for the next batch, which retries.
   */
  async flushIfDue(force: boolean, fromTimer = false): Promise<void> {
    const { config } = this.deps;
    await this.withLock(async () => {
      const p = this.pending;
      // Every buffered row has its partition's position recorded, so an empty
      // positions map means an empty buffer.
      if (p.positions.size === 0 || (fromTimer && this.rebalancing)) return;
      const full = rowCount(p) + p.deadLetters.length >= config.batch.maxRows;
      if (!force && !full && Date.now() - p.since < config.batch.maxWaitMs) return;
      await this.flush(p);
      if (this.pending === p) this.pending = emptyPending();
    });
  }

  /** Step 3: dead letters, then one insert, then the offset commit. */
  private async flush(p: Pending): Promise<void> {
    const { config, metrics } = this.deps;
    if (p.deadLetters.length > 0) {
      await this.producer.send({
        topic: config.kafka.topics.deadLetter,
        acks: -1,
        messages: p.deadLetters.map((d) => ({
          key: d.record.key,
          value: d.record.value,
          headers: {
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
    // One insert per table. Each table is the progress of its own topic's
    // partitions, so a crash between two inserts leaves each topic either
    // stored or to be read again, never half.
    for (const [stream, rows] of p.rows) {
      if (rows.length === 0) continue;
      if (p.attempts > 0 && (await this.landed(stream, rows))) {
        // A failed attempt whose insert reached ClickHouse after all (the
        // response was lost): inserting again would store every row twice.
        p.rows.delete(stream);
        continue;
      }
      const started = process.hrtime.bigint();
      p.attempts++;
      await stream.insert(rows);
      metrics.insertSeconds.observe({ stream: stream.name }, Number(process.hrtime.bigint() - started) / 1e9);
      metrics.batchRows.observe({ stream: stream.name }, rows.length);
      p.rows.delete(stream);
    }
    if (p.positions.size > 0) {
      // The rows are durable: committing now only saves re-reading them.
      await this.consumer.commitOffsets([...p.positions.values()]).catch((err: unknown) => {
        this.deps.log.warn('offset commit failed (progress is kept in ClickHouse)', { error: err instanceof Error ? err.message : String(err) });
      });
      p.positions.clear();
    }
  }

  /**
   * Whether an insert of `rows` is in ClickHouse: its rows land together, so
   * the last row's offset being below its partition's stored progress says so.
   */
  private async landed(stream: Stream, rows: readonly KafkaColumns[]): Promise<boolean> {
    const last = rows[rows.length - 1];
    return last !== undefined && (await stream.progress(last.kafka_partition)) > BigInt(last.kafka_offset);
  }

  /**
   * Whether the group has committed every partition of its topics up to the
   * high watermark: nothing is left for any member, including partitions a
   * killed member still holds until its session times out.
   */
  async caughtUp(): Promise<boolean> {
    const admin = this.deps.kafka.admin();
    await admin.connect();
    try {
      const topics = this.streams.map((s) => s.topic);
      const committed = await admin.fetchOffsets({ groupId: this.deps.config.kafka.groupId, topics });
      for (const topic of topics) {
        const high = await admin.fetchTopicOffsets(topic);
        const mine = committed.find((c) => c.topic === topic);
        for (const p of high) {
          const c = mine?.partitions.find((x) => x.partition === p.partition);
          const at = c && Number(c.offset) >= 0 ? BigInt(c.offset) : BigInt(p.low);
          if (at < BigInt(p.high)) return false;
        }
      }
      return true;
    } finally {
      await admin.disconnect();
    }
  }

  /** Rows and dead letters waiting for a flush. */
  get buffered(): number {
    return rowCount(this.pending) + this.pending.deadLetters.length;
  }

  /**
   * Graceful stop: stop fetching, let the batch in hand finish, flush and
   * commit while still a member of the group (kafkajs commits only for a
   * running consumer), then leave the group.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.consumer.pause(this.streams.map((s) => ({ topic: s.topic })));
    const deadline = Date.now() + this.deps.config.kafka.sessionTimeoutMs;
    while (this.inFlight > 0 && Date.now() < deadline) await sleep(20);
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await this.flushIfDue(true);
        break;
      } catch (err) {
        this.deps.log.error('final flush failed; the records will be read again on restart', {
          attempt: attempt + 1,
          error: err instanceof Error ? err.message : String(err),
        });
        await sleep(500 * (attempt + 1));
      }
    }
    await this.consumer.disconnect();
    await this.producer.disconnect();
  }
}
