/**
 * Step 4 of ingest (src/ingest/ingestor.ts): a batch's work retried until it
 * succeeds, with heartbeats on a timer, or abandoned when retrying cannot
 * help (a stop, a lost membership, a runner kafkajs stopped, a failure of
 * kind content or fatal).
 */
import type { EachBatchPayload } from 'kafkajs';
import { asError, failureMessage, within } from '../observability/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { failureKind, membershipError } from './failures.js';

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
  readonly onHeartbeatFailed: () => void;
  /** The wait between tries; a timer by default. */
  readonly sleep?: (ms: number) => Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class BatchRetry {
  constructor(private readonly deps: RetryDeps) {}

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
  async untilDone(
    { heartbeat, isRunning }: Pick<EachBatchPayload, 'heartbeat' | 'isRunning'>,
    at: Record<string, unknown>,
    work: () => Promise<void>,
  ): Promise<void> {
    const { log, metrics, sessionTimeoutMs } = this.deps;
    const beat = Math.max(500, Math.floor(sessionTimeoutMs / 10));
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
          this.deps.onRetry(failureMessage(failure));
          const kind = failureKind(failure);
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
        this.deps.onHeartbeatFailed();
      });
    }, every);
    try {
      await work();
    } finally {
      clearInterval(timer);
    }
    if (failure !== undefined) throw failure;
    await within(heartbeat(), this.deps.sessionTimeoutMs, 'heartbeat');
  }
}
