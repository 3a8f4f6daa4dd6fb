/**
 * The Kafka client: the one place a kafkajs client, topic or producer is
 * made; kafkajs's own log lines go through agentledger's logger.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Kafka, logLevel as KafkaLogLevel, type Admin, type KafkaConfig, type LogEntry, type ProducerConfig } from 'kafkajs';
import type { Config } from '../config/index.js';
import { failureMessage } from '../errors/errors.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { createCheckedProducer, type CheckedProducer } from './checked-send.js';
import { registerCodecs } from './codecs.js';
import { kafkaConnectFailure, KafkaUnavailableError } from './errors.js';
import { fixRequestQueueTimer } from './request-queue-timer.js';
import { fixRunnerStop } from './runner-stop.js';

export type KafkaSettings = Config['kafka'];

/**
 * The TLS and SASL part of a kafkajs client config. The CA, certificate and
 * key files are read here, when a client is made (the config only checked
 * that they are readable).
 */
export function kafkaSecurityOptions(
  settings: Pick<KafkaSettings, 'ssl' | 'sasl'>,
  read: (path: string) => Buffer = (path) => readFileSync(path),
): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const options: Pick<KafkaConfig, 'ssl' | 'sasl'> = {};
  const { ssl, sasl } = settings;
  if (ssl) {
    const tls: ConnectionOptions = {};
    if (ssl.caFile !== undefined) tls.ca = [read(ssl.caFile)];
    if (ssl.certFile !== undefined) tls.cert = read(ssl.certFile);
    if (ssl.keyFile !== undefined) tls.key = read(ssl.keyFile);
    // `true`: Node's own CA list and checks, as for any public TLS endpoint.
    options.ssl = Object.keys(tls).length > 0 ? tls : true;
  }
  if (sasl) {
    const { mechanism, username, password } = sasl;
    // One branch per mechanism: kafkajs types each mechanism's options apart.
    options.sasl = mechanism === 'plain' ? { mechanism, username, password } : mechanism === 'scram-sha-256' ? { mechanism, username, password } : { mechanism, username, password };
  }
  return options;
}

/**
 * The level a kafkajs ERROR line deserves here. kafkajs logs every error
 * answer of a broker ("Response JoinGroup(…)": "The coordinator is
 * loading", "not the correct coordinator", at every start and rebalance)
 * before its retrier decides anything: a retried one is expected, and one
 * that ends the retries reaches agentledger as an error it reports itself.
 * A lost connection, and the consumer restarting after one, are what an
 * operator wants to know of a broker restart, but not as errors.
 */
export function kafkaErrorLevel(message: string): 'debug' | 'warn' | 'error' {
  if (/^Response \w+\(key: \d+, version: \d+\)/.test(message)) return 'debug';
  if (/^(Connection error|Connection timeout|Failed to connect to seed broker|Closed connection|Crash: KafkaJS(Connection|NumberOfRetriesExceeded|BrokerNotFound)|Restarting the consumer)/.test(message)) return 'warn';
  // A member the coordinator expelled or asked to rejoin: kafkajs rejoins by
  // itself (ingest's fence drops what the old membership buffered).
  if (/^(The coordinator is not aware of this member|The group is rebalancing|The coordinator is (loading|not available))/.test(message)) return 'warn';
  return 'error';
}

/** How long a repeated warning of kafkajs (one per retry while a broker is away) is held back. */
const REPEAT_WINDOW_MS = 10_000;

/**
 * kafkajs's log lines through agentledger's logger. Their stack traces go to
 * debug: at the default level an error is one line, and a warning repeated
 * while a broker is away is said once per 10 s, with how many were held
 * back. A startup client sends everything to debug, since its failure is
 * reported once, by the caller, naming the setting to check.
 */
