import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { loadBudgets } from '../alerts/budgets.js';
import { startPusher, type Pusher } from '../alerts/alertmanager-push.js';
import { deliveryProcessor } from '../alerts/delivery.js';
import { alertWatermark } from '../alerts/cursor.js';
import { RULE_IDS } from '../alerts/condition.js';
import { firingByRule } from '../alerts/state-store.js';
import { migratorSettings, redactUrl, type Config } from '../config/index.js';
import {
  ALERT_DELIVERIES_QUEUE,
  ALERT_EVALUATIONS_QUEUE,
  ALERT_JOB_OPTIONS,
  ALERT_SWEEP_JOB,
  ALERT_SWEEP_SCHEDULER,
  ALERTS_QUEUE,
  DELIVER_JOB,
  QUEUE_STATES,
  ROLLUP_JOB_OPTIONS,
  ROLLUPS_QUEUE,
  SWEEP_JOB,
  SWEEP_SCHEDULER,
  WORKER_LOCK_OPTIONS,
} from '../jobs/queues.js';
import { createRedis, probeRedis, redisFailure } from '../jobs/redis.js';
import { failureMessage } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import { createWorkerMetrics, serveMetrics, type WorkerMetrics } from '../observability/metrics.js';
import { compactor } from '../rollups/compact.js';
import { watermarks } from '../rollups/rollups.js';
import { createClickHouse, REPLICA_DELAY_LIMIT_S } from '../clickhouse/client.js';
import { clusterTarget } from '../clickhouse/cluster.js';
import { stateSqlFor, type StateSql } from '../clickhouse/replicas.js';
import { alertSweepProcessor, evaluationProcessor } from '../worker/alert-jobs.js';
import { jobContext } from '../worker/job-context.js';
import { rollupSweepProcessor } from '../worker/rollup-sweep.js';
import type { Command } from './command.js';
import { parseOptions, UsageError, wholeNumberOption } from './command.js';

