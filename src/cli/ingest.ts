import type { Server } from 'node:http';
import { createMetrics, serveMetrics, type Metrics } from '../observability/metrics.js';
import type { CacheObserver } from '../pipeline/cache-observer.js';
import { createClickHouse } from '../clickhouse/client.js';
import { migrate } from '../migrate/migrate.js';
import { EnvelopeStore } from '../store/envelope-store.js';
import { CrazeStore } from '../store/craze-store.js';
import { stateSqlFor } from '../clickhouse/replicas.js';
import { CrazeStream } from '../pipeline/craze.js';
import { EnvelopeStream } from '../pipeline/envelopes.js';
import type { Stream } from '../pipeline/stream.js';
import { ThreadedStream } from '../judging/threaded.js';
import type { JudgeSpec } from '../judging/threaded-protocol.js';
import { Queue } from 'bullmq';
import { addNews } from '../alerts/news.js';
import { AlertTrigger } from '../alerts/trigger.js';
import { ALERT_EVALUATIONS_QUEUE } from '../jobs/queues.js';
import { createProducerRedis } from '../jobs/redis.js';
import type { KafkaColumns } from '../rows/rows.js';
import { StallWatchdog } from '../ingest/stall-watchdog.js';
import { kafkaGroup } from '../kafka/group.js';
import { ingestEdges } from '../ingest/edges.js';
import { Ingestor } from '../ingest/ingestor.js';
import { createKafka } from '../kafka/client.js';
import { migratorSettings } from '../config/index.js';
import type { Command } from './command.js';
import { parseOptions, UsageError } from './command.js';
import { MIGRATIONS_DIR } from './migrate.js';
import { failureMessage } from '../errors/errors.js';