export function kafkaLogCreator(log: Logger, phase: 'startup' | 'running', now: () => number = Date.now): KafkaConfig['logCreator'] {
  const kafkaLog = log.child({ component: 'kafkajs' });
  const said = new Map<string, { at: number; held: number }>();
  return () =>
    ({ level, log: entry }: LogEntry) => {
      const { message, stack, ...rest } = entry as LogEntry['log'] & { stack?: unknown };
      const fields: Record<string, unknown> = rest;
      delete fields['timestamp'];
      delete fields['logger'];
      const as = phase === 'startup' || level > KafkaLogLevel.WARN ? 'debug' : level <= KafkaLogLevel.ERROR ? kafkaErrorLevel(message) : 'warn';
      if (as === 'debug') {
        kafkaLog.debug(message, stack === undefined ? fields : { ...fields, stack });
        return;
      }
      if (as === 'warn') {
        // One key per kind of line, not per retry count or address.
        const key = message.replace(/\d+/g, '#');
        const last = said.get(key);
        const t = now();
        if (last !== undefined && t - last.at < REPEAT_WINDOW_MS) {
          last.held++;
          return;
        }
        if (said.size >= 1000) said.clear();
        said.set(key, { at: t, held: 0 });
        kafkaLog.warn(message, last !== undefined && last.held > 0 ? { ...fields, repeatedBefore: last.held } : fields);
      } else kafkaLog.error(message, fields);
      if (stack !== undefined) kafkaLog.debug(`${message} (stack)`, { stack });
    };
}

/**
 * kafkajs client config. Running clients retry for 35 s to a minute (with
 * connection timeouts), riding out a broker restart, at most 5 s apart so
 * that they find a broker that is back within seconds. A startup client gives up after ~2 s of refused
 * connections (under 10 s when every attempt times out): a command started
 * with Kafka away or misconfigured says so at once instead of retrying with
 * nobody watching.
 */
export function kafkaClientConfig(settings: KafkaSettings, log: Logger, phase: 'startup' | 'running', read?: (path: string) => Buffer): KafkaConfig {
  const timing =
    phase === 'running'
      ? { connectionTimeout: 5_000, retry: { initialRetryTime: 300, retries: 10, maxRetryTime: 5_000 } }
      : { connectionTimeout: 2_000, requestTimeout: 10_000, retry: { initialRetryTime: 250, retries: 3, maxRetryTime: 2_000 } };
  return {
    clientId: settings.clientId,
    brokers: [...settings.brokers],
    ...kafkaSecurityOptions(settings, read),
    ...timing,
    logLevel: KafkaLogLevel.WARN,
    logCreator: kafkaLogCreator(log, phase),
  };
}

/** Per client made by createKafka: its startup twin, for the first contact of a command. */
const startupClients = new WeakMap<Kafka, { readonly client: Kafka; readonly brokers: string }>();
/** Per client made by createKafka: the logger it was made with, for what its producers say. */
const clientLogs = new WeakMap<Kafka, Logger>();

export function createKafka(settings: KafkaSettings, log: Logger): Kafka {
  // Every client of the process reads and writes snappy, lz4 and zstd
  // batches (kafkajs alone refuses them): one table, registered once.
  registerCodecs();
  // A consumer stopped while kafkajs rebuilds its fetchers must not spin.
  fixRunnerStop();
  // Node 23 and later print a warning for kafkajs's negative timer delays.
  fixRequestQueueTimer();
  const kafka = new Kafka(kafkaClientConfig(settings, log, 'running'));
  // ensureTopics gets only the client (its callers hold nothing else): the
  // twin is found from it. Making a client opens no connection.
  startupClients.set(kafka, { client: new Kafka(kafkaClientConfig(settings, log, 'startup')), brokers: settings.brokers.join(',') });
  clientLogs.set(kafka, log);
  return kafka;
}

/**
 * Runs `fn` with an admin of the startup twin of `kafka`: bounded retries, one
 * readable error. (A client not made by createKafka is used as it is.)
 */
