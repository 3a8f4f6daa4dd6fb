/**
 * Alert notifications through BullMQ (issue 11, "Delivery"): enqueued once
 * per transition (the job id is the transition's key), posted by a worker
 * (webhook.ts), retried with backoff by the queue, and left in the failed set
 * when the receiver never takes them. Thin on purpose: the payload is checked
 * against the notice schema, the rest is BullMQ's.
 */
import type { Job, JobsOptions, Queue } from 'bullmq';
import { DELIVER_JOB, DELIVERY_JOB_OPTIONS } from '../jobs/queues.js';
import { notice, postNotice, type Notice, type Webhook } from './webhook.js';

/**
 * Adds a notice's delivery. Adding the same transition again (another
 * worker, a retried evaluation) while its job is kept does nothing.
 * `options` overrides the default job options (tests shorten the backoff).
 */
export async function enqueueNotice(queue: Queue, n: Notice, options: Omit<JobsOptions, 'jobId'> = {}): Promise<void> {
  await enqueueNotices(queue, [n], options);
}

/** enqueueNotice for several notices, in one round trip (BullMQ's addBulk: one MULTI). */
export async function enqueueNotices(queue: Queue, ns: readonly Notice[], options: Omit<JobsOptions, 'jobId'> = {}): Promise<void> {
  if (ns.length === 0) return;
  await queue.addBulk(ns.map((n) => ({ name: DELIVER_JOB, data: notice.parse(n), opts: { ...DELIVERY_JOB_OPTIONS, ...options, jobId: n.key } })));
}

/** The processor of the deliveries queue: one POST per attempt, to the webhook or nowhere. */
export function deliveryProcessor(hook: Webhook | undefined): (job: Job) => Promise<void> {
  return async (job) => {
    const n = notice.parse(job.data);
    // No webhook configured: the transition is recorded and listed, nothing is sent.
    if (hook !== undefined) await postNotice(hook, n);
  };
}

export interface FailedDelivery {
  readonly notice: Notice;
  readonly attempts: number;
  readonly reason: string;
}

/** The deliveries that ran out of attempts, newest first. */
export async function failedDeliveries(queue: Queue, limit = 100): Promise<FailedDelivery[]> {
  const jobs = await queue.getFailed(0, limit - 1);
  return jobs.map((job) => ({ notice: notice.parse(job.data), attempts: job.attemptsMade, reason: job.failedReason }));
}