export const ingestCommand: Command = {
  name: 'ingest',
  longRunning: true,
  summary: 'consume envelopes and craze events from Kafka, verify, account, store each exactly once',
  help: `Usage: agentledger ingest [--idle-exit-ms MS] [--no-migrate]

Consumes AGENTLEDGER_ENVELOPE_TOPIC and AGENTLEDGER_CRAZE_TOPIC in consumer group
AGENTLEDGER_KAFKA_GROUP_ID. Every envelope is verified against its loop's chain
and written exactly once to ClickHouse (table envelopes; violations also in
chain_violations). Every craze event is ordered and deduplicated on (session,
incarnation, seq), accounted (exact picodollar spend per usage report, turn and
sub-agent outcomes) and written once to craze_events. Records that cannot be
decoded go to
AGENTLEDGER_DLQ_TOPIC with their original bytes and the reason in headers.

Run more processes with the same group id to scale out: Kafka spreads the
partitions, and each process reads its partitions' state back from ClickHouse.

Rows are flushed every AGENTLEDGER_BATCH_MAX_ROWS rows or AGENTLEDGER_BATCH_MAX_WAIT_MS
ms; offsets are committed only after their rows are durable. While ClickHouse is
slow or down, consumption pauses and resumes by itself. SIGTERM or SIGINT
finishes the batch in hand, flushes, commits and exits 0.

Prometheus metrics on :AGENTLEDGER_METRICS_PORT/metrics (0 turns them off).

Options:
  --idle-exit-ms MS  exit (after a final flush) once no record has arrived for MS ms
                     while this process owned its partitions, and the group has
                     committed every partition of its topics to the end
  --no-migrate       do not apply pending ClickHouse migrations at start (without it they
                     are applied as AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER when that is set)`,
  async run(args, { config, log }) {
    const { values } = parseOptions(args, { 'idle-exit-ms': { type: 'string' }, 'no-migrate': { type: 'boolean' } });
    const idleExitMs = values['idle-exit-ms'] === undefined ? undefined : Number(values['idle-exit-ms']);
    if (idleExitMs !== undefined && (!Number.isInteger(idleExitMs) || idleExitMs < 1)) throw new UsageError('--idle-exit-ms takes a whole number of ms');
    // As the migrator: the writer that ingests needs no DDL (docs/operations.md "Users and passwords").
    if (!values['no-migrate']) await migrate(migratorSettings(config.clickhouse), MIGRATIONS_DIR, log);

    const metrics = createMetrics();
    // At 0 from the start: Prometheus's increase() sees a series' first
    // sample as its start, so a counter born at 1 by the first dead letter
    // would never raise AgentledgerDeadLetters for it
    // (test/integration/prometheus-scrape.test.ts).
    for (const topic of [config.kafka.topics.envelopes, config.kafka.topics.craze]) {
      metrics.deadLetters.inc({ topic }, 0);
      metrics.poisonRecords.inc({ topic }, 0);
    }
    let server: Server | undefined;
    if (config.metricsPort > 0) server = await serveMetrics(metrics, config.metricsPort, config.metricsHost);
    const clickhouse = createClickHouse(config.clickhouse);
    // On a cluster, the state reads ask every replica (replicas.ts).
    const stateSql = await stateSqlFor(clickhouse, config.clickhouse);
    const envelopeOptions = { seqEncoding: config.envelopes.seqEncoding, maxPayloadBytes: config.envelopes.maxPayloadBytes };
    const envelopes = new EnvelopeStream(config.kafka.topics.envelopes, new EnvelopeStore(clickhouse, stateSql, config.insertFormat), envelopeOptions, config.caches.headEntries, cacheMetrics(metrics, 'loop_heads'));
    const craze = new CrazeStream(config.kafka.topics.craze, new CrazeStore(clickhouse, stateSql, config.insertFormat), config.caches.crazeSessions, cacheMetrics(metrics, 'craze_sessions'));
    const threads = config.judgeThreads;
    // Judged in worker threads (judging/threaded.ts), each with its share of
    // the caches' budget, rounded down: together they stay within it
    // (exactly-once.test.ts's cache of 50 over 4 threads: 12 each, not 13).
    const share = (budget: number): number => Math.max(1, Math.floor(budget / threads));
    const threaded = <Row extends KafkaColumns>(local: Stream<Row>, spec: JudgeSpec, cache: string): Stream<Row> =>
      new ThreadedStream(local, { threads, spec, clickhouse: config.clickhouse, format: config.insertFormat, observer: cacheMetrics(metrics, cache), isolate: { metrics, log } });
    const streams: Stream[] =
      threads === 1
        ? [envelopes, craze]
        : [
            threaded(envelopes, { stream: 'envelopes', topic: envelopes.topic, options: envelopeOptions, cacheEntries: share(config.caches.headEntries) }, 'loop_heads'),
            threaded(craze, { stream: 'craze', topic: craze.topic, cacheEntries: share(config.caches.crazeSessions) }, 'craze_sessions'),
          ];
    // Alert evaluations per flush (docs/alerts.md "Alerts"): added to Redis, run by
    // any worker; ingest goes on the same without Redis or without workers.
    let trigger: AlertTrigger | undefined;
    let alertQueue: Queue | undefined;
    const producerRedis = config.alerts.evaluateOnIngest ? createProducerRedis(config.redis.url) : undefined;
    if (producerRedis !== undefined) {
      alertQueue = new Queue(ALERT_EVALUATIONS_QUEUE, { connection: producerRedis, prefix: config.redis.queuePrefix });
      alertQueue.on('error', () => undefined);
      const queue = alertQueue;
      const send = (loops: string[], rates: boolean): Promise<void> => addNews(producerRedis, queue, config.redis.queuePrefix, loops, rates);
      trigger = new AlertTrigger(send, log, (result, n) => metrics.alertEvaluations.inc({ result }, n), config.alerts.evaluateGapMs);
    }
    const onDurable = trigger && ((rows: readonly KafkaColumns[]) => trigger.durable(rows));
    const ingestor = new Ingestor({ edges: ingestEdges(kafkaGroup(createKafka(config.kafka, log), config), clickhouse), config, log, metrics, ...(onDurable ? { onDurable } : {}) }, streams);

    let exitCode = 0;
    let resolveDone: () => void = () => undefined;
    const done = new Promise<void>((r) => (resolveDone = r));
    ingestor.onFatal = (err) => {
      // Nothing buffered is lost: it was not committed, and the next run reads it again.
      log.error('consumer stopped on an error it cannot retry; exiting so a supervisor restarts it', { error: err.message });
      exitCode = 1;
      shutdown('fatal consumer error', false);
    };
    const shutdown = (why: string, flush = true): void => {
      log.info('stopping', { why, buffered: ingestor.buffered });
      void ingestor
        .stop(flush)
        .then((flushed) => {
          // A supervisor must know: the buffer is read again on restart, but this run did not finish its work.
          if (!flushed) exitCode = 1;
        })
        .catch((err: unknown) => {
          exitCode = 1;
          log.error('stop failed', { error: failureMessage(err) });
        })
        .finally(resolveDone);
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));

    await ingestor.start();
    log.info('ingesting', { topic: config.kafka.topics.envelopes, group: config.kafka.groupId, judgeThreads: threads, metricsPort: config.metricsPort });
    // A progress line every 10 s while records flow: what a long-running
    // command owes the operator watching it.
    let last = new Map<string, number>();
    let lastAt = Date.now();
    const progressTimer = setInterval(() => {
      const now = Date.now();
      const fields: Record<string, unknown> = {};
      let moved = false;
      for (const [stream, n] of ingestor.processed) {
        const delta = n - (last.get(stream) ?? 0);
        if (delta > 0) moved = true;
        fields[stream] = n;
        fields[`${stream}PerSec`] = Math.round((delta * 1000) / (now - lastAt));
      }
      if (moved) log.info('progress', { ...fields, buffered: ingestor.buffered });
      last = new Map(ingestor.processed);
      lastAt = now;
    }, 10_000);
    progressTimer.unref();
    let idleTimer: NodeJS.Timeout | undefined;
    if (idleExitMs !== undefined) {
      let checking = false;
      idleTimer = setInterval(() => {
        if (checking || !ingestor.settled || ingestor.buffered > 0 || Date.now() - ingestor.lastActivity < idleExitMs) return;
        // Idle here is not enough: a killed member may still hold partitions
        // with records in them until its session times out.
        checking = true;
        ingestor
          .caughtUp()
          .then((done) => {
            if (done) {
              clearInterval(idleTimer);
              shutdown(`idle for ${idleExitMs} ms and every partition committed`);
            }
          })
          .catch((err: unknown) => log.warn('could not read the group offsets', { error: failureMessage(err) }))
          .finally(() => (checking = false));
      }, Math.min(idleExitMs, 500));
    }
    // The stall watchdog (AGENTLEDGER_INGEST_STALL_EXIT_MS): no progress
    // while records wait means something is stuck that a fresh process
    // would not be; it rejoins once with a fresh client, then says why and
    // exits 1.
    const stopWatchdog =
      config.stallExitMs > 0
        ? new StallWatchdog({
            stallMs: config.stallExitMs,
            now: Date.now,
            lastProgress: () => ingestor.lastProgress,
            idle: () => {
              log.debug('stall check: nothing waits in this member\'s partitions past the group\'s commit', { sinceProgressMs: Date.now() - ingestor.lastProgress });
              ingestor.lastProgress = Date.now();
            },
            waiting: () => ingestor.waiting(),
            lastFailure: () => ingestor.lastFailure,
            observe: (seconds) => metrics.sinceProgress.set(seconds),
            // First, after two session timeouts with no batch in hand: a
            // rejoin with a fresh client, within the process (a stuck
            // kafkajs consumer; docs/ingestion.md).
            ...(2 * config.kafka.sessionTimeoutMs < config.stallExitMs
              ? {
                  rejoin: {
                    afterMs: 2 * config.kafka.sessionTimeoutMs,
                    batchInHand: () => ingestor.batchInHand,
                    lastDurable: () => ingestor.lastDurable,
                    rejoin: (why: string) => ingestor.rejoin(why),
                    held: (why: string) => log.warn(why, { lastFailure: ingestor.lastFailure }),
                  },
                }
              : {}),
            stalled: (why) => {
              metrics.stallExits.inc();
              log.error(`ingest is stalled: ${why}; exiting so a supervisor restarts it (AGENTLEDGER_INGEST_STALL_EXIT_MS=${config.stallExitMs})`);
              exitCode = 1;
              // A stuck client may not stop cleanly: what was not committed is read again by the next process.
              setTimeout(() => process.exit(1), 15_000).unref();
              shutdown('stalled', false);
            },
          }).start()
        : undefined;
    await done;
    stopWatchdog?.();
    if (idleTimer) clearInterval(idleTimer);
    clearInterval(progressTimer);
    await trigger?.close();
    await alertQueue?.close().catch(() => undefined);
    producerRedis?.disconnect();
    await clickhouse.close();
    server?.close();
    log.info('stopped');
    // kafkajs can revive its consumer after a crash that races the disconnect
    // (a broker restart): it would then hold partitions, and keep this
    // process alive, with nothing of ours left to finish. Exit regardless.
    setTimeout(() => process.exit(exitCode), 2000).unref();
    return exitCode;
  },
};

/**
 * A stream cache's hits, misses, evictions and size as the `agentledger_cache_*`
 * metrics of `cache`, the counters at 0 from the start: a first batch of new
 * keys is all misses, and a hit rate needs its hits series to exist.
 */
function cacheMetrics(metrics: Metrics, cache: string): CacheObserver {
  for (const counter of [metrics.cacheHits, metrics.cacheMisses, metrics.cacheEvictions]) counter.inc({ cache }, 0);
  return {
    hit: (n) => metrics.cacheHits.inc({ cache }, n),
    miss: (n) => metrics.cacheMisses.inc({ cache }, n),
    evicted: (n) => metrics.cacheEvictions.inc({ cache }, n),
    size: (n) => metrics.cacheEntries.set({ cache }, n),
  };
}