export async function withStartupAdmin<T>(kafka: Kafka, what: string, fn: (admin: Admin) => Promise<T>): Promise<T> {
  const startup = startupClients.get(kafka);
  const brokers = startup?.brokers ?? 'the configured brokers';
  const admin = (startup?.client ?? kafka).admin();
  try {
    await admin.connect();
  } catch (err) {
    throw kafkaConnectFailure(brokers, err);
  }
  try {
    return await fn(admin);
  } catch (err) {
    const message = failureMessage(err);
    throw new KafkaUnavailableError(`Kafka at ${brokers}: ${what} failed (${message}): check the brokers' logs and this client's rights`, { cause: err });
  } finally {
    await admin.disconnect();
  }
}

/**
 * Creates the topics agentledger reads and writes if they do not exist yet,
 * with the brokers' own `default.replication.factor` (1 on the local stack,
 * 3 on the local cluster): a topic made with fewer replicas than the cluster
 * keeps would lose its partitions with one broker.
 */
export async function ensureTopics(
  kafka: Kafka,
  topics: readonly { topic: string; numPartitions?: number; configEntries?: { name: string; value: string }[] }[],
): Promise<void> {
  await withStartupAdmin(kafka, `creating topic(s) ${topics.map((t) => t.topic).join(', ')}`, async (admin) => {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.topic));
    if (missing.length === 0) return;
    try {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((t) => ({ topic: t.topic, numPartitions: t.numPartitions ?? 4, configEntries: t.configEntries ?? [] })),
      });
    } catch (err) {
      // KRaft: the controller created them, but the broker kafkajs asked
      // for their leaders has not applied that yet, and kafkajs waits out
      // only LEADER_NOT_AVAILABLE (seen in producers.test.ts on a loaded
      // machine, the topics loaded on the broker a second later).
      if (!notYetKnown(err)) throw err;
    }
    await untilLeaders(admin, missing.map((t) => t.topic));
  });
}

/** Metadata errors of a topic the broker asked does not know or lead yet. */
const NOT_YET_KNOWN = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE']);

function notYetKnown(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (NOT_YET_KNOWN.has((e as { type?: string }).type ?? '')) return true;
  }
  return false;
}

/** How long ensureTopics waits for the brokers to know the leaders of topics it created. */
export const TOPIC_LEADERS_WAIT_MS = 30_000;

/**
 * Resolves once the brokers' metadata names a leader for every partition of
 * `topics`, asking every 100 ms; throws what the metadata last said after
 * TOPIC_LEADERS_WAIT_MS.
 */
async function untilLeaders(admin: Admin, topics: readonly string[], waitMs = TOPIC_LEADERS_WAIT_MS): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    let why: string;
    try {
      const { topics: known } = await admin.fetchTopicMetadata({ topics: [...topics] });
      const leaderless = known.filter((t) => t.partitions.length === 0 || t.partitions.some((p) => p.leader < 0)).map((t) => t.name);
      if (leaderless.length === 0) return;
      why = `no leader yet for ${leaderless.join(', ')}`;
    } catch (err) {
      if (!notYetKnown(err)) throw err;
      why = failureMessage(err);
    }
    if (Date.now() >= deadline) throw new Error(`the created topics have no leaders after ${waitMs} ms: ${why}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Topic config for topics agentledger creates: room for large records and their dead letters. */
export const TOPIC_CONFIG = [{ name: 'max.message.bytes', value: String(16 * 1024 * 1024) }];

/** A producer of `kafka` whose sends are checked (src/kafka/checked-send.ts), saying what it resends through the client's logger. */
export function createProducer(kafka: Kafka, config: Omit<ProducerConfig, 'createPartitioner'> = {}): CheckedProducer {
  return createCheckedProducer(kafka, config, clientLogs.get(kafka) ?? createLogger('warn'));
}

/**
 * A producer that writes each record once and in order (idempotent, one
 * request in flight) and retries until it gets through, its sends checked
 * for records kafkajs skipped: what the dead letters and `craze push` need,
 * since their senders commit progress after a send.
 */
export function createReliableProducer(kafka: Kafka): CheckedProducer {
  return createProducer(kafka, {
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: Number.MAX_SAFE_INTEGER, maxRetryTime: 30_000 },
  });
}
