/**
 * Every setting agentledger reads, in one zod schema, parsed once at boot.
 * Nothing else in the code base reads `process.env`: a component gets the
 * parsed, typed value it needs from the composition root.
 *
 * Defaults point at the local stack (`infra/stack.sh up`) and at
 * `docker-compose.yml`, which use the same ports and credentials.
 */
import { accessSync, constants as fsConstants, existsSync, statSync } from 'node:fs';
import { z } from 'zod';

const hostPort = /^[A-Za-z0-9_.\-[\]:]+:\d{1,5}$/;
const name = /^[A-Za-z0-9._-]{1,249}$/;

const brokerList = z
  .string()
  .transform((s) => s.split(',').map((b) => b.trim()).filter((b) => b.length > 0))
  .refine((list) => list.length > 0 && list.every((b) => hostPort.test(b)), {
    message: 'expected a comma-separated list of host:port',
  });

const topicName = z.string().regex(name, 'expected a Kafka topic name (letters, digits, . _ -)');

/** An http:// or https:// URL; `example` shows the expected shape in the error (one check, so one line per bad value). */
const httpUrlLike = (example: string) => z.string().url({ protocol: /^https?$/, message: `expected an http(s) URL such as ${example}` });

const httpUrl = httpUrlLike('http://127.0.0.1:8123');

