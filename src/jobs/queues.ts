/**
 * Every BullMQ queue of agentledger, its job names, payload schemas and
 * default job options, in one place (the shape of Langfuse's queues.ts):
 * producers and workers import them from here, never spell a name twice.
 */
import { z } from 'zod';

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
