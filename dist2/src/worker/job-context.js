/**
 * What every job processor of `agentledger worker` shares: one metrics
 * wrapper (count and time each job by name), the stop signal, and the hand
 * back of a job stopped half-way.
 */
import { WaitingError } from 'bullmq';
export function jobContext(log, metrics, signal) {
    return {
        log,
        metrics,
        signal,
        async measured(job, work) {
            const end = metrics.jobSeconds.startTimer({ job });
            try {
                const r = await work();
                metrics.jobs.inc({ job, result: 'done' });
                return r;
            }
            catch (err) {
                metrics.jobs.inc({ job, result: 'failed' });
                throw err;
            }
            finally {
                end();
            }
        },
        async handBack(job, token, name) {
            metrics.jobs.inc({ job: name, result: 'handed-back' });
            if (token !== undefined)
                await job.moveToWait(token);
            log.info('job handed back to the queue: this worker is stopping', { job: name });
            throw new WaitingError();
        },
    };
}
//# sourceMappingURL=job-context.js.map