/** A file this process can read (a CA, certificate or key): checked at boot, not at the first connection. */
const readableFile = z.string().refine(
  (path) => {
    try {
      accessSync(path, fsConstants.R_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  },
  { message: 'expected a readable file' },
);

const flag = z.enum(['true', 'false'], { message: 'expected true or false' }).transform((v) => v === 'true');

const redisUrl = z
  .string()
  .url('expected a redis:// URL such as redis://127.0.0.1:6379')
  .refine((u) => /^rediss?:\/\//.test(u), { message: 'expected a redis:// URL such as redis://127.0.0.1:6379' });

const positiveInt = (max: number) =>
  z.coerce
    .number({ message: 'expected a whole number' })
    .int('expected a whole number')
    .min(1, 'expected a number >= 1')
    .max(max, `expected a number <= ${max}`);

/** Upper bound of the alert durations: a month covers any sensible wait or window, and keeps `now - ms` far from the Unix epoch. */
const ALERT_MAX_MS = 31 * 86_400_000;
/** Upper bound of the alert counts (warnings, outcomes). */
const ALERT_MAX_COUNT = 1_000_000;

/**
 * A fraction from 0 to 1 as decimal text (`0.25`, `1`, `.5`). Not z.coerce:
 * Number() would also take `1e-1`, `0x0`, ` 0.5` and `Infinity`, none of which
 * anyone means as a failure rate.
 */
const fraction = z
  .string()
  .regex(/^(\d+(\.\d*)?|\.\d+)$/, 'expected a decimal number from 0 to 1, such as 0.25')
  .transform(Number)
  .refine((n) => n <= 1, 'expected a decimal number from 0 to 1, such as 0.25');

/** The environment variables, their defaults and what they mean. */
export const envSchema = z.object({
  /** Kafka bootstrap brokers, comma-separated host:port. Default `127.0.0.1:9092`. */
  AGENTLEDGER_KAFKA_BROKERS: brokerList.default(['127.0.0.1:9092']),
  /** Client id the Kafka clients announce. Default `agentledger`. */
  AGENTLEDGER_KAFKA_CLIENT_ID: z.string().min(1).default('agentledger'),
  /** Consumer group of `agentledger ingest`. Default `agentledger-ingest`. */
  AGENTLEDGER_KAFKA_GROUP_ID: z.string().regex(name, 'expected a group id (letters, digits, . _ -)').default('agentledger-ingest'),
  /**
   * How long the group waits for a silent consumer before giving its partitions
   * to another; a killed process holds its partitions this long. Default `30000`.
   */
  AGENTLEDGER_KAFKA_SESSION_TIMEOUT_MS: positiveInt(3_600_000).refine((n) => n >= 6000, 'expected a number >= 6000 (the broker minimum)').default(30_000),
  /**
   * Bytes `ingest` fetches per partition per Kafka request (a fetch takes
   * eight times this from all partitions together); one fetch is decoded
   * and judged as one batch, so this is what drives peak memory with small
   * records (bench/memory.ts, 300,000 craze events of ~300 B over 1,000
   * sessions: 4 MiB, as before this setting, peak RSS 934-990 MB; 1 MiB
   * 424 MB; 512 KiB 375 MB; 600,000 1 KB envelopes: 387-415 MB at 4 MiB,
   * 328 MB at 1 MiB, no slower). A record larger than this still arrives.
   * Default `1048576` (1 MiB); at least 65536.
   */
  AGENTLEDGER_KAFKA_FETCH_PARTITION_BYTES: positiveInt(256 * 1024 * 1024).refine((n) => n >= 65_536, 'expected a number >= 65536').default(1024 * 1024),
  /** Topic the loop runtime publishes Envelopes to. Default `agent.envelopes`. */
  AGENTLEDGER_ENVELOPE_TOPIC: topicName.default('agent.envelopes'),
  /** Topic craze codec events are published to. Default `craze.events`. */
  AGENTLEDGER_CRAZE_TOPIC: topicName.default('craze.events'),
  /** Dead-letter topic for records that cannot be decoded. Default `agentledger.dlq`. */
  AGENTLEDGER_DLQ_TOPIC: topicName.default('agentledger.dlq'),
  // --- Kafka TLS and SASL (all optional; README "Kafka and ClickHouse over TLS") ---
  /** `true` to connect to the brokers over TLS. Default `false`. */
  AGENTLEDGER_KAFKA_SSL: flag.default(false),
  /** PEM file of the CA that signed the brokers' certificates, when not a public one. Needs AGENTLEDGER_KAFKA_SSL=true. */
  AGENTLEDGER_KAFKA_SSL_CA_FILE: readableFile.optional(),
  /** PEM client certificate for brokers that require one (mutual TLS); with AGENTLEDGER_KAFKA_SSL_KEY_FILE. */
  AGENTLEDGER_KAFKA_SSL_CERT_FILE: readableFile.optional(),
  /** PEM private key of AGENTLEDGER_KAFKA_SSL_CERT_FILE. */
  AGENTLEDGER_KAFKA_SSL_KEY_FILE: readableFile.optional(),
  /** SASL mechanism: `plain`, `scram-sha-256` or `scram-sha-512`. Unset: no SASL. */
  AGENTLEDGER_KAFKA_SASL_MECHANISM: z.enum(['plain', 'scram-sha-256', 'scram-sha-512'], { message: 'expected plain, scram-sha-256 or scram-sha-512' }).optional(),
  /** SASL user name; needs AGENTLEDGER_KAFKA_SASL_MECHANISM. */
  AGENTLEDGER_KAFKA_SASL_USERNAME: z.string().optional(),
  /** SASL password; needs AGENTLEDGER_KAFKA_SASL_MECHANISM. Never printed. */
  AGENTLEDGER_KAFKA_SASL_PASSWORD: z.string().optional(),
  /** ClickHouse HTTP endpoint. Default `http://127.0.0.1:8123`. */
  AGENTLEDGER_CLICKHOUSE_URL: httpUrl.default('http://127.0.0.1:8123'),
  /** PEM file of a private CA that signed ClickHouse's certificate; needs an https:// AGENTLEDGER_CLICKHOUSE_URL. */
  AGENTLEDGER_CLICKHOUSE_CA_FILE: readableFile.optional(),
  /** ClickHouse user. Default `agentledger`. */
  AGENTLEDGER_CLICKHOUSE_USER: z.string().min(1, 'expected a user name').default('agentledger'),
  /** ClickHouse password. Default `agentledger` (the local stack's). */
  AGENTLEDGER_CLICKHOUSE_PASSWORD: z.string().default('agentledger'),
  /** ClickHouse database holding agentledger's tables. Default `agentledger`. */
  AGENTLEDGER_CLICKHOUSE_DATABASE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'expected a database name (letters, digits, _)')
    .default('agentledger'),
  // --- Least privilege: who migrates, and Redis's password (README "Users and passwords") ---
  /**
   * ClickHouse user for schema changes: the `migrate` command and `ingest`'s
   * migrate at start. Unset: the main user (AGENTLEDGER_CLICKHOUSE_USER), which
   * then needs DDL rights; when that is unset too, the local stack's
   * `agentledger_migrator` (password `agentledger_migrator`).
   */
  AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER: z.string().min(1, 'expected a user name').optional(),
  /** Password of AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER (empty when unset). The local stack's is `agentledger_migrator`. */
  AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD: z.string().optional(),
  /**
   * Redis for BullMQ queues. Default `redis://agentledger@127.0.0.1:6379`: the
   * local stack's ACL user. A password in the URL wins over AGENTLEDGER_REDIS_PASSWORD.
   */
  AGENTLEDGER_REDIS_URL: redisUrl.default('redis://agentledger@127.0.0.1:6379'),
  /**
   * Redis password, used when AGENTLEDGER_REDIS_URL carries none (with the URL's
   * user, or Redis's `default` user when it names none). Default `agentledger`
   * (the local stack's).
   */
  AGENTLEDGER_REDIS_PASSWORD: z.string().default('agentledger'),
  /** Prefix of every BullMQ key, so several deployments can share a Redis. Default `agentledger`. */
  AGENTLEDGER_QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected letters, digits, _ or -').default('agentledger'),
  // --- Rollups (README "Rollups") ---
  /** How often `agentledger worker` sweeps newly stored rows into the hour rollups, in ms. Default `30000`. */
  AGENTLEDGER_ROLLUP_SWEEP_MS: positiveInt(86_400_000).default(30_000),
  /**
   * How far back before the last sweep's newest ingest stamp a sweep looks
   * again, in ms: covers inserts that become visible late and consumers whose
   * clocks lag. Default `900000` (15 minutes, the clock agreement ingest's fence assumes).
   */
  AGENTLEDGER_ROLLUP_LATE_MS: positiveInt(86_400_000).default(900_000),
  /**
   * How often `agentledger worker` drops the rollup versions later commits
   * made obsolete (ClickHouse mutations, with the migrator's rights), in ms.
   * Default `3600000`.
   */
  AGENTLEDGER_ROLLUP_COMPACT_MS: positiveInt(7 * 86_400_000).default(3_600_000),
  /**
   * Loops in a recompute step above which the step reads the whole envelopes
   * table once instead of once per chunk of loops (a rebuild, a first
   * sweep). Default `4000`.
   */
  AGENTLEDGER_ROLLUP_SCAN_LOOPS: positiveInt(100_000_000).default(4000),
  // --- Alerts (README "Alerts") ---
  /** How often `agentledger worker` evaluates the alert rules, in ms. Default `30000`. */
  AGENTLEDGER_ALERT_SWEEP_MS: positiveInt(86_400_000).default(30_000),
  /**
   * Loops an alert sweep or evaluation looks at per chunk: a stop waits for
   * one chunk at most, and a sweep stopped or killed goes on from its last
   * chunk in the next job. Default `2000`.
   */
  AGENTLEDGER_ALERT_CHUNK_LOOPS: positiveInt(100_000).default(2000),
  /**
   * `agentledger ingest` asks for an alert evaluation of the loops each flush
   * touched (at most once per AGENTLEDGER_ALERT_EVALUATE_GAP_MS, one job waiting at most): a Stuck finish, a broken chain or a
   * failing sub-agent is alerted within seconds, not at the next sweep.
   * `false`: the sweeps alone. Default `true`.
   */
  AGENTLEDGER_ALERT_EVALUATE_ON_INGEST: flag.default(true),
  /**
   * Least time between two evaluations `ingest` asks for, in ms: the loops of
   * the flushes in between are evaluated together (fewer, larger
   * evaluations cost the database less). Default `5000`.
   */
  AGENTLEDGER_ALERT_EVALUATE_GAP_MS: positiveInt(600_000).default(5000),
  /** How long a firing alert stays quiet before it is notified again, in ms. Default `3600000`. */
  AGENTLEDGER_ALERT_RENOTIFY_MS: positiveInt(ALERT_MAX_MS).default(3_600_000),
  /** Rolling window of the `convergence` and `subagent_failure_rate` rules, in ms. Default `3600000`. */
  AGENTLEDGER_ALERT_WINDOW_MS: positiveInt(ALERT_MAX_MS).default(3_600_000),
  /** `convergence` fires at this many convergence warnings of a loop inside the window. Default `3`. */
  AGENTLEDGER_ALERT_CONVERGENCE_MIN_WARNINGS: positiveInt(ALERT_MAX_COUNT).default(3),
  /** `convergence` fires when one warning inside the window reports this count or more. Default `5`. */
  AGENTLEDGER_ALERT_CONVERGENCE_COUNT: positiveInt(ALERT_MAX_COUNT).default(5),
  /** `stalled_loop` fires for a running loop without an envelope (or interrupted) this long, in ms. Default `900000`. */
  AGENTLEDGER_ALERT_STALLED_AFTER_MS: positiveInt(ALERT_MAX_MS).default(900_000),
  /**
   * `stalled_loop` ignores loops quiet for longer than this, in ms, so a
   * backfill of old loops does not page. Must be above
   * AGENTLEDGER_ALERT_STALLED_AFTER_MS. Default `86400000`.
   */
  AGENTLEDGER_ALERT_MAX_AGE_MS: positiveInt(12 * ALERT_MAX_MS).default(86_400_000),
  /** `waiting_on_human` fires once a HumanRequested has been unanswered this long, in ms. Default `1800000`. */
  AGENTLEDGER_ALERT_HUMAN_WAIT_MS: positiveInt(ALERT_MAX_MS).default(1_800_000),
  /** `subagent_failure_rate` fires at or above this fraction of failed sub-agents of a kind, 0 to 1. Default `0.25`. */
  AGENTLEDGER_ALERT_SUBAGENT_FAILURE_RATE: fraction.default(0.25),
  /** `subagent_failure_rate` needs at least this many outcomes of a kind inside the window. Default `20`. */
  AGENTLEDGER_ALERT_SUBAGENT_MIN_OUTCOMES: positiveInt(ALERT_MAX_COUNT).default(20),
  /** `chain_integrity` fires for a gap still unfilled this long after it was stored, in ms. Default `300000`. */
  AGENTLEDGER_ALERT_GAP_GRACE_MS: positiveInt(ALERT_MAX_MS).default(300_000),
  /**
   * Where alert notifications are POSTed (JSON, Slack-compatible `text`).
   * Unset: transitions are recorded and listed by `agentledger alerts`, not
   * sent. Shown as its origin only: the path of many webhooks is their token.
   */
  AGENTLEDGER_ALERT_WEBHOOK_URL: httpUrlLike('https://hooks.example.com/agentledger').optional(),
  /** Shared secret signing every notification (HMAC-SHA256); needs AGENTLEDGER_ALERT_WEBHOOK_URL. Never printed. */
  AGENTLEDGER_ALERT_WEBHOOK_SECRET: z.string().optional(),
  /**
   * The `spend_budget` rule's budgets: a JSON file of USD limits per UTC day,
   * root loop, loop name and craze project (README "Alerts"), read and checked
   * when `agentledger worker` starts. Unset: no budget, the rule is silent.
   */
  AGENTLEDGER_ALERT_BUDGETS_FILE: z.string().optional(),
  /** Longest one webhook POST may take before the attempt counts as failed, in ms. Default `10000`. */
  AGENTLEDGER_ALERT_WEBHOOK_TIMEOUT_MS: positiveInt(600_000).default(10_000),
  /** Rows per ClickHouse insert before a flush. Default `5000`. */
  AGENTLEDGER_BATCH_MAX_ROWS: positiveInt(1_000_000).default(5000),
  /** Longest a row waits in a batch before a flush, in ms. Default `1000`. */
  AGENTLEDGER_BATCH_MAX_WAIT_MS: positiveInt(600_000).default(1000),
  /**
   * Bytes of rows (estimated from their text) per ClickHouse insert before a
   * flush. Default `16777216` (16 MiB). Kept well under the ~256 MiB at which
   * current ClickHouse splits one insert into several parts, which would make
   * it land in pieces. At most 134217728.
   */
  AGENTLEDGER_BATCH_MAX_BYTES: positiveInt(128 * 1024 * 1024).default(16 * 1024 * 1024),
  /**
   * Loop heads `ingest` keeps in memory (least recently used evicted first;
   * about 400 B of heap each, 8 MB at the default): size it to the loops
   * that send envelopes within a few minutes of each other. Only heads whose
   * rows and loop_heads row are durable are cached, so an evicted loop's
   * head is read back from loop_heads when its next envelope comes; heads
   * still pending in a buffer are never evicted (they are not in this
   * budget). Default `20000` (bench/memory.ts: 100,000 made ingest's peak
   * RSS over 200,000 loops 1.37x that over 5,000; 20,000 1.19x).
   */
  AGENTLEDGER_HEAD_CACHE_ENTRIES: positiveInt(10_000_000).default(20_000),
  /**
   * craze sessions `ingest` keeps the accounting state of in memory (every
   * incarnation of a session together; least recently used evicted first).
   * Only a session whose rows are all durable is evicted, and read back from
   * craze_events (its incarnations' head rows) when its next event comes; a
   * session with rows still in a buffer is kept beyond the budget. Default `10000`.
   */
  AGENTLEDGER_CRAZE_CACHE_ENTRIES: positiveInt(10_000_000).default(10_000),
  /**
   * Whether `ingest` decodes and verifies the next batches while the previous
   * flush's insert is in flight (at most one flush in flight; offsets are
   * still committed only after their rows are durable). Default `true`.
   */
  AGENTLEDGER_BATCH_OVERLAP: flag.default(true),
  /**
   * The stall watchdog of `ingest`: when no rows were made durable for this
   * long while records wait in its partitions (or Kafka does not answer
   * the check), it says why and exits 1 for its supervisor to restart it.
   * `0` turns it off. Default `300000`.
   */
  AGENTLEDGER_INGEST_STALL_EXIT_MS: z.coerce
    .number({ message: 'expected a whole number' })
    .int('expected a whole number')
    .refine((n) => n === 0 || (n >= 1000 && n <= 86_400_000), 'expected 0 (off) or a number from 1000 to 86400000')
    .default(300_000),
  /** Port of the Prometheus `/metrics` endpoint; `0` turns it off. Default `9464`. */
  AGENTLEDGER_METRICS_PORT: z.coerce
    .number({ message: 'expected a port number' })
    .int('expected a port number')
    .min(0, 'expected a port number 0-65535')
    .max(65535, 'expected a port number 0-65535')
    .default(9464),
  /**
   * How long a stopping `agentledger worker` (SIGTERM, SIGINT) waits for its
   * jobs in hand, in ms: each stops at its next step (a rollup step, a chunk
   * of alert loops) and is handed back to the queue for the next worker; one
   * that has not stopped by then is left to lapse (another worker takes it
   * over within about 10 s). Default `10000`.
   */
  AGENTLEDGER_WORKER_GRACE_MS: positiveInt(600_000).default(10_000),
  /** Port of `agentledger worker`'s Prometheus `/metrics` endpoint; `0` turns it off. Default `9465`. */
  AGENTLEDGER_WORKER_METRICS_PORT: z.coerce
    .number({ message: 'expected a port number' })
    .int('expected a port number')
    .min(0, 'expected a port number 0-65535')
    .max(65535, 'expected a port number 0-65535')
    .default(9465),
  /**
   * Address the metrics endpoint listens on. Default `127.0.0.1` (this host
   * only); `0.0.0.0` for a scraper on another host.
   */
  AGENTLEDGER_METRICS_HOST: z.string().regex(/^[A-Za-z0-9.:_-]{1,253}$/, 'expected a host name or IP address').default('127.0.0.1'),
  // --- agentledger serve: the page and its read-only API (README "The page") ---
  /** Port `agentledger serve` listens on (--port wins). Default `8080`. */
  AGENTLEDGER_SERVE_PORT: z.coerce
    .number({ message: 'expected a port number' })
    .int('expected a port number')
    .min(1, 'expected a port number 1-65535')
    .max(65535, 'expected a port number 1-65535')
    .default(8080),
  /** Address `agentledger serve` listens on (--host wins). Default `127.0.0.1` (this host only). */
  AGENTLEDGER_SERVE_HOST: z.string().regex(/^[A-Za-z0-9.:_-]{1,253}$/, 'expected a host name or IP address').default('127.0.0.1'),
  /**
   * When set, `agentledger serve` answers only requests carrying it: the header
   * `Authorization: Bearer <token>`, or basic auth with it as the password (any
   * user name; the browser asks once). At least 16 characters. Never printed.
   */
  AGENTLEDGER_SERVE_TOKEN: z.string().min(16, 'expected at least 16 characters').optional(),
  /** The ClickHouse user `serve` reads as: a read-only one. Default `agentledger_dashboard` (the local stack's). */
  AGENTLEDGER_SERVE_CLICKHOUSE_USER: z.string().min(1, 'expected a user name').default('agentledger_dashboard'),
  /** Password of AGENTLEDGER_SERVE_CLICKHOUSE_USER. Default `agentledger_dashboard` (the local stack's). */
  AGENTLEDGER_SERVE_CLICKHOUSE_PASSWORD: z.string().default('agentledger_dashboard'),
  /**
   * How the loop runtime hashed Seq: `binary` (8 bytes big-endian, the default)
   * or `decimal` (ASCII digits), for producers that hashed it as text.
   */
  AGENTLEDGER_SEQ_ENCODING: z.enum(['binary', 'decimal']).default('binary'),
  /** Largest envelope payload accepted, in bytes; larger records are dead-lettered. Default `4194304` (4 MiB). */
  AGENTLEDGER_MAX_PAYLOAD_BYTES: positiveInt(256 * 1024 * 1024).default(4 * 1024 * 1024),
  /** `debug`, `info`, `warn` or `error`. Default `info`. */
  AGENTLEDGER_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
});

export type Env = z.infer<typeof envSchema>;

/** Thresholds of the alert rules (src/alerts/rules.ts reads them as AlertRuleConfig), with their defaults. */
export interface AlertRuleSettings {
  /** Rolling window of `convergence` and `subagent_failure_rate` (default 1 h). */
  readonly windowMs: number;
  /** `convergence` fires at this many warnings inside the window (default 3). */
  readonly convergenceMinWarnings: number;
  /** `convergence` fires when one warning inside the window reports this count (default 5). */
  readonly convergenceCount: number;
  /** `stalled_loop` fires after this long without an envelope, or interrupted (default 15 min). */
  readonly stalledAfterMs: number;
  /** `stalled_loop` ignores loops quiet for longer than this, so a backfill does not page (default 24 h). */
  readonly maxAgeMs: number;
  /** `waiting_on_human` fires once a request has been unanswered this long (default 30 min). */
  readonly humanWaitMs: number;
  /** `subagent_failure_rate` fires at or above this fraction of failures, 0..1 (default 0.25). */
  readonly subagentFailureRate: number;
  /** `subagent_failure_rate` needs at least this many outcomes in the window to fire (default 20). */
  readonly subagentMinOutcomes: number;
  /** `chain_integrity` fires for a gap still unfilled this long after it was stored (default 5 min). */
  readonly gapGraceMs: number;
}

/** Where notifications go (src/alerts/webhook.ts reads it as Webhook). */
export interface WebhookSettings {
  readonly url: string;
  readonly secret: string | undefined;
  readonly timeoutMs: number;
}

export interface AlertsConfig {
  readonly sweepMs: number;
  /** Loops per chunk of an alert sweep or evaluation. */
  readonly chunkLoops: number;
  readonly renotifyMs: number;
  readonly evaluateOnIngest: boolean;
  readonly evaluateGapMs: number;
  /** The budgets file of `spend_budget`; undefined: none. */
  readonly budgetsFile: string | undefined;
  readonly rules: AlertRuleSettings;
  /** Undefined when no AGENTLEDGER_ALERT_WEBHOOK_URL is set. */
  readonly webhook: WebhookSettings | undefined;
}

/** The parsed configuration, grouped by the component that uses it. */
export interface Config {
  readonly kafka: {
    readonly brokers: readonly string[];
    readonly clientId: string;
    readonly groupId: string;
    readonly sessionTimeoutMs: number;
    /** Bytes fetched per partition per request (AGENTLEDGER_KAFKA_FETCH_PARTITION_BYTES). */
    readonly fetchPartitionBytes: number;
    readonly topics: { readonly envelopes: string; readonly craze: string; readonly deadLetter: string };
    /** TLS to the brokers (undefined: plaintext); file paths, read when a client is made. */
    readonly ssl: { readonly caFile?: string; readonly certFile?: string; readonly keyFile?: string } | undefined;
    readonly sasl: { readonly mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; readonly username: string; readonly password: string } | undefined;
  };
  readonly clickhouse: {
    readonly url: string;
    readonly user: string;
    readonly password: string;
    readonly database: string;
    /** PEM file of a private CA for an https:// URL. */
    readonly caFile: string | undefined;
    /** Who runs migrations: AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER, else the main user (see migratorSettings()). */
    readonly migrator: { readonly user: string; readonly password: string };
  };
  readonly redis: { readonly url: string; readonly queuePrefix: string };
  readonly rollups: { readonly sweepMs: number; readonly lateMs: number; readonly compactMs: number; readonly scanLoops: number };
  readonly alerts: AlertsConfig;
  readonly batch: { readonly maxRows: number; readonly maxWaitMs: number; readonly maxBytes: number; readonly overlap: boolean };
  /** AGENTLEDGER_INGEST_STALL_EXIT_MS (0: off). */
  readonly stallExitMs: number;
  readonly envelopes: { readonly seqEncoding: 'binary' | 'decimal'; readonly maxPayloadBytes: number };
  /** In-memory caches of durable per-loop and per-session state (entries). */
  readonly caches: { readonly headEntries: number; readonly crazeSessions: number };
  readonly metricsPort: number;
  /** The worker's metrics port (0: off). */
  readonly workerMetricsPort: number;
  /** How long a stopping worker waits for its jobs in hand, in ms. */
  readonly workerGraceMs: number;
  readonly metricsHost: string;
  /** `agentledger serve`: where it listens, its token (undefined: none), the read-only ClickHouse user it reads as. */
  readonly serve: {
    readonly port: number;
    readonly host: string;
    readonly token: string | undefined;
    readonly clickhouse: { readonly user: string; readonly password: string };
  };
  readonly logLevel: Env['AGENTLEDGER_LOG_LEVEL'];
}

/** A setting that failed validation; `message` is the one line shown to the user. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
  }
}

/**
 * Parses the environment. Unset and empty variables take their defaults; a
 * wrong value throws a ConfigError naming the variable, the value and what is
 * expected (one line per bad setting).
 */
export function parseConfig(env: NodeJS.ProcessEnv): Config {
  const relevant: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') relevant[key] = value;
  }
  const parsed = envSchema.safeParse(relevant);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? '');
      return `invalid setting ${key}=${shownValue(key, relevant[key] ?? '')}: ${issue.message}`;
    });
    throw new ConfigError(problems);
  }
  const e = parsed.data;
  const combinations = [...tlsSaslProblems(e), ...migratorProblems(e), ...alertProblems(e)];
  if (combinations.length > 0) throw new ConfigError(combinations);
  return {
    kafka: {
      brokers: e.AGENTLEDGER_KAFKA_BROKERS,
      clientId: e.AGENTLEDGER_KAFKA_CLIENT_ID,
      groupId: e.AGENTLEDGER_KAFKA_GROUP_ID,
      sessionTimeoutMs: e.AGENTLEDGER_KAFKA_SESSION_TIMEOUT_MS,
      fetchPartitionBytes: e.AGENTLEDGER_KAFKA_FETCH_PARTITION_BYTES,
      topics: {
        envelopes: e.AGENTLEDGER_ENVELOPE_TOPIC,
        craze: e.AGENTLEDGER_CRAZE_TOPIC,
        deadLetter: e.AGENTLEDGER_DLQ_TOPIC,
      },
      ssl: e.AGENTLEDGER_KAFKA_SSL
        ? { caFile: e.AGENTLEDGER_KAFKA_SSL_CA_FILE, certFile: e.AGENTLEDGER_KAFKA_SSL_CERT_FILE, keyFile: e.AGENTLEDGER_KAFKA_SSL_KEY_FILE }
        : undefined,
      sasl: e.AGENTLEDGER_KAFKA_SASL_MECHANISM
        ? { mechanism: e.AGENTLEDGER_KAFKA_SASL_MECHANISM, username: e.AGENTLEDGER_KAFKA_SASL_USERNAME ?? '', password: e.AGENTLEDGER_KAFKA_SASL_PASSWORD ?? '' }
        : undefined,
    },
    clickhouse: {
      url: e.AGENTLEDGER_CLICKHOUSE_URL,
      user: e.AGENTLEDGER_CLICKHOUSE_USER,
      password: e.AGENTLEDGER_CLICKHOUSE_PASSWORD,
      database: e.AGENTLEDGER_CLICKHOUSE_DATABASE,
      caFile: e.AGENTLEDGER_CLICKHOUSE_CA_FILE,
      migrator: e.AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER
        ? { user: e.AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER, password: e.AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD ?? '' }
        : env['AGENTLEDGER_CLICKHOUSE_USER'] === undefined
          ? // Every default points at the local stack, this one too: its writer has no DDL, its migrator does.
            STACK_MIGRATOR
          : { user: e.AGENTLEDGER_CLICKHOUSE_USER, password: e.AGENTLEDGER_CLICKHOUSE_PASSWORD },
    },
    redis: { url: redisUrlWithPassword(e.AGENTLEDGER_REDIS_URL, e.AGENTLEDGER_REDIS_PASSWORD), queuePrefix: e.AGENTLEDGER_QUEUE_PREFIX },
    rollups: { sweepMs: e.AGENTLEDGER_ROLLUP_SWEEP_MS, lateMs: e.AGENTLEDGER_ROLLUP_LATE_MS, compactMs: e.AGENTLEDGER_ROLLUP_COMPACT_MS, scanLoops: e.AGENTLEDGER_ROLLUP_SCAN_LOOPS },
    alerts: {
      sweepMs: e.AGENTLEDGER_ALERT_SWEEP_MS,
      chunkLoops: e.AGENTLEDGER_ALERT_CHUNK_LOOPS,
      renotifyMs: e.AGENTLEDGER_ALERT_RENOTIFY_MS,
      evaluateOnIngest: e.AGENTLEDGER_ALERT_EVALUATE_ON_INGEST,
      evaluateGapMs: e.AGENTLEDGER_ALERT_EVALUATE_GAP_MS,
      budgetsFile: e.AGENTLEDGER_ALERT_BUDGETS_FILE,
      rules: {
        windowMs: e.AGENTLEDGER_ALERT_WINDOW_MS,
        convergenceMinWarnings: e.AGENTLEDGER_ALERT_CONVERGENCE_MIN_WARNINGS,
        convergenceCount: e.AGENTLEDGER_ALERT_CONVERGENCE_COUNT,
        stalledAfterMs: e.AGENTLEDGER_ALERT_STALLED_AFTER_MS,
        maxAgeMs: e.AGENTLEDGER_ALERT_MAX_AGE_MS,
        humanWaitMs: e.AGENTLEDGER_ALERT_HUMAN_WAIT_MS,
        subagentFailureRate: e.AGENTLEDGER_ALERT_SUBAGENT_FAILURE_RATE,
        subagentMinOutcomes: e.AGENTLEDGER_ALERT_SUBAGENT_MIN_OUTCOMES,
        gapGraceMs: e.AGENTLEDGER_ALERT_GAP_GRACE_MS,
      },
      webhook:
        e.AGENTLEDGER_ALERT_WEBHOOK_URL === undefined
          ? undefined
          : { url: e.AGENTLEDGER_ALERT_WEBHOOK_URL, secret: e.AGENTLEDGER_ALERT_WEBHOOK_SECRET, timeoutMs: e.AGENTLEDGER_ALERT_WEBHOOK_TIMEOUT_MS },
    },
    batch: { maxRows: e.AGENTLEDGER_BATCH_MAX_ROWS, maxWaitMs: e.AGENTLEDGER_BATCH_MAX_WAIT_MS, maxBytes: e.AGENTLEDGER_BATCH_MAX_BYTES, overlap: e.AGENTLEDGER_BATCH_OVERLAP },
    stallExitMs: e.AGENTLEDGER_INGEST_STALL_EXIT_MS,
    envelopes: { seqEncoding: e.AGENTLEDGER_SEQ_ENCODING, maxPayloadBytes: e.AGENTLEDGER_MAX_PAYLOAD_BYTES },
    caches: { headEntries: e.AGENTLEDGER_HEAD_CACHE_ENTRIES, crazeSessions: e.AGENTLEDGER_CRAZE_CACHE_ENTRIES },
    metricsPort: e.AGENTLEDGER_METRICS_PORT,
    workerMetricsPort: e.AGENTLEDGER_WORKER_METRICS_PORT,
    workerGraceMs: e.AGENTLEDGER_WORKER_GRACE_MS,
    metricsHost: e.AGENTLEDGER_METRICS_HOST,
    serve: {
      port: e.AGENTLEDGER_SERVE_PORT,
      host: e.AGENTLEDGER_SERVE_HOST,
      token: e.AGENTLEDGER_SERVE_TOKEN,
      clickhouse: { user: e.AGENTLEDGER_SERVE_CLICKHOUSE_USER, password: e.AGENTLEDGER_SERVE_CLICKHOUSE_PASSWORD },
    },
    logLevel: e.AGENTLEDGER_LOG_LEVEL,
  };
}

