/**
 * Every BullMQ queue of agentledger, its job names, payload schemas and
 * default job options, in one place (the shape of Langfuse's queues.ts):
 * producers and workers import them from here, never spell a name twice.
 */
import { z } from 'zod';

/** The job states a queue's depth is told in (metrics, `doctor`). */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed'] as const;

/** The rollups queue: one repeatable sweep (migration 0013, src/rollups). */
export const ROLLUPS_QUEUE = 'rollups';
export const SWEEP_JOB = 'sweep';
/** The scheduler that adds a sweep every AGENTLEDGER_ROLLUP_SWEEP_MS. */
export const SWEEP_SCHEDULER = 'rollup-sweep';

/** A sweep needs nothing but the database: what it does is read from the watermarks. */
export const sweepPayload = z.object({}).strict();

/**
 * A failed sweep is not retried: the next scheduled one redoes its work
 * (sweeps are idempotent, and start from the last one that finished).
 * Finished jobs are kept for a while for BullMQ dashboards, not forever.
 */
export const ROLLUP_JOB_OPTIONS = {
  attempts: 1,
  removeOnComplete: { count: 100 },
  removeOnFail: { count: 1000 },
} as const;

/**
 * Every worker's lock on its job: renewed every half of lockDuration while
 * the job runs; a worker killed mid-job stops renewing, and another
 * worker's stalled check (every stalledInterval) hands the job on once the
 * lock lapsed: within lockDuration + 2 x stalledInterval, 10 s, instead of
 * BullMQ's default 30 s lock and 30 s check (about a minute). A job handed
 * on while its first worker still runs it (a process frozen past its lock)
 * is safe: a rollup sweep holds a lease of its own (src/jobs/lease.ts), an
 * alert state steps by compare-and-set.
 */
export const WORKER_LOCK_OPTIONS = { lockDuration: 5000, stalledInterval: 2500, maxStalledCount: 1 } as const;

/**
 * The alert deliveries queue: one job per notification (src/alerts), its id
 * the transition's key, so two workers that reach the same transition add
 * one job, and a retry is the same job.
 */
export const ALERT_DELIVERIES_QUEUE = 'alert-deliveries';
export const DELIVER_JOB = 'deliver';

/**
 * A receiver that is down is retried with exponential backoff (1, 2, 4 … s:
 * about 4 min over 8 attempts); one that keeps failing ends in the failed
 * set, kept for `agentledger alerts` to show. Delivered jobs are kept a week:
 * while a job is kept, adding its id again is a no-op, so a transition seen
 * again within that time is not delivered twice.
 */
export const DELIVERY_JOB_OPTIONS = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 7 * 24 * 3600 },
  removeOnFail: false,
} as const;

/** The alerts queue: one repeatable sweep evaluating every rule (src/alerts/sweep.ts). */
export const ALERTS_QUEUE = 'alerts';
export const ALERT_SWEEP_JOB = 'alert-sweep';
/** The scheduler that adds an alert sweep every AGENTLEDGER_ALERT_SWEEP_MS. */
export const ALERT_SWEEP_SCHEDULER = 'alert-sweep';
export const alertSweepPayload = z.object({}).strict();

/**
 * An alert sweep or evaluation is not retried either: the next sweep looks at
 * the same loops again (their news stay until evaluated, a sweep starts from
 * its cursor), and every alert state steps by compare-and-set.
 */
export const ALERT_JOB_OPTIONS = {
  attempts: 1,
  removeOnComplete: { count: 100 },
  removeOnFail: { count: 1000 },
} as const;

/**
 * An evaluation of the loops that flushes touched, asked for by `ingest`
 * after their rows are durable (src/alerts/news.ts): the alerts that need no
 * clock (a Stuck finish, convergence warnings, a broken chain, a human
 * request, sub-agent outcomes) are raised within seconds instead of at the
 * next sweep. Its own queue, ALERT_EVALUATIONS_QUEUE, with its own worker:
 * a long sweep (a backlog of loops) never holds a fresh evaluation back. An
 * evaluation beside a sweep is safe: each alert state steps by
 * compare-and-set (src/alerts/transitions.ts), so the two never notify twice.
 *
 * The loops are not in the job: they gather in a Redis set until a job takes
 * them, and the job is deduplicated (one waiting, one running at most), so
 * however fast ingest flushes, the queue holds at most two evaluations and
 * each takes everything gathered since the last.
 */
export const ALERT_EVALUATE_JOB = 'alert-evaluate';
/** The queue of ALERT_EVALUATE_JOB (an older ingest's evaluations in ALERTS_QUEUE are still run). */
export const ALERT_EVALUATIONS_QUEUE = 'alert-evaluations';
/** At most this many loops per evaluation; a job that leaves more asks for the next. */
export const EVALUATE_MAX_LOOPS = 5000;
export const alertEvaluatePayload = z.object({}).strict();
export const EVALUATE_JOB_OPTIONS = {
  ...ALERT_JOB_OPTIONS,
  deduplication: { id: ALERT_EVALUATE_JOB, keepLastIfActive: true },
} as const;
