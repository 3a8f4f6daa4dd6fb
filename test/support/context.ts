/**
 * One isolated world per integration test file: its own ClickHouse database,
 * Kafka topics and BullMQ queue prefix, all removed by cleanup().
 */
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { parseConfig, type Config } from '../../src/config/index.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { services, type Services } from './services.js';

export interface TestContext {
  readonly services: Services;
  readonly config: Config;
  /** The AGENTLEDGER_* variables that give a child process this context's config. */
  readonly env: Record<string, string>;
  readonly id: string;
  cleanup(): Promise<void>;
}

/**
 * The judging threads of the files that attack exactly-once (crashes,
 * zombies, redeliveries, poison, a restarted broker): 2, so they attack the
 * threaded path (src/judging/); the runner's AGENTLEDGER_JUDGE_THREADS wins.
 */
export const FAULT_THREADS: Readonly<Record<string, string>> = { AGENTLEDGER_JUDGE_THREADS: process.env['AGENTLEDGER_JUDGE_THREADS'] ?? '2' };

export async function testContext(name: string, overrides: Record<string, string> = {}): Promise<TestContext> {
  const svc = await services();
  const id = `${name.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  const env: Record<string, string> = {
    AGENTLEDGER_KAFKA_BROKERS: svc.kafkaBrokers,
    AGENTLEDGER_KAFKA_GROUP_ID: `test.${id}`,
    AGENTLEDGER_ENVELOPE_TOPIC: `test.${id}.envelopes`,
    AGENTLEDGER_CRAZE_TOPIC: `test.${id}.craze`,
    AGENTLEDGER_DLQ_TOPIC: `test.${id}.dlq`,
    AGENTLEDGER_CLICKHOUSE_URL: svc.clickhouseUrl,
    AGENTLEDGER_CLICKHOUSE_USER: svc.clickhouseUser,
    AGENTLEDGER_CLICKHOUSE_PASSWORD: svc.clickhousePassword,
    AGENTLEDGER_CLICKHOUSE_DATABASE: `test_${id}`,
    AGENTLEDGER_REDIS_URL: svc.redisUrl,
    AGENTLEDGER_QUEUE_PREFIX: `test_${id}`,
    AGENTLEDGER_METRICS_PORT: '0',
    AGENTLEDGER_WORKER_METRICS_PORT: '0',
    AGENTLEDGER_SERVE_METRICS_PORT: '0',
    AGENTLEDGER_LOG_LEVEL: 'warn',
    // The tests read log lines as a person would (json has its own tests).
    AGENTLEDGER_LOG_FORMAT: 'text',
    AGENTLEDGER_KAFKA_SESSION_TIMEOUT_MS: '6000',
    // One judging thread, the product's default on the suite's 2-core
    // machines; the exactly-once, crash and fault files ask for threads
    // (FAULT_THREADS). The runner's own setting wins over both
    // (AGENTLEDGER_JUDGE_THREADS=1 or 4 runs every file so).
    AGENTLEDGER_JUDGE_THREADS: process.env['AGENTLEDGER_JUDGE_THREADS'] ?? '1',
    ...overrides,
  };
  const config = parseConfig(env);
  return {
    services: svc,
    config,
    env,
    id,
    async cleanup() {
      const ch = createClickHouse(config.clickhouse, 'default');
      await ch.command({ query: `DROP DATABASE IF EXISTS ${config.clickhouse.database}` }).finally(() => ch.close());
      const admin = new Kafka({ clientId: 'test-cleanup', brokers: [...config.kafka.brokers], logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      try {
        const existing = new Set(await admin.listTopics());
        const ours = Object.values(config.kafka.topics).filter((t) => existing.has(t));
        if (ours.length > 0) await admin.deleteTopics({ topics: ours });
        await admin.deleteGroups([config.kafka.groupId]).catch(() => undefined);
      } finally {
        await admin.disconnect();
      }
    },
  };
}