/**
 * A rejected value as the error line shows it: a password or secret not at
 * all, a URL without its password, a webhook URL as its origin only.
 */
function shownValue(key: string, value: string): string {
  if (key.includes('PASSWORD') || key.includes('SECRET') || key.includes('TOKEN')) return '(hidden)';
  if (key === 'AGENTLEDGER_ALERT_WEBHOOK_URL') return JSON.stringify(redactWebhookUrl(value));
  return JSON.stringify(key.endsWith('_URL') ? redactUrl(value) : value);
}

/**
 * Settings that are each valid but do not go together (TLS files without TLS,
 * half a client certificate, SASL without its mechanism or credentials): one
 * line each, naming the setting to change. Kept out of the schema so
 * `envSchema.shape` stays a plain object of the variables.
 */
function tlsSaslProblems(e: Env): string[] {
  const problems: string[] = [];
  const needsSsl = ['AGENTLEDGER_KAFKA_SSL_CA_FILE', 'AGENTLEDGER_KAFKA_SSL_CERT_FILE', 'AGENTLEDGER_KAFKA_SSL_KEY_FILE'] as const;
  for (const key of needsSsl) {
    if (e[key] !== undefined && !e.AGENTLEDGER_KAFKA_SSL) problems.push(`invalid setting ${key}: only used over TLS; set AGENTLEDGER_KAFKA_SSL=true or unset it`);
  }
  if ((e.AGENTLEDGER_KAFKA_SSL_CERT_FILE === undefined) !== (e.AGENTLEDGER_KAFKA_SSL_KEY_FILE === undefined)) {
    const missing = e.AGENTLEDGER_KAFKA_SSL_CERT_FILE === undefined ? 'AGENTLEDGER_KAFKA_SSL_CERT_FILE' : 'AGENTLEDGER_KAFKA_SSL_KEY_FILE';
    problems.push(`missing setting ${missing}: a client certificate needs both AGENTLEDGER_KAFKA_SSL_CERT_FILE and AGENTLEDGER_KAFKA_SSL_KEY_FILE`);
  }
  if (e.AGENTLEDGER_KAFKA_SASL_MECHANISM !== undefined) {
    for (const key of ['AGENTLEDGER_KAFKA_SASL_USERNAME', 'AGENTLEDGER_KAFKA_SASL_PASSWORD'] as const) {
      if (e[key] === undefined) problems.push(`missing setting ${key}: AGENTLEDGER_KAFKA_SASL_MECHANISM=${e.AGENTLEDGER_KAFKA_SASL_MECHANISM} needs it`);
    }
  } else {
    for (const key of ['AGENTLEDGER_KAFKA_SASL_USERNAME', 'AGENTLEDGER_KAFKA_SASL_PASSWORD'] as const) {
      if (e[key] !== undefined) problems.push(`invalid setting ${key}: only used with SASL; set AGENTLEDGER_KAFKA_SASL_MECHANISM (plain, scram-sha-256 or scram-sha-512) or unset it`);
    }
  }
  if (e.AGENTLEDGER_CLICKHOUSE_CA_FILE !== undefined && !e.AGENTLEDGER_CLICKHOUSE_URL.startsWith('https://')) {
    problems.push('invalid setting AGENTLEDGER_CLICKHOUSE_CA_FILE: only used over HTTPS; give AGENTLEDGER_CLICKHOUSE_URL as https://… or unset it');
  }
  return problems;
}

