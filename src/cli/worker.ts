import { Queue, Worker } from 'bullmq';
import { ROLLUP_JOB_OPTIONS, ROLLUPS_QUEUE, SWEEP_JOB, SWEEP_SCHEDULER, sweepPayload } from '../jobs/queues.js';
import { createRedis, probeRedis, redisFailure } from '../jobs/redis.js';
import { compact, compactor, sweep, watermarks } from '../rollups/rollups.js';
import { failureMessage } from '../sink/clickhouse/errors.js';
import { createClickHouse } from '../sink/clickhouse/client.js';
import { migratorSettings } from '../config/index.js';
import type { Command } from './command.js';
import { parseOptions, wholeNumberOption } from './command.js';

export const workerCommand: Command = {
  name: 'worker',
  summary: 'run the BullMQ jobs: rollup sweeps every AGENTLEDGER_ROLLUP_SWEEP_MS',
  help: `Usage: agentledger worker [--stop-after-ms N]

Runs the background jobs on Redis (BullMQ) until SIGTERM or SIGINT:
- rollups: every AGENTLEDGER_ROLLUP_SWEEP_MS (default 30000) a sweep
  recomputes the hour rollups the rows stored since the last sweep touched
  (README "Rollups"). One sweep runs at a time across all workers (BullMQ
  global concurrency 1); a sweep killed half-way is redone by the next.
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
    await probeRedis(config.redis.url);
    const prefix = config.redis.queuePrefix;
    const ch = createClickHouse(config.clickhouse);
    // A wrong setting stops the worker now, not once per sweep forever.
    await watermarks(ch).catch(async (err: unknown) => {
      await ch.close();
      throw new Error(`ClickHouse cannot serve the rollups (${failureMessage(err)}): check AGENTLEDGER_CLICKHOUSE_* and run agentledger migrate`);
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
    // BullMQ closes no connection it was handed: both are closed below.
    const blocking = redis.duplicate();
    blocking.on('error', onRedisError);
    const queue = new Queue(ROLLUPS_QUEUE, { connection: redis, prefix, defaultJobOptions: ROLLUP_JOB_OPTIONS });
    await queue.setGlobalConcurrency(1);
    await queue.upsertJobScheduler(SWEEP_SCHEDULER, { every: config.rollups.sweepMs }, { name: SWEEP_JOB, data: {} });
    const worker = new Worker(
      ROLLUPS_QUEUE,
      async (job) => {
        sweepPayload.parse(job.data);
        const started = Date.now();
        const r = await sweep({ ch, redis, prefix, log, scanLoops: config.rollups.scanLoops }, config.rollups.lateMs);
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
    log.info('worker started', { queue: ROLLUPS_QUEUE, sweepMs: config.rollups.sweepMs });
    await new Promise<void>((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
      if (stopAfter !== undefined) setTimeout(resolve, stopAfter).unref();
    });
    log.info('worker stopping: waiting for the job in hand');
    await worker.close();
    await queue.close();
    blocking.disconnect();
    redis.disconnect();
    await adminClient.close();
    await ch.close();
    return 0;
  },
};
