import { Queue, Worker } from 'bullmq';
import { loadBudgets } from '../alerts/budgets.js';
import { askEvaluation, takeNews } from '../alerts/news.js';
import { deliveryProcessor } from '../alerts/delivery.js';
import { alertEvaluate, alertSweep, alertWatermark, firingByRule } from '../alerts/sweep.js';
import { createWorkerMetrics, serveMetrics } from '../observability/metrics.js';
import {
  ALERT_DELIVERIES_QUEUE,
  ALERT_EVALUATE_JOB,
  DELIVER_JOB,
  EVALUATE_MAX_LOOPS,
  QUEUE_STATES,
  alertEvaluatePayload,
  ALERT_SWEEP_JOB,
  ALERT_SWEEP_SCHEDULER,
  ALERTS_QUEUE,
  alertSweepPayload,
  ROLLUP_JOB_OPTIONS,
  ROLLUPS_QUEUE,
  SWEEP_JOB,
  SWEEP_SCHEDULER,
  sweepPayload,
} from '../jobs/queues.js';
import { createRedis, probeRedis, redisFailure } from '../jobs/redis.js';
import { compact, compactor, sweep, watermarks } from '../rollups/rollups.js';
import { failureMessage } from '../sink/clickhouse/errors.js';
import { createClickHouse } from '../sink/clickhouse/client.js';
import { migratorSettings } from '../config/index.js';
import type { Command } from './command.js';
import { parseOptions, wholeNumberOption } from './command.js';

