/**
 * What `doctor` says of the BullMQ queues: per queue its depth (jobs per
 * state), and whether a worker takes its scheduled sweeps. A sweep overdue by
 * far more than its interval means no worker runs (BullMQ's workers are what
 * move a due job on): the check fails, since nothing rolls up or alerts.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { ALERT_DELIVERIES_QUEUE, ALERT_EVALUATIONS_QUEUE, ALERT_SWEEP_SCHEDULER, ALERTS_QUEUE, QUEUE_STATES, ROLLUPS_QUEUE, SWEEP_SCHEDULER } from './queues.js';
import { redisFailure } from './redis.js';
/** How late a sweep may be before no worker is taken to run: two intervals and a minute (a long sweep delays the next). */
export const overdueAfterMs = (everyMs) => 2 * everyMs + 60_000;
/** One queue's line: its depth, and its scheduler's state at `now` (ms). */
export function queueReport(queue, counts, scheduler, now, scheduled) {
    const depth = QUEUE_STATES.map((s) => `${counts[s] ?? 0} ${s}`).join(', ');
    if (!scheduled)
        return { ok: true, text: `${queue}: ${depth}` };
    if (scheduler?.next === undefined || scheduler.every === undefined)
        return { ok: true, text: `${queue}: ${depth}; no worker has started yet` };
    const late = now - scheduler.next;
    if (late > overdueAfterMs(scheduler.every)) {
        return { ok: false, text: `${queue}: ${depth}; its sweep was due ${Math.round(late / 1000)} s ago: is agentledger worker running?` };
    }
    return { ok: true, text: `${queue}: ${depth}; next sweep ${late > 0 ? `due ${Math.round(late / 1000)} s ago` : `in ${Math.round(-late / 1000)} s`}` };
}
/** Every queue's report, read with one connection that gives up within seconds. */
export async function queueHealth(url, prefix, now = Date.now()) {
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000, retryStrategy: () => null, enableOfflineQueue: false });
    let cause;
    redis.on('error', (err) => (cause ??= err));
    try {
        await redis.connect().catch((err) => {
            throw new Error(redisFailure(url, cause ?? err));
        });
        const reports = [];
        for (const [name, scheduler] of [
            [ROLLUPS_QUEUE, SWEEP_SCHEDULER],
            [ALERTS_QUEUE, ALERT_SWEEP_SCHEDULER],
            [ALERT_EVALUATIONS_QUEUE, undefined],
            [ALERT_DELIVERIES_QUEUE, undefined],
        ]) {
            const queue = new Queue(name, { connection: redis, prefix });
            try {
                const counts = await queue.getJobCounts(...QUEUE_STATES);
                reports.push(queueReport(name, counts, scheduler === undefined ? undefined : await queue.getJobScheduler(scheduler), now, scheduler !== undefined));
            }
            finally {
                await queue.close();
            }
        }
        return reports;
    }
    finally {
        redis.disconnect();
    }
}
//# sourceMappingURL=health.js.map