/** The local stack's migrator (infra/clickhouse/users.d/agentledger.xml), used when no ClickHouse user is set at all. */
const STACK_MIGRATOR = { user: 'agentledger_migrator', password: 'agentledger_migrator' } as const;

/** A migrator password with no migrator user would silently go unused: most likely the user was forgotten. */
function migratorProblems(e: Env): string[] {
  return e.AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD !== undefined && e.AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER === undefined
    ? ['missing setting AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER: AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD is only used with it']
    : [];
}

/**
 * Alert settings that cannot work together: a webhook secret with no webhook
 * would sign nothing (most likely the URL was forgotten), and a max age not
 * above the stall time would drop every quiet loop before it could count as
 * stalled, so `stalled_loop` would never fire for one.
 */
function alertProblems(e: Env): string[] {
  const problems: string[] = [];
  if (e.AGENTLEDGER_ALERT_WEBHOOK_SECRET !== undefined && e.AGENTLEDGER_ALERT_WEBHOOK_URL === undefined) {
    problems.push('missing setting AGENTLEDGER_ALERT_WEBHOOK_URL: AGENTLEDGER_ALERT_WEBHOOK_SECRET is only used with it');
  }
  if (e.AGENTLEDGER_ALERT_MAX_AGE_MS <= e.AGENTLEDGER_ALERT_STALLED_AFTER_MS) {
    problems.push(
      `invalid setting AGENTLEDGER_ALERT_MAX_AGE_MS=${e.AGENTLEDGER_ALERT_MAX_AGE_MS}: must be above AGENTLEDGER_ALERT_STALLED_AFTER_MS=${e.AGENTLEDGER_ALERT_STALLED_AFTER_MS}, else no quiet loop is ever reported stalled`,
    );
  }
  return problems;
}