export const workerCommand: Command = {
  name: 'worker',
  summary: 'run the BullMQ jobs: rollup sweeps, alert sweeps and alert deliveries',
  help: `Usage: agentledger worker [--stop-after-ms N]

Runs the background jobs on Redis (BullMQ) until SIGTERM or SIGINT:
- rollups: every AGENTLEDGER_ROLLUP_SWEEP_MS (default 30000) a sweep
  recomputes the hour rollups the rows stored since the last sweep touched
  (README "Rollups"). One sweep runs at a time across all workers (BullMQ
  global concurrency 1); a sweep killed half-way is redone by the next.
- alerts: every AGENTLEDGER_ALERT_SWEEP_MS (default 30000) a sweep evaluates
  the alert rules over the loops with news, the unfinished and the gapped
  (README "Alerts"); between sweeps it runs the evaluations ingest queues
  for the loops its flushes touched. One alert job runs at a time across all
  workers. Each transition is recorded in the alerts table and delivered to
  AGENTLEDGER_ALERT_WEBHOOK_URL
  (signed with AGENTLEDGER_ALERT_WEBHOOK_SECRET), retried with backoff.
Start as many workers as you like, on any machines sharing the Redis and
ClickHouse: the queue spreads the jobs. A stop waits for the job in hand.
Every AGENTLEDGER_ROLLUP_COMPACT_MS (default 3600000) a sweep also drops the
rollup versions later commits made obsolete, with the migrator's rights
(AGENTLEDGER_CLICKHOUSE_MIGRATOR_*; the local stack's by default); without
them they are kept, never read (said once at start).
Redis must answer at start (one line and exit 1 when it does not); a later
outage is waited out.

  --stop-after-ms N   stop by itself after N ms, as on SIGTERM (demos, tests)`,
  async run(args, { config, log }) {
    const { values } = parseOptions(args, { 'stop-after-ms': { type: 'string' } });
    const stopAfter = values['stop-after-ms'] === undefined ? undefined : wholeNumberOption('stop-after-ms', values['stop-after-ms'], 1);
    // A bad budgets file stops the worker now, in one line, not each sweep.
    const budgets = config.alerts.budgetsFile === undefined ? undefined : loadBudgets(config.alerts.budgetsFile);
    await probeRedis(config.redis.url);
    const prefix = config.redis.queuePrefix;
    const ch = createClickHouse(config.clickhouse);
    // A wrong setting stops the worker now, not once per sweep forever.
    await Promise.all([watermarks(ch), alertWatermark(ch)]).catch(async (err: unknown) => {
      await ch.close();
      throw new Error(`ClickHouse cannot serve the rollups and alerts (${failureMessage(err)}): check AGENTLEDGER_CLICKHOUSE_* and run agentledger migrate`);
    });
    const adminClient = createClickHouse(migratorSettings(config.clickhouse));
    const admin = await compactor(adminClient, log);
    let compacted = 0;
    const redis = createRedis(config.redis.url);
    let said = false;
    const onRedisError = (err: unknown): void => {
      // ioredis reconnects by itself; say so once per outage, not per attempt.
      if (!said) log.warn('Redis unavailable; retrying', { error: redisFailure(config.redis.url, err) });
      said = true;
    };
    redis.on('error', onRedisError);
    redis.on('ready', () => (said = false));
    // BullMQ closes no connection it was handed: all are closed below. Each
    // worker blocks on its own.
    const [blocking, alertBlocking, deliveryBlocking] = [redis.duplicate(), redis.duplicate(), redis.duplicate()];
    for (const c of [blocking, alertBlocking, deliveryBlocking]) c.on('error', onRedisError);
    const queue = new Queue(ROLLUPS_QUEUE, { connection: redis, prefix, defaultJobOptions: ROLLUP_JOB_OPTIONS });
    await queue.setGlobalConcurrency(1);
    await queue.upsertJobScheduler(SWEEP_SCHEDULER, { every: config.rollups.sweepMs }, { name: SWEEP_JOB, data: {} });
    const deliveries = new Queue(ALERT_DELIVERIES_QUEUE, { connection: redis, prefix });
    const alertQueue = new Queue(ALERTS_QUEUE, { connection: redis, prefix, defaultJobOptions: ROLLUP_JOB_OPTIONS });
    await alertQueue.setGlobalConcurrency(1);
    await alertQueue.upsertJobScheduler(ALERT_SWEEP_SCHEDULER, { every: config.alerts.sweepMs }, { name: ALERT_SWEEP_JOB, data: {} });
    const metrics = createWorkerMetrics({
      firing: () => firingByRule(redis, prefix),
      queues: async () => {
        const out = new Map<string, Record<string, number>>();
        for (const q of [queue, alertQueue, deliveries]) out.set(q.name, await q.getJobCounts(...QUEUE_STATES));
        return out;
      },
    });
    const server = config.workerMetricsPort > 0 ? await serveMetrics(metrics, config.workerMetricsPort, config.metricsHost) : undefined;
    /** Runs one job's work, counted and timed by its name. */
    const measured = async <T>(job: string, work: () => Promise<T>): Promise<T> => {
      const end = metrics.jobSeconds.startTimer({ job });
      try {
        const r = await work();
        metrics.jobs.inc({ job, result: 'done' });
        return r;
      } catch (err) {
        metrics.jobs.inc({ job, result: 'failed' });
        throw err;
      } finally {
        end();
      }
    };
    const onNotified = (rule: string, notification: string): void => metrics.transitions.inc({ rule, notification });
    const worker = new Worker(
      ROLLUPS_QUEUE,
      async (job) => {
        sweepPayload.parse(job.data);
        const started = Date.now();
        const r = await measured(SWEEP_SCHEDULER, () => sweep({ ch, redis, prefix, log, scanLoops: config.rollups.scanLoops }, config.rollups.lateMs));
        log.info('rollup sweep done', { version: r.version.toString(), hours: r.hours, treeChanges: r.treeChanges, ms: Date.now() - started });
        if (admin && Date.now() - compacted >= config.rollups.compactMs) {
          compacted = Date.now();
          log.info('obsolete rollup versions dropped', { hours: await compact(ch, admin) });
        }
        return { version: r.version.toString(), hours: r.hours };
      },
      { connection: blocking, prefix, concurrency: 1 },
    );
    worker.on('error', onRedisError);
    worker.on('failed', (_job, err) => log.warn('rollup sweep failed; the next one redoes its work', { error: err.message }));
    const alertDeps = { ch, redis, prefix, deliveries, onNotified, ...(budgets ? { budgets } : {}), rules: config.alerts.rules, renotifyMs: config.alerts.renotifyMs, lateMs: config.rollups.lateMs, log };
    const alertWorker = new Worker(
      ALERTS_QUEUE,
      async (job) => {
        const started = Date.now();
        if (job.name === ALERT_EVALUATE_JOB) {
          alertEvaluatePayload.parse(job.data);
          const news = await takeNews(redis, prefix, EVALUATE_MAX_LOOPS);
          // Running now, so the dedup keeps this one as the next.
          if (news.more) await askEvaluation(alertQueue);
          const r = await measured(ALERT_EVALUATE_JOB, () => alertEvaluate(alertDeps, news.loops, news.rates, started));
          metrics.evaluatedLoops.inc({ job: ALERT_EVALUATE_JOB }, r.evaluated);
          if (r.notified > 0) log.info('alert evaluation done', { evaluated: r.evaluated, notified: r.notified, ms: Date.now() - started });
          return r;
        }
        alertSweepPayload.parse(job.data);
        const r = await measured(ALERT_SWEEP_JOB, () => alertSweep(alertDeps, started));
        metrics.evaluatedLoops.inc({ job: ALERT_SWEEP_JOB }, r.evaluated);
        log.info('alert sweep done', { evaluated: r.evaluated, notified: r.notified, ms: Date.now() - started });
        return r;
      },
      { connection: alertBlocking, prefix, concurrency: 1 },
    );
    alertWorker.on('error', onRedisError);
    alertWorker.on('failed', (_job, err) => log.warn('alert sweep failed; the next one redoes its work', { error: err.message }));
    const deliver = deliveryProcessor(config.alerts.webhook);
    const deliveryWorker = new Worker(ALERT_DELIVERIES_QUEUE, (job) => measured(DELIVER_JOB, () => deliver(job)), { connection: deliveryBlocking, prefix, concurrency: 4 });
    deliveryWorker.on('error', onRedisError);
    deliveryWorker.on('completed', () => metrics.deliveries.inc({ result: 'delivered' }));
    deliveryWorker.on('failed', (job, err) => {
      const final = job !== undefined && job.attemptsMade >= (job.opts.attempts ?? 1);
      metrics.deliveries.inc({ result: final ? 'failed' : 'retrying' });
      log.warn(final ? 'alert delivery failed for good: see agentledger alerts' : 'alert delivery failed; retrying', { error: err.message });
    });
    log.info('worker started', { queue: ROLLUPS_QUEUE, sweepMs: config.rollups.sweepMs });
    await new Promise<void>((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
      if (stopAfter !== undefined) setTimeout(resolve, stopAfter).unref();
    });
    log.info('worker stopping: waiting for the job in hand');
    await Promise.all([worker.close(), alertWorker.close(), deliveryWorker.close()]);
    await Promise.all([queue.close(), alertQueue.close(), deliveries.close()]);
    for (const c of [blocking, alertBlocking, deliveryBlocking]) c.disconnect();
    redis.disconnect();
    server?.close();
    await adminClient.close();
    await ch.close();
    return 0;
  },
};
