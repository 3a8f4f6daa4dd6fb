/**
 * Alert notifications through BullMQ (issue 11, "Delivery"): enqueued once
 * per transition (the job id is the transition's key), posted by a worker
 * (webhook.ts), retried with backoff by the queue, and left in the failed set
 * when the receiver never takes them. Thin on purpose: the payload is checked
 * against the notice schema, the rest is BullMQ's. What no retry can change
 * (a payload that is not a notice, a 4xx answer other than 408 and 429)
 * fails the job at once, with BullMQ's UnrecoverableError.
 */
import { UnrecoverableError, type Job, type JobsOptions, type Queue } from 'bullmq';
import { DELIVER_JOB, DELIVERY_JOB_OPTIONS } from '../jobs/queues.js';
import { failureMessage, statedKind } from '../errors/errors.js';
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

/**
 * BullMQ's UnrecoverableError (the job fails now, its other attempts
 * unused) with `message` and `cause`. BullMQ recognises it by its class or
 * its name, so it is not subclassed.
 */
function unrecoverable(message: string, cause: unknown): UnrecoverableError {
  return Object.assign(new UnrecoverableError(message), { cause });
}

/**
 * The processor of the deliveries queue: one POST per attempt, to the
 * webhook or nowhere. A payload that is not a notice, and an answer no
 * retry changes (postNotice's FatalError), end the job at once; anything
 * else is thrown as it is, for the queue to retry.
 */
export function deliveryProcessor(hook: Webhook | undefined): (job: Job) => Promise<void> {
  return async (job) => {
    const parsed = notice.safeParse(job.data);
    if (!parsed.success) throw unrecoverable(`not a notice: ${failureMessage(parsed.error)}`, parsed.error);
    // No webhook configured: the transition is recorded and listed, nothing is sent.
    if (hook === undefined) return;
    try {
      await postNotice(hook, parsed.data);
    } catch (err) {
      if (statedKind(err) === 'fatal') throw unrecoverable(failureMessage(err), err);
      throw err;
    }
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
