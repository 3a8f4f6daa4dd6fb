/**
 * Prometheus metrics of the ingest pipeline, served on AGENTLEDGER_METRICS_PORT
 * at /metrics (and /healthz). One registry per process.
 */
import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * prom-client's default metrics of a process (CPU, memory, event loop, GC),
 * named with `prefix`, without the three gauges it names `*_total`
 * (`nodejs_active_{handles,requests,resources}_total`): a `_total` suffix
 * promises a counter, and `promtool check metrics` refuses them. Their
 * per-type twins (`nodejs_active_handles` …) say the same, summed.
 */
function defaultMetrics(registry: Registry, prefix: string): void {
  collectDefaultMetrics({ register: registry, prefix });
  for (const what of ['handles', 'requests', 'resources']) registry.removeSingleMetric(`${prefix}nodejs_active_${what}_total`);
}

export function createMetrics() {
  const registry = new Registry();
  defaultMetrics(registry, 'agentledger_');
  return {
    registry,
    records: new Counter({
      name: 'agentledger_records_total',
      help: 'Records processed, by stream (envelopes, craze) and verdict; duplicates are dropped, everything else is stored',
      labelNames: ['stream', 'verdict'] as const,
      registers: [registry],
    }),
    deadLetters: new Counter({
      name: 'agentledger_dead_letters_total',
      help: 'Records sent to the dead-letter topic, by source topic',
      labelNames: ['topic'] as const,
      registers: [registry],
    }),
    batchRows: new Histogram({
      name: 'agentledger_insert_batch_rows',
      help: 'Rows per ClickHouse insert, by stream',
      labelNames: ['stream'] as const,
      buckets: [1, 10, 100, 500, 1000, 5000, 10000, 50000],
      registers: [registry],
    }),
    insertSeconds: new Histogram({
      name: 'agentledger_insert_seconds',
      help: 'Latency of successful ClickHouse inserts, by stream',
      labelNames: ['stream'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    insertFailures: new Counter({
      name: 'agentledger_insert_failures_total',
      help: 'Failed ClickHouse or Kafka requests of ingest (retried; the batch waits meanwhile)',
      registers: [registry],
    }),
    poisonRecords: new Counter({
      name: 'agentledger_refused_records_total',
      help: 'Records whose row (or a read-back query built from them) ClickHouse refused for its content: dead-lettered and stored as malformed, by source topic',
      labelNames: ['topic'] as const,
      registers: [registry],
    }),
    keyMismatches: new Counter({
      name: 'agentledger_key_mismatch_total',
      help: 'Envelopes stored whose Kafka key is not their LoopID (a producer bug that splits loops across partitions), by topic; each row says so in its detail',
      labelNames: ['topic'] as const,
      registers: [registry],
    }),
    undecodableBatches: new Counter({
      name: 'agentledger_undecodable_batches_total',
      help: 'Record batches the consumer could not decode (a corrupt compressed payload, a codec id Kafka does not define), by topic and partition (unknown when kafkajs could not tell); ingest stops at each, nothing is skipped',
      labelNames: ['topic', 'partition'] as const,
      registers: [registry],
    }),
    fenced: new Counter({
      name: 'agentledger_fenced_flushes_total',
      help: 'Flushes refused because this member no longer owned its partitions (its buffer was dropped for the new owner)',
      registers: [registry],
    }),
    paused: new Gauge({
      name: 'agentledger_consumer_paused',
      help: '1 while a batch waits for ClickHouse or Kafka to answer again (no further batch is fetched meanwhile)',
      registers: [registry],
    }),
    sinceProgress: new Gauge({
      name: 'agentledger_ingest_seconds_since_progress',
      help: 'Seconds since ingest last made rows durable and committed them (or found nothing waiting): what the stall watchdog (AGENTLEDGER_INGEST_STALL_EXIT_MS) measures',
      registers: [registry],
    }),
    stallExits: new Counter({
      name: 'agentledger_ingest_stall_exits_total',
      help: 'Times the stall watchdog found records waiting and no progress, and stopped ingest for its supervisor to restart it',
      registers: [registry],
    }),
    coordinatorRejoins: new Counter({
      name: 'agentledger_ingest_coordinator_rejoins_total',
      help: 'Times ingest left its consumer group and joined it again because the group coordinator had not answered for a session timeout (kafkajs keeps a dead coordinator cached); each drops the buffer for the next owner to read again',
      registers: [registry],
    }),
    alertEvaluations: new Counter({
      name: 'agentledger_alert_evaluations_queued_total',
      help: 'Alert evaluations ingest asked for after its flushes, its loops added to the news (result: queued, or failed: left to the next alert sweep)',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    cacheHits: new Counter({
      name: 'agentledger_cache_hits_total',
      help: 'Lookups of durable per-key state served from memory, by cache (loop_heads: loop heads; craze_sessions: craze sessions\' accounting)',
      labelNames: ['cache'] as const,
      registers: [registry],
    }),
    cacheMisses: new Counter({
      name: 'agentledger_cache_misses_total',
      help: 'Lookups of durable per-key state read back from ClickHouse (a key not seen since start or the last rebalance, or evicted), by cache',
      labelNames: ['cache'] as const,
      registers: [registry],
    }),
    cacheEvictions: new Counter({
      name: 'agentledger_cache_evictions_total',
      help: 'Entries evicted to stay within the cache budget (AGENTLEDGER_HEAD_CACHE_ENTRIES, AGENTLEDGER_CRAZE_CACHE_ENTRIES), by cache; only durable state is evicted',
      labelNames: ['cache'] as const,
      registers: [registry],
    }),
    cacheEntries: new Gauge({
      name: 'agentledger_cache_entries',
      help: 'Entries held by each cache now (a rebalance empties them)',
      labelNames: ['cache'] as const,
      registers: [registry],
    }),
    lag: new Gauge({
      name: 'agentledger_consumer_lag',
      help: 'Records between the last processed offset and the high watermark, per partition',
      labelNames: ['topic', 'partition'] as const,
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** What the worker's gauges are read from at scrape time. */
export interface WorkerGauges {
  /** Firing alerts per rule. */
  firing(): Promise<ReadonlyMap<string, number>>;
  /** Jobs per queue and state (waiting, active, delayed, failed…). */
  queues(): Promise<ReadonlyMap<string, Readonly<Record<string, number>>>>;
}

/**
 * Prometheus metrics of `agentledger worker`, served on
 * AGENTLEDGER_WORKER_METRICS_PORT. The gauges read Redis when scraped (a
 * scrape costs a few commands; nothing is counted per job for them).
 */
export function createWorkerMetrics(gauges: WorkerGauges) {
  const registry = new Registry();
  defaultMetrics(registry, 'agentledger_worker_');
  return {
    registry,
    jobs: new Counter({
      name: 'agentledger_worker_jobs_total',
      help: 'Jobs run, by job (rollup-sweep, alert-sweep, alert-evaluate, deliver) and result (done, failed)',
      labelNames: ['job', 'result'] as const,
      registers: [registry],
    }),
    jobSeconds: new Histogram({
      name: 'agentledger_worker_job_seconds',
      help: 'Duration of the jobs run, by job',
      labelNames: ['job'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    lastDone: new Gauge({
      name: 'agentledger_worker_job_last_done_timestamp_seconds',
      help: 'When a job of each kind last finished done in this process (Unix seconds): time() minus it is the age of the last sweep',
      labelNames: ['job'] as const,
      registers: [registry],
    }),
    evaluatedLoops: new Counter({
      name: 'agentledger_alert_evaluated_loops_total',
      help: 'Loops the alert sweeps and evaluations looked at, by job',
      labelNames: ['job'] as const,
      registers: [registry],
    }),
    transitions: new Counter({
      name: 'agentledger_alert_transitions_total',
      help: 'Alert notifications recorded and queued for delivery, by rule and notification (fired, renotified, resolved)',
      labelNames: ['rule', 'notification'] as const,
      registers: [registry],
    }),
    deliveries: new Counter({
      name: 'agentledger_alert_deliveries_total',
      help: 'Webhook delivery attempts, by result (delivered; retrying; failed: out of attempts, in the failed set)',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    alertmanagerPushes: new Counter({
      name: 'agentledger_alertmanager_pushes_total',
      help: 'Pushes of the alerts to an Alertmanager, by alertmanager (its URL, password hidden) and result (sent: taken, a 400 included; failed: no answer, timeout or 5xx, retried with backoff)',
      labelNames: ['alertmanager', 'result'] as const,
      registers: [registry],
    }),
    alertmanagerAlerts: new Counter({
      name: 'agentledger_alertmanager_alerts_total',
      help: 'Alerts posted to an Alertmanager, by alertmanager and result (sent: in a push it took; refused: answered 400, logged once, not sent again)',
      labelNames: ['alertmanager', 'result'] as const,
      registers: [registry],
    }),
    firing: new Gauge({
      name: 'agentledger_alerts_firing',
      help: 'Alerts firing now, by rule (read from the alert states in Redis at scrape time)',
      labelNames: ['rule'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const [rule, n] of await gauges.firing()) this.set({ rule }, n);
      },
    }),
    queueJobs: new Gauge({
      name: 'agentledger_queue_jobs',
      help: 'BullMQ jobs per queue and state (read at scrape time): the queue depth',
      labelNames: ['queue', 'state'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const [queue, counts] of await gauges.queues()) for (const [state, n] of Object.entries(counts)) this.set({ queue, state }, n);
      },
    }),
  };
}

export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;

/**
 * Prometheus metrics of `agentledger serve`, served on
 * AGENTLEDGER_SERVE_METRICS_PORT. `endpoint` is one of a fixed set (the API's
 * names, the page's assets, `other` for anything else), so no request can add
 * a series.
 */
export function createServeMetrics() {
  const registry = new Registry();
  defaultMetrics(registry, 'agentledger_serve_');
  return {
    registry,
    requests: new Counter({
      name: 'agentledger_serve_requests_total',
      help: 'Requests answered, by endpoint (/api/<name>, a page asset, or other) and HTTP status',
      labelNames: ['endpoint', 'status'] as const,
      registers: [registry],
    }),
    requestSeconds: new Histogram({
      name: 'agentledger_serve_request_seconds',
      help: 'Time from a request to its answer, by endpoint',
      labelNames: ['endpoint'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
  };
}

export type ServeMetrics = ReturnType<typeof createServeMetrics>;

/** Serves `/metrics` and `/healthz` on host:port, GET (and HEAD) only. */
export function serveMetrics(metrics: { readonly registry: Registry }, port: number, host = '127.0.0.1'): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' });
      res.end();
    } else if (req.url === '/metrics') {
      metrics.registry
        .metrics()
        .then((body) => {
          res.writeHead(200, { 'content-type': metrics.registry.contentType });
          res.end(body);
        })
        .catch((err: unknown) => {
          res.writeHead(500);
          res.end(String(err));
        });
    } else if (req.url === '/healthz') {
      res.writeHead(200);
      res.end('ok\n');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
