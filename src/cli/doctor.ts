import { Redis } from 'ioredis';
import { createKafka } from '../sources/kafka.js';
import { createClickHouse } from '../sink/clickhouse/client.js';
import { migrationStatus } from '../sink/clickhouse/migrate.js';
import { serverVersion } from '../sink/clickhouse/reads.js';
import type { Command } from './command.js';
import { parseOptions } from './command.js';
import { MIGRATIONS_DIR } from './migrate.js';
import { redactUrl } from '../config/index.js';

interface Check {
  readonly service: string;
  readonly ok: boolean;
  readonly detail: string;
}

export const doctorCommand: Command = {
  name: 'doctor',
  summary: 'check that Kafka, ClickHouse and Redis answer and the schema is current',
  help: `Usage: agentledger doctor [--json]

Connects to each configured service and prints one line per check:
Kafka brokers and controller, ClickHouse version and pending migrations,
Redis version and whether it persists (appendonly). Exit 0 when all pass, 1 otherwise.`,
  async run(args, { config, log, out }) {
    const { values } = parseOptions(args, { json: { type: 'boolean' } });
    const checks: Check[] = [];
    const attempt = async (service: string, fn: () => Promise<string>): Promise<void> => {
      try {
        checks.push({ service, ok: true, detail: await fn() });
      } catch (err) {
        checks.push({ service, ok: false, detail: err instanceof Error ? err.message : String(err) });
      }
    };

    await attempt('kafka', async () => {
      const admin = createKafka({ ...config.kafka }, log).admin();
      await admin.connect();
      try {
        const cluster = await admin.describeCluster();
        return `${cluster.brokers.length} broker(s) at ${config.kafka.brokers.join(',')}, controller ${cluster.controller ?? 'unknown'}`;
      } finally {
        await admin.disconnect();
      }
    });

    await attempt('clickhouse', async () => {
      const ch = createClickHouse(config.clickhouse, 'default');
      try {
        const version = await serverVersion(ch);
        const { applied, pending } = await migrationStatus(ch, config.clickhouse.database, MIGRATIONS_DIR);
        if (pending.length > 0) throw new Error(`ClickHouse ${version} answers, but ${pending.length} migration(s) are pending: run agentledger migrate`);
        return `ClickHouse ${version} at ${redactUrl(config.clickhouse.url)}, database ${config.clickhouse.database}, ${applied.length} migration(s) applied`;
      } finally {
        await ch.close();
      }
    });

    await attempt('redis', async () => {
      const redis = new Redis(config.redis.url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 3000 });
      try {
        await redis.connect();
        const info = await redis.info('server');
        const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '?';
        const aof = ((await redis.config('GET', 'appendonly')) as string[])[1];
        return `Redis ${version} at ${redactUrl(config.redis.url)}, appendonly ${aof ?? '?'}`;
      } finally {
        redis.disconnect();
      }
    });

    if (values.json) out(JSON.stringify(checks));
    else for (const c of checks) out(`${c.ok ? 'ok  ' : 'FAIL'} ${c.service.padEnd(10)} ${c.detail}`);
    return checks.every((c) => c.ok) ? 0 : 1;
  },
};
