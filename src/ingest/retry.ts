/**
 * Step 4 of ingest (src/ingest/ingestor.ts): a batch's work retried until it
 * succeeds, with heartbeats on a timer, or abandoned when retrying cannot
 * help (a stop, a lost membership, a runner kafkajs stopped, a failure of
 * kind content or fatal).
 */
import type { BatchPayload } from '../kafka/contract.js';
import { CoordinatorLost } from '../kafka/errors.js';
import { asError, failureMessage, kindOf, ownershipLost, TimeoutError, within } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';

export interface RetryDeps {
  readonly log: Logger;
  readonly metrics: Metrics;
  /** The group session timeout: heartbeats go ten times as often; a heartbeat or commit waits at most this long. */
  readonly sessionTimeoutMs: number;
  /** Whether ingest is stopping: a failure then ends the batch instead of being retried. */
  readonly stopping: () => boolean;
  /** Told every failure that is retried (what the stall watchdog says last). */
  readonly onRetry: (message: string) => void;
  /** Told a failure no retry can fix, before it is thrown. */
  readonly onFatal: (err: Error) => void;
  /** A heartbeat failed: the member may have lost its partitions (no timer flush until it joins again). */
  readonly onHeartbeatFailed: (err: unknown) => void;
  /** The wait between tries; a timer by default. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** The clock of the coordinator's silence (ms); Date.now by default. */
  readonly now?: () => number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A request to Kafka that got no answer in time, in or behind `err`. Inside
 * a batch every such request goes to the group's coordinator (the offset
 * commits, the heartbeat after the work).
 */
function kafkaTimeout(err: unknown): TimeoutError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof TimeoutError && e.from === 'Kafka') return e;
  }
  return undefined;
}

export class BatchRetry {
  /**
   * When a heartbeat last reached the coordinator (ms): from the start of the
   * batch in hand, or, once a batch gave up on a silent coordinator, from
   * that silence on (the batches kafkajs still hands out before it joins
   * again give up at their first failure).
   */
  private lastBeat = 0;
  private coordinatorSilent = false;

  constructor(private readonly deps: RetryDeps) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  private beaten(): void {
    this.lastBeat = this.now();
    this.coordinatorSilent = false;
  }

  /**
   * Runs `work` until it succeeds, retrying transient failures with backoff.
   * The group is kept informed with heartbeats on a timer, during the work
   * and between tries, so a long read-back or outage does not get the member
   * expelled; a heartbeat that fails while waiting (the broker restarting) is
   * one more transient failure, met by the next try. The batch is abandoned
   * when this member lost its partitions (step 5), when kafkajs stopped the
   * runner that gave it (it restarts with a new generation), when no
   * heartbeat has reached the coordinator for a session timeout, or the
   * coordinator left the batch's requests (its commits) unanswered that long
   * (CoordinatorLost: kafkajs then joins again, which finds the coordinator
   * afresh), or on a failure that retrying cannot fix (reported through
   * onFatal).
   *
   * Backpressure is the handler itself: kafkajs fetches a partition's next
   * batch only once eachBatch returns. Consumption is never paused through
   * kafkajs here: a pause outlives the batch that set it, and one left behind
   * by a failure on the way out stalled ingest for good after a broker
   * restart (member alive, heartbeats answered, every partition paused).
   */
  async untilDone(
    { heartbeat, isRunning }: Pick<BatchPayload, 'heartbeat' | 'isRunning'>,
    at: Record<string, unknown>,
    work: () => Promise<void>,
  ): Promise<void> {
    const { log, metrics, sessionTimeoutMs } = this.deps;
    const beat = Math.max(500, Math.floor(sessionTimeoutMs / 10));
    let failures = 0;
    // Since when the coordinator has left this batch's requests unanswered
    // (an offset commit that timed out), whatever the heartbeats say: kafkajs
    // 2.2.4 resolves a heartbeat without sending it (no member id while it
    // joins, or within its interval), and its offset manager sends commits
    // to the coordinator of the last sync even once that broker is gone. Seen
    // on the cluster: the coordinator SIGKILLed, a batch's commits timed out
    // for two minutes while its heartbeats resolved.
    let unansweredSince: number | undefined;
    if (!this.coordinatorSilent) this.lastBeat = this.now();
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
          const timedOut = kafkaTimeout(failure);
          if (timedOut) unansweredSince ??= this.now() - timedOut.ms;
          const silent = this.now() - this.lastBeat;
          if (silent > sessionTimeoutMs) {
            this.coordinatorSilent = true;
            throw new CoordinatorLost(silent, failure);
          }
          const unanswered = unansweredSince === undefined ? 0 : this.now() - unansweredSince;
          if (unanswered > sessionTimeoutMs) {
            this.coordinatorSilent = true;
            throw new CoordinatorLost(unanswered, failure, 'no request of this batch answered by');
          }
          failures++;
          metrics.insertFailures.inc();
          this.deps.onRetry(failureMessage(failure));
          const kind = kindOf(failure);
          if (kind !== 'transient') {
            const error = asError(failure);
            log.error(kind === 'content' ? 'ClickHouse refused data that could not be traced to a record' : 'a failure that retrying cannot fix', {
              ...at,
              error: failureMessage(error),
            });
            this.deps.onFatal(error);
            throw error;
          }
          metrics.paused.set(1);
          const wait = Math.min(5_000, 250 * 2 ** Math.min(attempt, 5));
          log.warn('ClickHouse or Kafka failed; the batch waits and is retried', { ...at, attempt: attempt + 1, inMs: wait, error: failureMessage(failure) });
          try {
            await this.whileBeating(heartbeat, beat, () => (this.deps.sleep ?? sleep)(wait));
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
    if (this.deps.stopping()) throw failure;
    const lost = ownershipLost(failure);
    if (lost) throw lost;
    if (!isRunning()) throw new Error(`the consumer runner stopped (kafkajs restarts it); the batch is abandoned: ${failureMessage(failure)}`, { cause: failure });
  }

  /** Runs `work` with a heartbeat every `every` ms; a failed heartbeat fails it (once the work is over). */
  private async whileBeating(heartbeat: () => Promise<void>, every: number, work: () => Promise<void>): Promise<void> {
    let failure: Error | undefined;
    const timer = setInterval(() => {
      heartbeat().then(
        () => this.beaten(),
        (err: unknown) => {
          failure ??= asError(err);
          this.deps.onHeartbeatFailed(err);
        },
      );
    }, every);
    try {
      await work();
    } finally {
      clearInterval(timer);
    }
    if (failure !== undefined) throw failure;
    await within(heartbeat(), this.deps.sessionTimeoutMs, 'heartbeat');
    this.beaten();
  }
}