/**
 * The Redis URL every client connects with: AGENTLEDGER_REDIS_PASSWORD written
 * into it unless it has a password of its own. One URL carries the credentials,
 * so each place that connects (BullMQ, doctor) authenticates the same way and
 * redactUrl() hides them wherever it is shown.
 */
export function redisUrlWithPassword(url: string, password: string): string {
  const u = new URL(url);
  if (u.password !== '' || password === '') return url;
  u.password = encodeURIComponent(password);
  return u.toString();
}

/** The ClickHouse settings to migrate with: the main ones, as the migrator user. */
export function migratorSettings(clickhouse: Config['clickhouse']): Config['clickhouse'] {
  return { ...clickhouse, user: clickhouse.migrator.user, password: clickhouse.migrator.password };
}

/**
 * The process environment, with `./.env` (if present) filling in what the
 * environment leaves unset. The one place that reads `process.env`.
 */
export function loadEnv(cwd: string = process.cwd()): NodeJS.ProcessEnv {
  const file = `${cwd}/.env`;
  if (existsSync(file)) process.loadEnvFile(file);
  return process.env;
}

/** A URL with its password (user-info) replaced by `***`: what may be printed or logged. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password === '') return url;
    u.password = '***';
    return u.toString();
  } catch {
    // Not a URL after all: hide whatever could be user-info.
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/**
 * A webhook URL as it may be printed or logged: its scheme, host and port
 * only. Unlike a service URL, a webhook's path and query are often its
 * credential (Slack's and Discord's carry the token there), and it may carry
 * a user and password too.
 */
