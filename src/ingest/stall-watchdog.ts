/**
 * The stall watchdog of `agentledger ingest`: a last line of defence, not a
 * fix. A consumer that stays a member of its group but makes no progress
 * while records wait (a client library stuck after a broker restart, a
 * flush that can never succeed) looks healthy to everything around it; the
 * watchdog notices, says why in one line, and stops the process so that its
 * supervisor starts a fresh one, which reads its state back from ClickHouse
 * and loses nothing (nothing past the durable rows was committed).
 *
 * Before that, once per stall, a cheaper remedy within the process: when no
 * batch is in hand (so ingest's own retries are not what waits) and records
 * wait, kafkajs's consumer is what is stuck (as it was between batches with
 * a dead coordinator cached, coordinator-watch.ts); the member leaves the
 * group and joins again with a fresh client state, as a restarted process
 * would.
 */
import { failureMessage, within } from '../errors/errors.js';

export interface StallWatchdogPorts {
  /** How long without progress, with records waiting, is a stall (ms). */
  readonly stallMs: number;
  readonly now: () => number;
  /** When ingest last made rows durable and committed them, or found nothing waiting. */
  readonly lastProgress: () => number;
  /** Nothing waits: the clock starts again from now. */
  readonly idle: () => void;
  /** Records waiting in this member's partitions (past the group's commit); rejects when Kafka does not answer. */
  readonly waiting: () => Promise<bigint>;
  /** The last failure a batch retried, if any (said with the stall). */
  readonly lastFailure: () => string | undefined;
  /** Seconds since progress, at every check (a gauge). */
  readonly observe: (secondsSinceProgress: number) => void;
  /** Called once, with the reason, when a stall is found. */
  readonly stalled: (why: string) => void;
  /** The remedy tried first, once per stall; none when absent. */
  readonly rejoin?: {
    /** How long without progress before it is tried (ms); below stallMs. */
    readonly afterMs: number;
    /** Whether a batch is in hand: then ingest's own retries are at work, and the remedy waits. */
    readonly batchInHand: () => boolean;
    /** When rows were last made durable: a stall ends only there (a join alone does not end it). */
    readonly lastDurable: () => number;
    /** Leaves the group and joins again with a fresh client, saying why. */
    readonly rejoin: (why: string) => Promise<void>;
    /** Told once per stall that the remedy is due but a batch is in hand (what an operator reads when the stall goes on). */
    readonly held?: (why: string) => void;
  };
}

/** Longest the lag check may take before Kafka counts as not answering. */
const CHECK_TIMEOUT_MS = 10_000;

export class StallWatchdog {
  private fired = false;
  private checking = false;
  /** lastDurable() when the remedy was last tried: once per stall. */
  private rejoinedAt: number | undefined;
  /** lastDurable() when a held remedy was last said: once per stall. */
  private heldAt: number | undefined;

  constructor(private readonly ports: StallWatchdogPorts) {}

  /** One check; a stall found is reported once. */
  async check(): Promise<void> {
    const { ports } = this;
    if (this.fired || this.checking) return;
    const since = ports.now() - ports.lastProgress();
    ports.observe(Math.max(0, Math.floor(since / 1000)));
    const remedy = ports.rejoin;
    // The remedy is due once per stall; a batch in hand holds it back (its own retries are at work).
    const remedyDue = (elapsed: number): boolean => remedy !== undefined && elapsed >= remedy.afterMs && this.rejoinedAt !== remedy.lastDurable();
    const rejoinDue = (elapsed: number): boolean => remedyDue(elapsed) && remedy?.batchInHand() === false;
    if (remedy?.held !== undefined && remedyDue(since) && remedy.batchInHand() && this.heldAt !== remedy.lastDurable()) {
      this.heldAt = remedy.lastDurable();
      remedy.held(`no rows made durable for ${Math.floor(since / 1000)} s with a batch in hand: its own retries are at work, so no rejoin`);
    }
    if (since < ports.stallMs && !rejoinDue(since)) return;
    this.checking = true;
    try {
      let waiting: bigint | undefined;
      let unanswered = '';
      try {
        waiting = await within(ports.waiting(), CHECK_TIMEOUT_MS, 'the lag check');
      } catch (err) {
        unanswered = failureMessage(err, 300);
      }
      if (waiting === 0n) {
        ports.idle();
        // Nothing waits: the stall, if any, is over, and so is its one try of the remedy.
        this.rejoinedAt = undefined;
        return;
      }
      // Progress may have come while the check ran.
      const now = ports.now() - ports.lastProgress();
      const what = waiting !== undefined ? `${waiting} record(s) wait in this member's partitions` : `Kafka did not answer the lag check (${unanswered})`;
      if (now < ports.stallMs) {
        if (remedy !== undefined && rejoinDue(now)) {
          this.rejoinedAt = remedy.lastDurable();
          // Not awaited: a rejoin that hangs on the stuck client must not
          // hold the checks back, or the exit would never come.
          void remedy.rejoin(`no rows made durable for ${Math.floor(now / 1000)} s while ${what}, and no batch in hand`).catch(() => undefined);
        }
        return;
      }
      this.fired = true;
      const failure = ports.lastFailure();
      ports.stalled(`no rows made durable for ${Math.floor(now / 1000)} s while ${what}${failure ? `; last failure: ${failureMessage(failure, 300)}` : ''}`);
    } finally {
      this.checking = false;
    }
  }

  /** Checks every `everyMs` until stopped; the timer does not keep the process alive. */
  start(everyMs = Math.min(5_000, Math.max(250, Math.floor(this.ports.stallMs / 4)))): () => void {
    const timer = setInterval(() => void this.check(), everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }
}
