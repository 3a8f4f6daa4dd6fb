/**
 * Alert evaluation per flushed batch (issue 11, "Evaluation"): `ingest`
 * hands over each flush's rows once they are durable, and this asks for an
 * evaluation of the loops among them that an alert rule without a clock
 * reads — a finish, a sub-agent report, a convergence warning, a human
 * request or answer, a broken chain link — never one job per event.
 *
 * Adds are coalesced: at most one is in flight, and adds are at least
 * `minGapMs` apart (AGENTLEDGER_ALERT_EVALUATE_GAP_MS), so a busy ingest
 * asks once per gap whatever its rate (the Redis commands per envelope stay
 * far below 0.01); the loops gather in Redis and the evaluation job is
 * deduplicated (news.ts), so the queue behind a slow worker holds two
 * evaluations at most. Redis being away costs ingest nothing: the add fails
 * fast, is said once per outage, and the loops are left to the next alert
 * sweep, which looks at every loop with news anyway.
 */
import type { Logger } from '../observability/logger.js';
import { failureMessage, within } from '../errors/errors.js';

/** Longest an add may take before its loops are left to the sweep. */
const ADD_TIMEOUT_MS = 10_000;

/** Envelope kinds a rule without a clock reads (stalls and waits are the sweep's). */
const LOOP_NEWS = new Set(['LoopFinished', 'SubAgentCompleted', 'ConvergenceWarning', 'HumanRequested', 'HumanResponded']);
/** Verdicts that break a chain the moment they are stored (a gap waits for its grace: the sweep's). */
const BROKEN = new Set(['mismatch', 'fork', 'regression', 'time_regression']);

/** What a flush's rows say the alerts must look at. */
export interface AlertNews {
  readonly loops: ReadonlySet<string>;
  /** Sub-agent outcomes were stored (the loop runtime's or craze's). */
  readonly rates: boolean;
}

/**
 * The news in one flush's rows: envelope rows (loop_id, kind_class, verdict)
 * or craze rows (subagent_change). Other rows carry none.
 */
export function newsOf(rows: readonly object[]): AlertNews {
  const loops = new Set<string>();
  let rates = false;
  for (const row of rows as readonly { loop_id?: unknown; kind_class?: unknown; verdict?: unknown; subagent_change?: unknown }[]) {
    // A record that could not be decoded says nothing a rule reads.
    if (row.verdict === 'malformed') continue;
    if (typeof row.loop_id === 'string') {
      if (LOOP_NEWS.has(row.kind_class as string) || BROKEN.has(row.verdict as string)) loops.add(row.loop_id);
      if (row.kind_class === 'SubAgentCompleted') rates = true;
    } else if (row.subagent_change === 'finished') {
      rates = true;
    }
  }
  return { loops, rates };
}

export class AlertTrigger {
  private loops = new Set<string>();
  private rates = false;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private lastAdd = 0;
  private away = false;
  /** Adds done, and adds that failed (their loops left to the sweep). */
  added = 0;
  failed = 0;

  /** `send` adds loops to the news and asks for an evaluation (news.ts addNews). */
  constructor(
    private readonly send: (loops: string[], rates: boolean) => Promise<void>,
    private readonly log: Logger,
    private readonly counted?: (result: 'queued' | 'failed', jobs: number) => void,
    private readonly minGapMs = 5000,
  ) {}

  /** A flush's rows are durable: note their news and add a job when due. */
  durable(rows: readonly object[]): void {
    const news = newsOf(rows);
    for (const loop of news.loops) this.loops.add(loop);
    this.rates ||= news.rates;
    this.schedule();
  }

  /** Adds what is noted now (no gap), and waits for the add in flight: before ingest exits. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
    if (this.loops.size > 0 || this.rates) await this.add();
  }

  private schedule(): void {
    if (this.timer !== undefined || this.inFlight !== undefined || (this.loops.size === 0 && !this.rates)) return;
    const wait = Math.max(0, this.lastAdd + this.minGapMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.inFlight = this.add().finally(() => {
        this.inFlight = undefined;
        this.schedule();
      });
    }, wait);
    this.timer.unref();
  }

  private async add(): Promise<void> {
    const loops = [...this.loops];
    const rates = this.rates;
    this.loops = new Set();
    this.rates = false;
    this.lastAdd = Date.now();
    try {
      // BullMQ waits for a Redis that was never reached: bounded here.
      await within(this.send(loops, rates), ADD_TIMEOUT_MS, 'alert evaluation', 'Redis');
      this.added++;
      this.counted?.('queued', 1);
      if (this.away) this.log.info('alert evaluations are queued again');
      this.away = false;
    } catch (err) {
      this.failed++;
      this.counted?.('failed', 1);
      if (!this.away) {
        this.log.warn('alert evaluation not queued (Redis unavailable?); the next alert sweep looks at these loops', { error: failureMessage(err) });
      }
      this.away = true;
    }
  }
}
