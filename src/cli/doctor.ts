import { createKafka, withStartupAdmin } from '../kafka/client.js';
import { createClickHouse, notClickHouseMessage, pingReply } from '../clickhouse/client.js';
import { migrationStatus } from '../migrate/migrate.js';
import { serverVersion } from '../clickhouse/server.js';
import type { Command } from './command.js';
import { parseOptions } from './command.js';
import { MIGRATIONS_DIR } from './migrate.js';
import { redactUrl } from '../config/index.js';
import { queueHealth } from '../jobs/health.js';
import { probeRedis } from '../jobs/redis.js';
import { failureMessage } from '../errors/errors.js';

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
Redis version and whether it persists (appendonly), and the BullMQ queues
(rollups, alerts, alert-deliveries): jobs waiting, active, delayed,
prioritized and failed, and when the next sweep is due; a sweep overdue by
more than two intervals and a minute fails (no worker runs).
Exit 0 when all pass, 1 otherwise.`,
  async run(args, { config, log, out }) {
    const { values } = parseOptions(args, { json: { type: 'boolean' } });
    const checks: Check[] = [];
    const attempt = async (service: string, fn: () => Promise<string>): Promise<void> => {
      try {
        checks.push({ service, ok: true, detail: await fn() });
      } catch (err) {
        checks.push({ service, ok: false, detail: failureMessage(err) });
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
      const { version, appendonly } = await probeRedis(config.redis.url);
      return `Redis ${version} at ${redactUrl(config.redis.url)}, appendonly ${appendonly}`;
    });

    // Queues live in that Redis: a Redis that did not answer is said once, above.
    if (checks.at(-1)?.ok) {
      await attempt('queues', async () => {
        const reports = await queueHealth(config.redis.url, config.redis.queuePrefix);
        const text = reports.map((r) => r.text).join('; ');
        if (reports.some((r) => !r.ok)) throw new Error(text);
        return text;
      });
    }

    if (values.json) out(JSON.stringify(checks));
    else for (const c of checks) out(`${c.ok ? 'ok  ' : 'FAIL'} ${c.service.padEnd(10)} ${c.detail}`);
    return checks.every((c) => c.ok) ? 0 : 1;
  },
};
