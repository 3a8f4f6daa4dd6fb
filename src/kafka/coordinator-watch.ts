/**
 * The coordinator watch of `agentledger ingest`: a member whose group
 * coordinator has stopped answering joins the group again, finding the
 * coordinator afresh.
 *
 * kafkajs 2.2.4 looks the group's coordinator up only when it joins; it
 * keeps heartbeating and committing to the broker it found, even once that
 * broker is dead and another one coordinates the group
 * (tulios/kafkajs#1779). Inside a batch, BatchRetry gives up on a silent
 * coordinator (CoordinatorLost, retry.ts) and kafkajs joins again. Between
 * batches nothing of ingest runs: a commit after a flush that failed on the
 * dead broker leaves the member fenced (no timer flush) while kafkajs's own
 * loop heartbeats to that broker, so the member can wait until the stall
 * watchdog exits the process. This watch covers that gap from outside the
 * loop (in the suite it fired after a broker restart on the single node and
 * a commit to a dead coordinator on the cluster, and nowhere else).
 *
 * The rule: once a request of this member to the coordinator failed (a
 * commit, a heartbeat) and nothing the coordinator acknowledged (a
 * heartbeat, a commit, a join) came for a session timeout since, the group
 * has expelled this member whatever it holds; it leaves the consumer and
 * runs it again, which finds the coordinator afresh. That is a lost
 * membership like a rebalance: the buffer is dropped before, the next owner
 * of each partition reads its state back from ClickHouse, nothing committed
 * moves. Failures alone never fire it while the coordinator still answers,
 * and neither does a silence without a failure (a join that waits for the
 * other members), nor a member that is between generations (kafkajs is
 * joining already, after a rebalance, a consumer restart, or a batch that
 * gave up as CoordinatorLost: a stop of ours in the middle of kafkajs's own
 * join once left its fetchers spinning, src/kafka/runner-stop.ts).
 */
import { failureMessage } from '../errors/errors.js';

export interface CoordinatorWatchPorts {
  /** How long a failed coordinator stays silent before the member joins again (ms): the session timeout. */
  readonly silenceMs: number;
  readonly now: () => number;
  /** Whether the member holds a generation (joined, no rebalance or restart under way). */
  readonly settled: () => boolean;
  /** Leaves the consumer and runs it again; called once per silence, with why. */
  readonly rejoin: (why: string) => Promise<void>;
}

export class CoordinatorWatch {
  /** When a coordinator request first failed since its last answer. */
  private failedSince: number | undefined;
  private lastFailure = '';
  private rejoining = false;

  constructor(private readonly ports: CoordinatorWatchPorts) {}

  /** A request to the coordinator failed without its answer (a connection refused, a time-out). */
  failed(err: unknown): void {
    this.failedSince ??= this.ports.now();
    this.lastFailure = failureMessage(err, 300);
  }

  /** The coordinator answered (a heartbeat or commit acknowledged, a join). */
  answered(): void {
    this.failedSince = undefined;
  }

  /** One check: joins again when the coordinator has been silent too long. Resolves when a rejoin it started is over. */
  async check(): Promise<void> {
    const { ports } = this;
    if (this.rejoining || this.failedSince === undefined || !ports.settled()) return;
    const silent = ports.now() - this.failedSince;
    if (silent < ports.silenceMs) return;
    this.rejoining = true;
    this.failedSince = undefined;
    try {
      await ports.rejoin(`the group coordinator has not answered for ${silent} ms, longer than the session timeout (last failure: ${this.lastFailure})`);
    } finally {
      this.rejoining = false;
    }
  }

  /** Whether a rejoin it started is under way. */
  get busy(): boolean {
    return this.rejoining;
  }
}
