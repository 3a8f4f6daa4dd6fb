import { Redis } from 'ioredis';
import { createKafka, withStartupAdmin } from '../sources/kafka.js';
import { createClickHouse, notClickHouseMessage, pingReply } from '../sink/clickhouse/client.js';
import { migrationStatus } from '../sink/clickhouse/migrate.js';
import { serverVersion } from '../sink/clickhouse/reads.js';
import type { Command } from './command.js';
import { parseOptions } from './command.js';
import { MIGRATIONS_DIR } from './migrate.js';
import { redactUrl } from '../config/index.js';

/**
 * A Redis failure in one line. ioredis reports a refused login in the
 * server's words (NOAUTH, WRONGPASS, "AUTH … without any password
 * configured"); anything else means nothing usable answered.
 */
export function redisFailure(url: string, err: unknown): string {
  const message = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim();
  if (/NOAUTH|WRONGPASS|invalid (username-)?password|without any password/i.test(message)) {
    return `Redis at ${redactUrl(url)} refused the login (${message}): check the user and password in AGENTLEDGER_REDIS_URL`;
  }
  return `Redis at ${redactUrl(url)} did not answer (${message || 'connection closed'}): check that it runs and AGENTLEDGER_REDIS_URL`;
}

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

    await attempt('kafka', () =>
      withStartupAdmin(createKafka(config.kafka, log), 'describing the cluster', async (admin) => {
        const cluster = await admin.describeCluster();
        return `${cluster.brokers.length} broker(s) at ${config.kafka.brokers.join(',')}, controller ${cluster.controller ?? 'unknown'}`;
      }),
    );

    await attempt('clickhouse', async () => {
      // Something else answering at the URL may answer a query with a page that parses as nothing.
      const reply = await pingReply(config.clickhouse);
      if (reply !== undefined) throw new Error(notClickHouseMessage(config.clickhouse, reply));
      // `system`: a user confined to its database may not open `default` (the database may not exist yet).
      const ch = createClickHouse(config.clickhouse, 'system');
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
      // One try, no reconnects: doctor reports, it does not wait for Redis.
      const redis = new Redis(config.redis.url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000, retryStrategy: () => null });
      // Without a listener ioredis prints each error event with its stack;
      // the first one says why (the rejected connect only says "closed").
      let cause: unknown;
      redis.on('error', (err: unknown) => (cause ??= err));
      try {
        await redis.connect();
        const info = await redis.info('server');
        const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '?';
        const aof = ((await redis.config('GET', 'appendonly')) as string[])[1];
        return `Redis ${version} at ${redactUrl(config.redis.url)}, appendonly ${aof ?? '?'}`;
      } catch (err) {
        throw new Error(redisFailure(config.redis.url, cause ?? err));
      } finally {
        redis.disconnect();
      }
    });

    if (values.json) out(JSON.stringify(checks));
    else for (const c of checks) out(`${c.ok ? 'ok  ' : 'FAIL'} ${c.service.padEnd(10)} ${c.detail}`);
    return checks.every((c) => c.ok) ? 0 : 1;
  },
};
