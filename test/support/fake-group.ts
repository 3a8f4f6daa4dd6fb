/**
 * A consumer group without Kafka, for driving the ingest loop
 * (src/ingest/ingestor.ts) in unit tests, the way kafkajs tests its runner
 * against a stubbed consumer group: a broker holds each partition's log and
 * the group's committed offsets; a member is one Ingestor's IngestEdges. The
 * test decides every step: which member fetches which partition, when the
 * group rebalances, when a member is expelled without knowing it (a zombie).
 * The coordinator's rules are kept: a commit from an expelled member or of an
 * old generation is refused as kafkaGroup() refuses it (OwnershipLost), a new
 * generation fetches from the committed offsets, a seek makes the batches
 * fetched before it stale.
 */
import type { IngestEdges } from '../../src/ingest/edges.js';
import type { BatchPayload, Committed, GroupListener, Position } from '../../src/kafka/contract.js';
import { OwnershipLost, ownershipLost, TransientError } from '../../src/errors/errors.js';
import { CoordinatorWatch } from '../../src/kafka/coordinator-watch.js';
import { kafkajsRejoinsOn, membershipError } from '../../src/kafka/errors.js';
import type { DeadLetter } from '../../src/pipeline/stream.js';

/** A record in a partition's log. */
export interface LogRecord {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

/** What kafkaGroup() throws when the coordinator's broker is gone: no answer at all (kafkajs's retriable error, typed transient). */
const coordinatorGone = (): Error =>
  new TransientError('Connection error: connect ECONNREFUSED 127.0.0.1:9092', {
    cause: Object.assign(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:9092'), { name: 'KafkaJSConnectionError', retriable: true }),
  });

/** What kafkaGroup() throws for the coordinator's refusal of this member: OwnershipLost, kafkajs's answer (its type) as cause. */
const coordinatorRefusal = (type: string): Error =>
  new OwnershipLost(`The coordinator refused this member (${type})`, {
    cause: Object.assign(new Error(`The coordinator refused this member (${type})`), { name: 'KafkaJSProtocolError', type, retriable: false }),
    code: type,
  });

const tpOf = (topic: string, partition: number): string => `${topic}:${partition}`;

export class FakeBroker {
  /** Per "topic:partition", its records; a record's offset is its index. */
  readonly logs = new Map<string, LogRecord[]>();
  /** The group's committed offsets per "topic:partition". */
  readonly committed = new Map<string, Committed>();
  /** Every dead letter sent, by any member. */
  readonly deadLetters: DeadLetter[] = [];
  /** The group's generation: a member of another one has its commits refused. */
  generation = 0;

  produce(topic: string, partition: number, records: readonly LogRecord[]): void {
    const tp = tpOf(topic, partition);
    const log = this.logs.get(tp) ?? [];
    this.logs.set(tp, log);
    log.push(...records);
  }

  /** A member; `watch`: its coordinator watch's session timeout and clock (as kafkaGroup() keeps one; none without). */
  member(id: string, watch?: { readonly silenceMs: number; readonly now: () => number }): FakeMember {
    return new FakeMember(this, id, watch);
  }

  /**
   * A rebalance: every member named is told it started, then joins the new
   * generation with its partitions (fetching each from its committed
   * offset). A member not named is not told, and is expelled (a zombie).
   */
  rebalance(assignments: readonly (readonly [FakeMember, Readonly<Record<string, readonly number[]>>])[]): void {
    this.generation++;
    for (const [member] of assignments) member.revoke();
    for (const [member, assignment] of assignments) member.join(this.generation, assignment);
  }

  /** The coordinator expels a member (its session timed out while it was paused): it is not told. */
  expel(member: FakeMember): void {
    member.expelled = true;
    this.generation++;
  }
}

export class FakeMember implements IngestEdges {
  listener: GroupListener | undefined;
  private eachBatch: ((payload: BatchPayload) => Promise<void>) | undefined;
  /** The generation this member last joined, and whether the coordinator expelled it since. */
  generation = -1;
  expelled = false;
  assignment: Readonly<Record<string, readonly number[]>> = {};
  /** Next offset each owned partition is fetched from. */
  readonly positions = new Map<string, number>();
  /** Bumped by every seek and join of a partition: a batch fetched before is stale. */
  private readonly epochs = new Map<string, number>();
  /** Every commit this member made that the coordinator accepted. */
  readonly commits: Position[][] = [];
  /** Queries settled after a lost or failed answer. */
  readonly settled: string[] = [];
  paused = false;
  /** While set, the coordinator this member talks to is gone: its commits fail without an answer. */
  coordinatorDown = false;
  /** While set, the heartbeats of a batch get no answer either (as kafkajs's heartbeat to a dead coordinator). */
  heartbeatsLost = false;
  /** Called at each heartbeat of a batch, before it is answered (a test's clock). */
  beforeHeartbeat: () => void = () => undefined;
  /** Times the member asked to leave the group and join again (the test decides when it joins). */
  rejoins = 0;

  /** Joined, and no rebalance, rejoin or stop under way: what the coordinator watch asks before it leaves and joins again. */
  private holding = false;
  private stopping = false;
  private readonly watch: CoordinatorWatch | undefined;
  private watchTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly broker: FakeBroker,
    readonly id: string,
    watch?: { readonly silenceMs: number; readonly now: () => number },
  ) {
    // The adapter's coordinator watch (src/kafka/group.ts), over this fake's requests.
    this.watch = watch && new CoordinatorWatch({ ...watch, settled: () => this.holding, rejoin: (why) => this.rejoin(why) });
  }

  /** A request to the coordinator, told to the watch as kafkaGroup() tells it. */
  private async toCoordinator(request: () => Promise<void>): Promise<void> {
    try {
      await request();
      this.watch?.answered();
    } catch (err) {
      if (!ownershipLost(err)) this.watch?.failed(err);
      throw err;
    }
  }

  join(generation: number, assignment: Readonly<Record<string, readonly number[]>>): void {
    this.generation = generation;
    this.expelled = false;
    this.assignment = assignment;
    this.positions.clear();
    for (const [topic, partitions] of Object.entries(assignment)) {
      for (const partition of partitions) {
        const tp = tpOf(topic, partition);
        const committed = this.broker.committed.get(tp);
        this.positions.set(tp, committed ? Number(committed.offset) : 0);
        this.epochs.set(tp, (this.epochs.get(tp) ?? 0) + 1);
      }
    }
    this.holding = !this.stopping;
    this.watch?.answered();
    this.listener?.joined(this.id, generation, assignment);
  }

  /** A rebalance starts: nothing is this member's until it joins. */
  revoke(): void {
    this.holding = false;
    this.listener?.rebalancing();
  }

  /**
   * Fetches up to `max` records of a partition this member owns from its
   * position and hands them to eachBatch, as kafkajs's runner does: the
   * next fetch starts after the offset resolved, or where a seek put it.
   * Returns how many records were fetched, and what eachBatch threw (the
   * runner logs it and fetches again, or rejoins after a membership error).
   */
  async fetch(topic: string, partition: number, max: number): Promise<{ fetched: number; error?: unknown }> {
    const tp = tpOf(topic, partition);
    const from = this.positions.get(tp);
    const log = this.broker.logs.get(tp) ?? [];
    if (from === undefined || this.eachBatch === undefined || this.paused) return { fetched: 0 };
    const records = log.slice(from, from + max);
    if (records.length === 0) return { fetched: 0 };
    const epoch = this.epochs.get(tp);
    const stale = (): boolean => this.epochs.get(tp) !== epoch;
    let resolved: number | undefined;
    const messages = records.map((r, i) => ({ offset: String(from + i), timestamp: '1764504000000', key: r.key, value: r.value }));
    const payload: BatchPayload & { commitOffsetsIfNecessary(): Promise<void> } = {
      batch: {
        topic,
        partition,
        highWatermark: String(log.length),
        messages,
        firstOffset: () => messages[0]?.offset ?? null,
        lastOffset: () => messages[messages.length - 1]!.offset,
      },
      resolveOffset: (offset) => {
        if (!stale()) resolved = Number(offset);
      },
      // kafkajs sends a heartbeat only once its interval has passed: most calls answer without asking the coordinator.
      heartbeat: () =>
        this.toCoordinator(() => {
          this.beforeHeartbeat();
          return this.heartbeatsLost ? Promise.reject(coordinatorGone()) : Promise.resolve();
        }),
      // Auto-commit is off: kafkajs's own commit never runs for ingest.
      commitOffsetsIfNecessary: () => Promise.resolve(),
      isRunning: () => true,
      isStale: stale,
    };
    let error: unknown;
    try {
      await this.eachBatch(payload);
    } catch (err) {
      error = err;
      // As kafkaGroup() does: kafkajs joins again on a lost membership, and the member is told first.
      const lost = membershipError(err);
      if (lost !== undefined && kafkajsRejoinsOn(lost)) this.revoke();
    }
    if (!stale() && resolved !== undefined) this.positions.set(tp, resolved + 1);
    return error === undefined ? { fetched: records.length } : { fetched: records.length, error };
  }

  ensureTopics(): Promise<void> {
    return Promise.resolve();
  }
  connect(): Promise<void> {
    return Promise.resolve();
  }
  listen(listener: GroupListener): void {
    this.listener = listener;
  }
  run(_topics: readonly string[], eachBatch: (payload: BatchPayload) => Promise<void>): Promise<void> {
    this.eachBatch = eachBatch;
    // As kafkaGroup(): the watch checks on a timer.
    if (this.watch) this.watchTimer = setInterval(() => void this.watch?.check(), 50);
    return Promise.resolve();
  }
  /** As kafkaGroup(): nothing while no generation is held; else the listener is told `lost`, and the member leaves (the test decides when it joins). */
  rejoin(why: string): Promise<void> {
    if (!this.holding) return Promise.resolve();
    this.holding = false;
    this.listener?.lost(why);
    this.rejoins++;
    return Promise.resolve();
  }
  commit(positions: readonly Position[]): Promise<void> {
    return this.toCoordinator(() => {
      if (this.coordinatorDown) return Promise.reject(coordinatorGone());
      if (this.expelled) return Promise.reject(coordinatorRefusal('UNKNOWN_MEMBER_ID'));
      if (this.generation !== this.broker.generation) return Promise.reject(coordinatorRefusal('ILLEGAL_GENERATION'));
      for (const p of positions) this.broker.committed.set(tpOf(p.topic, p.partition), { offset: p.offset, metadata: p.metadata ?? null });
      this.commits.push([...positions]);
      return Promise.resolve();
    });
  }
  seek(topic: string, partition: number, offset: string): void {
    const tp = tpOf(topic, partition);
    this.positions.set(tp, Number(offset));
    this.epochs.set(tp, (this.epochs.get(tp) ?? 0) + 1);
  }
  pause(): void {
    this.paused = true;
    this.stopping = true;
    this.holding = false;
  }
  sendDeadLetters(letters: readonly DeadLetter[]): Promise<void> {
    this.broker.deadLetters.push(...letters);
    return Promise.resolve();
  }
  settle(queryId: string): Promise<void> {
    this.settled.push(queryId);
    return Promise.resolve();
  }
  committedOffsets(topic: string): Promise<Map<number, Committed>> {
    const found = new Map<number, Committed>();
    for (const [tp, c] of this.broker.committed) {
      const at = tp.lastIndexOf(':');
      if (tp.slice(0, at) === topic) found.set(Number(tp.slice(at + 1)), { ...c });
    }
    return Promise.resolve(found);
  }
  uncommitted(topics: readonly string[], owned?: Readonly<Record<string, readonly number[]>>): Promise<bigint> {
    let waiting = 0n;
    for (const [tp, log] of this.broker.logs) {
      const at = tp.lastIndexOf(':');
      const topic = tp.slice(0, at);
      const partition = Number(tp.slice(at + 1));
      if (!topics.includes(topic) || (owned !== undefined && !owned[topic]?.includes(partition))) continue;
      waiting += BigInt(log.length - Number(this.broker.committed.get(tp)?.offset ?? 0));
    }
    return Promise.resolve(waiting);
  }
  disconnect(): Promise<void> {
    this.stopping = true;
    this.holding = false;
    clearInterval(this.watchTimer);
    return Promise.resolve();
  }
}