export function redactWebhookUrl(url: string): string {
  try {
    const u = new URL(url);
    const bare = u.username === '' && u.password === '' && u.pathname === '/' && u.search === '' && u.hash === '';
    return `${u.protocol}//${u.host}/${bare ? '' : '***'}`;
  } catch {
    return '(hidden)';
  }
}

/** The settings as they may be shown: every password hidden, in its field and in URLs. */
export function redactConfig(config: Config): Config {
  return {
    ...config,
    clickhouse: {
      ...config.clickhouse,
      url: redactUrl(config.clickhouse.url),
      password: config.clickhouse.password ? '(set)' : '(empty)',
      migrator: { ...config.clickhouse.migrator, password: config.clickhouse.migrator.password ? '(set)' : '(empty)' },
    },
    redis: { ...config.redis, url: redactUrl(config.redis.url) },
    alerts: {
      ...config.alerts,
      webhook: config.alerts.webhook && {
        ...config.alerts.webhook,
        url: redactWebhookUrl(config.alerts.webhook.url),
        secret: config.alerts.webhook.secret === undefined ? '(unset)' : '(set)',
      },
    },
    kafka: { ...config.kafka, sasl: config.kafka.sasl && { ...config.kafka.sasl, password: config.kafka.sasl.password ? '(set)' : '(empty)' } },
    serve: {
      ...config.serve,
      token: config.serve.token === undefined ? undefined : '(set)',
      clickhouse: { ...config.serve.clickhouse, password: config.serve.clickhouse.password ? '(set)' : '(empty)' },
    },
  };
}
