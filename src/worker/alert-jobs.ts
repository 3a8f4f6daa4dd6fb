/**
 * The processors of the alerts queue (the repeatable sweep; evaluations an
 * older ingest queued there) and of the alert-evaluations queue (what ingest
 * asks for after its flushes): src/alerts does the work, these run it as
 * jobs.
 */
import type { Job, Queue } from 'bullmq';
import { addNews, askEvaluation, takeNews } from '../alerts/news.js';
import { alertEvaluate, alertSweep } from '../alerts/sweep.js';
import type { AlertSweepDeps } from '../alerts/sweep-deps.js';
import { ALERT_EVALUATE_JOB, ALERT_SWEEP_JOB, alertEvaluatePayload, alertSweepPayload, EVALUATE_MAX_LOOPS } from '../jobs/queues.js';
import type { JobContext } from './job-context.js';

type Processor = (job: Job, token?: string) => Promise<unknown>;

/** An evaluation of the loops with news, at most EVALUATE_MAX_LOOPS; one that leaves more asks for the next. */
function evaluateNews(ctx: JobContext, deps: AlertSweepDeps, evaluations: Queue): () => Promise<unknown> {
  return async () => {
    const started = Date.now();
    const news = await takeNews(deps.redis, deps.prefix, EVALUATE_MAX_LOOPS);
    // Running now, so the dedup keeps this one as the next.
    if (news.more) await askEvaluation(evaluations);
    // Loops a stop left go back to the news, for the next worker's evaluation.
    const putBack = (left: readonly string[], rates: boolean): Promise<void> => addNews(deps.redis, evaluations, deps.prefix, left, rates);
    const r = await ctx.measured(ALERT_EVALUATE_JOB, () => alertEvaluate(deps, news.loops, news.rates, started, putBack));
    ctx.metrics.evaluatedLoops.inc({ job: ALERT_EVALUATE_JOB }, r.evaluated);
    if (r.notified > 0) ctx.log.info('alert evaluation done', { evaluated: r.evaluated, notified: r.notified, ms: Date.now() - started });
    return r;
  };
}

/** The alert-evaluations queue's processor. */
export function evaluationProcessor(ctx: JobContext, deps: AlertSweepDeps, evaluations: Queue): Processor {
  const evaluate = evaluateNews(ctx, deps, evaluations);
  return async (job) => {
    alertEvaluatePayload.parse(job.data);
    return evaluate();
  };
}

/** The alerts queue's processor: a sweep, stopped at its next chunk when the worker stops (its cursor kept). */
export function alertSweepProcessor(ctx: JobContext, deps: AlertSweepDeps, evaluations: Queue): Processor {
  const evaluate = evaluateNews(ctx, deps, evaluations);
  return async (job, token) => {
    const started = Date.now();
    if (job.name === ALERT_EVALUATE_JOB) {
      alertEvaluatePayload.parse(job.data);
      return evaluate();
    }
    alertSweepPayload.parse(job.data);
    let r;
    try {
      r = await ctx.measured(ALERT_SWEEP_JOB, () => alertSweep(deps, started));
    } catch (err) {
      if (ctx.signal.aborted) return ctx.handBack(job, token, ALERT_SWEEP_JOB);
      throw err;
    }
    ctx.metrics.evaluatedLoops.inc({ job: ALERT_SWEEP_JOB }, r.evaluated);
    if (r.stopped) return ctx.handBack(job, token, ALERT_SWEEP_JOB);
    ctx.log.info('alert sweep done', { evaluated: r.evaluated, notified: r.notified, ms: Date.now() - started });
    return r;
  };
}