export const workerCommand: Command = {
  name: 'worker',
  longRunning: true,
  summary: 'run the BullMQ jobs: rollup sweeps, alert sweeps and alert deliveries',
  help: `Usage: agentledger worker [--stop-after-ms N]

Runs the background jobs on Redis (BullMQ) until SIGTERM or SIGINT:
- rollups: every AGENTLEDGER_ROLLUP_SWEEP_MS (default 30000) a sweep
  recomputes the hour rollups the rows stored since the last sweep touched
  (docs/spend.md "Rollups"). One sweep runs at a time across all workers (BullMQ
  global concurrency 1 and a lease in Redis); a sweep killed half-way is
  redone by the next.
- alerts: every AGENTLEDGER_ALERT_SWEEP_MS (default 30000) a sweep evaluates
  the alert rules over the loops with news, the unfinished and the gapped
  (docs/alerts.md "Alerts"), AGENTLEDGER_ALERT_CHUNK_LOOPS at a time; beside it, in a
  queue of their own, the evaluations ingest queues for the loops its
  flushes touched. Each transition is recorded in the alerts table and
  delivered to AGENTLEDGER_ALERT_WEBHOOK_URL
  (signed with AGENTLEDGER_ALERT_WEBHOOK_SECRET), retried with backoff; with
  AGENTLEDGER_ALERTMANAGER_URL the alerts are also pushed to Alertmanager,
  the firing ones at least every sweep.
Start as many workers as you like, on any machines sharing the Redis and
ClickHouse: the queue spreads the jobs. On SIGTERM or SIGINT the jobs in
hand stop at their next step and go back to the queue for the next worker,
within AGENTLEDGER_WORKER_GRACE_MS (default 10000); a killed worker's job is
taken over by another within about 10 s.
Every AGENTLEDGER_ROLLUP_COMPACT_MS (default 3600000) a sweep also drops the
rollup versions later commits made obsolete, and the per-sweep records older
than a day, with the migrator's rights
(AGENTLEDGER_CLICKHOUSE_MIGRATOR_*; the local stack's by default); without
them they are kept, never read (said once at start).
Redis must answer at start (one line and exit 1 when it does not); a later
outage is waited out.

  --stop-after-ms N   stop by itself after N ms, as on SIGTERM (demos, tests)`,
  async run(args, { config, log }) {
    const { values } = parseOptions(args, { 'stop-after-ms': { type: 'string' } });
    const stopAfter = values['stop-after-ms'] === undefined ? undefined : wholeNumberOption('stop-after-ms', values['stop-after-ms'], 1);
    if (config.clickhouse.cluster !== undefined && config.rollups.lateMs < 2 * REPLICA_DELAY_LIMIT_S * 1000) {
      throw new UsageError(
        `AGENTLEDGER_ROLLUP_LATE_MS=${config.rollups.lateMs}: on a cluster a sweep must look back at least ${2 * REPLICA_DELAY_LIMIT_S * 1000} ms, twice the replica delay its reads prefer to stay under (docs/topology.md)`,
      );
    }
    // A bad budgets file stops the worker now, in one line, not each sweep.
    const budgets = config.alerts.budgetsFile === undefined ? undefined : loadBudgets(config.alerts.budgetsFile);
    await probeRedis(config.redis.url);
    const prefix = config.redis.queuePrefix;
    // Its reads prefer a replica that is not far behind (client.ts).
    const ch = createClickHouse({ ...config.clickhouse, freshReplicas: true });
    // A wrong setting stops the worker now, not once per sweep forever.
    let state: StateSql;
    try {
      state = await stateSqlFor(ch, config.clickhouse);
      await Promise.all([watermarks(ch, state), alertWatermark(ch)]);
    } catch (err) {
      await ch.close();
      throw new Error(`ClickHouse cannot serve the rollups and alerts (${failureMessage(err)}): check AGENTLEDGER_CLICKHOUSE_* and run agentledger migrate`);
    }
    const adminClient = createClickHouse(migratorSettings(config.clickhouse));
    const admin = await compactor(adminClient, clusterTarget(config.clickhouse), log);
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
    const [blocking, alertBlocking, evaluationBlocking, deliveryBlocking] = [redis.duplicate(), redis.duplicate(), redis.duplicate(), redis.duplicate()];
    for (const c of [blocking, alertBlocking, evaluationBlocking, deliveryBlocking]) c.on('error', onRedisError);
    const queue = new Queue(ROLLUPS_QUEUE, { connection: redis, prefix, defaultJobOptions: ROLLUP_JOB_OPTIONS });
    await queue.setGlobalConcurrency(1);
    await queue.upsertJobScheduler(SWEEP_SCHEDULER, { every: config.rollups.sweepMs }, { name: SWEEP_JOB, data: {} });
    const deliveries = new Queue(ALERT_DELIVERIES_QUEUE, { connection: redis, prefix });
    const alertQueue = new Queue(ALERTS_QUEUE, { connection: redis, prefix, defaultJobOptions: ALERT_JOB_OPTIONS });
    await alertQueue.setGlobalConcurrency(1);
    await alertQueue.upsertJobScheduler(ALERT_SWEEP_SCHEDULER, { every: config.alerts.sweepMs }, { name: ALERT_SWEEP_JOB, data: {} });
    const evaluationQueue = new Queue(ALERT_EVALUATIONS_QUEUE, { connection: redis, prefix, defaultJobOptions: ALERT_JOB_OPTIONS });
    await evaluationQueue.setGlobalConcurrency(1);
    const metrics = createWorkerMetrics({
      firing: () => firingByRule(redis, prefix),
      queues: async () => {
        const out = new Map<string, Record<string, number>>();
        for (const q of [queue, alertQueue, evaluationQueue, deliveries]) out.set(q.name, await q.getJobCounts(...QUEUE_STATES));
        return out;
      },
    });
    // Counters at 0 from the start: Prometheus's increase() takes a series'
    // first sample as its start, so a counter born at 1 would hide the first
    // failed delivery from AgentledgerAlertDeliveriesFailing.
    for (const result of ['delivered', 'retrying', 'failed']) metrics.deliveries.inc({ result }, 0);
    for (const rule of RULE_IDS) for (const notification of ['fired', 'renotified', 'resolved']) metrics.transitions.inc({ rule, notification }, 0);
    const server = config.workerMetricsPort > 0 ? await serveMetrics(metrics, config.workerMetricsPort, config.metricsHost) : undefined;
    // Aborted on SIGTERM: every job in hand stops at its next step.
    const stopping = new AbortController();
    const ctx = jobContext(log, metrics, stopping.signal);
    const pusher = alertmanagerPusher(config, redis, metrics, log);
    const onNotified = (rule: string, notification: string): void => {
      metrics.transitions.inc({ rule, notification });
      pusher?.wake();
    };
    const sweepRollups = rollupSweepProcessor(ctx, {
      ch,
      redis,
      prefix,
      scanLoops: config.rollups.scanLoops,
      lateMs: config.rollups.lateMs,
      compactMs: config.rollups.compactMs,
      admin,
      state,
    });
    const worker = new Worker(ROLLUPS_QUEUE, sweepRollups, { connection: blocking, prefix, concurrency: 1, ...WORKER_LOCK_OPTIONS });
    worker.on('error', onRedisError);
    worker.on('failed', (_job, err) => log.warn('rollup sweep failed; the next one redoes its work', { error: err.message }));
    const alertDeps = { ch, redis, prefix, deliveries, onNotified, ...(budgets ? { budgets } : {}), rules: config.alerts.rules, renotifyMs: config.alerts.renotifyMs, lateMs: config.rollups.lateMs, log, signal: stopping.signal, chunkLoops: config.alerts.chunkLoops };
    const alertWorker = new Worker(ALERTS_QUEUE, alertSweepProcessor(ctx, alertDeps, evaluationQueue), { connection: alertBlocking, prefix, concurrency: 1, ...WORKER_LOCK_OPTIONS });
    alertWorker.on('error', onRedisError);
    alertWorker.on('failed', (_job, err) => log.warn('alert sweep failed; the next one redoes its work', { error: err.message }));
    const evaluationWorker = new Worker(ALERT_EVALUATIONS_QUEUE, evaluationProcessor(ctx, alertDeps, evaluationQueue), {
      connection: evaluationBlocking,
      prefix,
      concurrency: 1,
      ...WORKER_LOCK_OPTIONS,
    });
    evaluationWorker.on('error', onRedisError);
    evaluationWorker.on('failed', (_job, err) => log.warn('alert evaluation failed; the next sweep looks at its loops', { error: err.message }));
    const deliver = deliveryProcessor(config.alerts.webhook);
    const deliveryWorker = new Worker(ALERT_DELIVERIES_QUEUE, (job) => ctx.measured(DELIVER_JOB, () => deliver(job)), {
      connection: deliveryBlocking,
      prefix,
      concurrency: 4,
      ...WORKER_LOCK_OPTIONS,
    });
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
    const stopAt = Date.now();
    log.info('worker stopping: the jobs in hand stop at their next step', { graceMs: config.workerGraceMs });
    stopping.abort();
    const workers = [worker, alertWorker, evaluationWorker, deliveryWorker];
    let graceTimer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([
      Promise.all(workers.map((w) => w.close())).then(() => true),
      new Promise<false>((resolve) => (graceTimer = setTimeout(() => resolve(false), config.workerGraceMs))),
    ]);
    clearTimeout(graceTimer);
    if (!inTime) {
      // Their locks lapse in WORKER_LOCK_OPTIONS.lockDuration; another worker's stalled check takes the jobs over.
      log.warn('worker stopped before its jobs in hand did: another worker takes them over', { graceMs: config.workerGraceMs });
      for (const w of workers) void w.close(true).catch(() => undefined);
    }
    // The pushes in hand are aborted; the next worker's pusher re-sends what they carried.
    await Promise.race([pusher?.stop(), new Promise((r) => setTimeout(r, 1000).unref())]);
    await Promise.race([Promise.all([queue.close(), alertQueue.close(), evaluationQueue.close(), deliveries.close()]), new Promise((r) => setTimeout(r, 1000).unref())]);
    for (const c of [blocking, alertBlocking, evaluationBlocking, deliveryBlocking]) c.disconnect();
    redis.disconnect();
    server?.close();
    await Promise.race([Promise.all([adminClient.close(), ch.close()]), new Promise((r) => setTimeout(r, 1000).unref())]);
    log.info('worker stopped', { ms: Date.now() - stopAt });
    // A job past the grace may still hold a socket or a timer: leave anyway.
    if (!inTime) setTimeout(() => process.exit(0), 100).unref();
    return 0;
  },
};

/**
 * The Alertmanager pusher (alertmanager-push.ts) of this worker, with its
 * metrics; undefined without AGENTLEDGER_ALERTMANAGER_URL. It runs beside
 * the sweeps, never awaited by them.
 */
function alertmanagerPusher(config: Config, redis: Redis, metrics: WorkerMetrics, log: Logger): Pusher | undefined {
  const am = config.alerts.alertmanager;
  if (am === undefined) return undefined;
  return startPusher({
    urls: am.urls,
    timeoutMs: am.timeoutMs,
    resendMs: config.alerts.sweepMs,
    ...(config.serve.publicUrl === undefined ? {} : { pageUrl: config.serve.publicUrl }),
    redis,
    prefix: config.redis.queuePrefix,
    log,
    onPush: (url, result, alerts) => {
      metrics.alertmanagerPushes.inc({ alertmanager: redactUrl(url), result });
      if (alerts > 0) metrics.alertmanagerAlerts.inc({ alertmanager: redactUrl(url), result: 'sent' }, alerts);
    },
    onRefused: (url) => metrics.alertmanagerAlerts.inc({ alertmanager: redactUrl(url), result: 'refused' }),
  });
}
