/**
 * What every job processor of `agentledger worker` shares: one metrics
 * wrapper (count and time each job by name), the stop signal, and the hand
 * back of a job stopped half-way.
 */
import { WaitingError, type Job } from 'bullmq';
import type { Logger } from '../observability/logger.js';
import type { WorkerMetrics } from '../observability/metrics.js';

export interface JobContext {
  readonly log: Logger;
  readonly metrics: WorkerMetrics;
  /** Aborted on SIGTERM: every job in hand stops at its next step. */
  readonly signal: AbortSignal;
  /** Runs one job's work, counted (done, failed) and timed by its name. */
  measured<T>(job: string, work: () => Promise<T>): Promise<T>;
  /**
   * A job stopped half-way because this worker is stopping goes back to the
   * waiting list, not to the failed set: the next worker takes it up at once
   * and goes on from what it left (a rollup sweep from its watermark and
   * committed hours, an alert sweep from its cursor).
   */
  handBack(job: Job, token: string | undefined, name: string): Promise<never>;
}

export function jobContext(log: Logger, metrics: WorkerMetrics, signal: AbortSignal): JobContext {
  return {
    log,
    metrics,
    signal,
    async measured(job, work) {
      const end = metrics.jobSeconds.startTimer({ job });
      try {
        const r = await work();
        metrics.jobs.inc({ job, result: 'done' });
        metrics.lastDone.setToCurrentTime({ job });
        return r;
      } catch (err) {
        metrics.jobs.inc({ job, result: 'failed' });
        throw err;
      } finally {
        end();
      }
    },
    async handBack(job, token, name) {
      metrics.jobs.inc({ job: name, result: 'handed-back' });
      if (token !== undefined) await job.moveToWait(token);
      log.info('job handed back to the queue: this worker is stopping', { job: name });
      throw new WaitingError();
    },
  };
}
