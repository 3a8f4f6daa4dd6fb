import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError, migratorSettings, parseConfig, redactConfig } from '../../../src/config/index.js';

const BIN = fileURLToPath(new URL('../../support/cli-entry.js', import.meta.url));

test('defaults point at the local stack', () => {
  const c = parseConfig({});
  assert.deepEqual(c.kafka.brokers, ['127.0.0.1:9092']);
  assert.equal(c.kafka.topics.envelopes, 'agent.envelopes');
  assert.equal(c.kafka.topics.craze, 'craze.events');
  assert.equal(c.kafka.topics.deadLetter, 'agentledger.dlq');
  assert.equal(c.clickhouse.url, 'http://127.0.0.1:8123');
  assert.equal(c.clickhouse.database, 'agentledger');
  // The local stack's ACL user and password (infra/stack.sh).
  assert.equal(c.redis.url, 'redis://agentledger:agentledger@127.0.0.1:6379');
  assert.deepEqual(c.clickhouse.migrator, { user: 'agentledger_migrator', password: 'agentledger_migrator' });
  assert.equal(c.batch.maxRows, 5000);
  assert.deepEqual(c.caches, { headEntries: 20_000, crazeSessions: 10_000 });
  assert.equal(c.kafka.fetchPartitionBytes, 1024 * 1024);
});

test('values are coerced and empty values take defaults', () => {
  const c = parseConfig({
    AGENTLEDGER_KAFKA_BROKERS: 'a:1, b:2',
    AGENTLEDGER_BATCH_MAX_ROWS: '250',
    AGENTLEDGER_METRICS_PORT: '0',
    AGENTLEDGER_CLICKHOUSE_DATABASE: '',
    AGENTLEDGER_HEAD_CACHE_ENTRIES: '50',
    AGENTLEDGER_CRAZE_CACHE_ENTRIES: '3',
  });
  assert.deepEqual(c.kafka.brokers, ['a:1', 'b:2']);
  assert.equal(c.batch.maxRows, 250);
  assert.equal(c.metricsPort, 0);
  assert.equal(c.clickhouse.database, 'agentledger');
  assert.deepEqual(c.caches, { headEntries: 50, crazeSessions: 3 });
  assert.equal(c.frozenLoopExitMs, 60_000);
  assert.equal(parseConfig({ AGENTLEDGER_FROZEN_LOOP_EXIT_MS: '0' }).frozenLoopExitMs, 0);
});

const wrong: [string, string, RegExp][] = [
  ['AGENTLEDGER_KAFKA_BROKERS', 'localhost', /host:port/],
  ['AGENTLEDGER_BATCH_MAX_ROWS', 'many', /whole number/],
  ['AGENTLEDGER_BATCH_MAX_ROWS', '0', />= 1/],
  ['AGENTLEDGER_HEAD_CACHE_ENTRIES', '0', />= 1/],
  ['AGENTLEDGER_KAFKA_FETCH_PARTITION_BYTES', '1000', />= 65536/],
  ['AGENTLEDGER_CRAZE_CACHE_ENTRIES', 'lots', /whole number/],
  ['AGENTLEDGER_METRICS_PORT', '70000', /0-65535/],
  ['AGENTLEDGER_CLICKHOUSE_URL', 'ftp://x', /http/],
  ['AGENTLEDGER_REDIS_URL', 'http://x:1', /redis:\/\//],
  ['AGENTLEDGER_LOG_LEVEL', 'loud', /debug|info/],
  ['AGENTLEDGER_CLICKHOUSE_DATABASE', 'drop table;', /database name/],
  ['AGENTLEDGER_ENVELOPE_TOPIC', 'a b', /topic name/],
  ['AGENTLEDGER_FROZEN_LOOP_EXIT_MS', '500', /0 \(off\) or a number from 1000 to 3600000/],
];

for (const [key, value, expected] of wrong) {
  test(`a wrong ${key} names the setting, the value and what is expected`, () => {
    assert.throws(
      () => parseConfig({ [key]: value }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.problems.length, 1);
        const line = err.problems[0] ?? '';
        assert.ok(line.startsWith(`invalid setting ${key}=${JSON.stringify(value)}: `), line);
        assert.match(line, expected);
        return true;
      },
    );
  });
}

test('a password is never echoed back', () => {
  assert.throws(() => parseConfig({ AGENTLEDGER_CLICKHOUSE_PASSWORD: 'secret', AGENTLEDGER_BATCH_MAX_ROWS: 'x' }), /BATCH_MAX_ROWS/);
});

test('the CLI stops at start with one line, exit code 2, no stack trace', () => {
  const r = spawnSync(process.execPath, [BIN, 'migrate'], {
    env: { PATH: process.env['PATH'], AGENTLEDGER_KAFKA_BROKERS: 'nope' },
    encoding: 'utf8',
    cwd: '/',
  });
  assert.equal(r.status, 2);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, 'agentledger: invalid setting AGENTLEDGER_KAFKA_BROKERS="nope": expected a comma-separated list of host:port\n');
});

test('--help explains every command without needing any service', () => {
  const r = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.match(r.stdout, /migrate/);
  assert.match(r.stdout, /doctor/);
  const m = spawnSync(process.execPath, [BIN, 'migrate', '--help'], { encoding: 'utf8' });
  assert.equal(m.status, 0);
  assert.match(m.stdout, /exactly once/);
});

test('config prints no password: not in its field, not in a ClickHouse or Redis URL', () => {
  const secret = 'S3cr3t-planted';
  const r = spawnSync(process.execPath, [BIN, 'config', '--json'], {
    encoding: 'utf8',
    env: {
      PATH: process.env['PATH'] ?? '',
      AGENTLEDGER_CLICKHOUSE_URL: `http://writer:${secret}@127.0.0.1:8123`,
      AGENTLEDGER_CLICKHOUSE_PASSWORD: secret,
      AGENTLEDGER_REDIS_URL: `redis://:${secret}@127.0.0.1:6379`,
    },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret), r.stdout);
  const shown = JSON.parse(r.stdout) as { clickhouse: { url: string; password: string }; redis: { url: string } };
  assert.equal(shown.clickhouse.url, 'http://writer:***@127.0.0.1:8123/');
  assert.equal(shown.clickhouse.password, '(set)');
  assert.equal(shown.redis.url, 'redis://:***@127.0.0.1:6379');
});

test('the metrics endpoint listens on loopback by default and answers GET only', async () => {
  const { createMetrics, serveMetrics } = await import('../../../src/observability/metrics.js');
  assert.equal(parseConfig({}).metricsHost, '127.0.0.1');
  const server = await serveMetrics(createMetrics(), 0);
  try {
    const address = server.address();
    assert.ok(address !== null && typeof address === 'object');
    assert.equal(address.address, '127.0.0.1');
    const base = `http://127.0.0.1:${address.port}/metrics`;
    assert.equal((await fetch(base)).status, 200);
    assert.equal((await fetch(base, { method: 'POST', body: 'x' })).status, 405);
  } finally {
    server.close();
  }
});

test('migrations run as the migrator when one is set, else as the main user, else as the stack\'s migrator', () => {
  // No ClickHouse user set at all: every default is the local stack's, whose writer has no DDL.
  assert.deepEqual(parseConfig({}).clickhouse.migrator, { user: 'agentledger_migrator', password: 'agentledger_migrator' });
  const main = { AGENTLEDGER_CLICKHOUSE_USER: 'writer', AGENTLEDGER_CLICKHOUSE_PASSWORD: 'w' };
  const alone = parseConfig(main);
  assert.deepEqual(alone.clickhouse.migrator, { user: 'writer', password: 'w' });
  const both = parseConfig({ ...main, AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER: 'ddl', AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD: 'm' });
  const settings = migratorSettings(both.clickhouse);
  assert.equal(settings.user, 'ddl');
  assert.equal(settings.password, 'm');
  assert.equal(settings.database, both.clickhouse.database);
  // Everything else stays the writer's.
  assert.equal(both.clickhouse.user, 'writer');
  assert.equal(both.clickhouse.password, 'w');
  assert.equal(parseConfig({ AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER: 'ddl' }).clickhouse.migrator.password, '');
});

test('a migrator password without a migrator user is refused, naming the missing setting and hiding the password', () => {
  assert.throws(
    () => parseConfig({ AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD: 'hunter2' }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.deepEqual(err.problems, ['missing setting AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER: AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD is only used with it']);
      return true;
    },
  );
});

test('the Redis password goes into the URL unless the URL has one; odd characters survive', () => {
  const odd = 'p w@:/%x';
  const withUser = parseConfig({ AGENTLEDGER_REDIS_URL: 'redis://bull@redis.example:6380/2', AGENTLEDGER_REDIS_PASSWORD: odd }).redis.url;
  const u = new URL(withUser);
  assert.equal(u.username, 'bull');
  assert.equal(decodeURIComponent(u.password), odd);
  assert.equal(u.host, 'redis.example:6380');
  assert.equal(u.pathname, '/2');
  // No user in the URL: Redis's `default` user (AUTH with the password only).
  assert.equal(parseConfig({ AGENTLEDGER_REDIS_URL: 'redis://127.0.0.1:6379', AGENTLEDGER_REDIS_PASSWORD: 's' }).redis.url, 'redis://:s@127.0.0.1:6379');
  // The URL's own password wins.
  assert.equal(parseConfig({ AGENTLEDGER_REDIS_URL: 'redis://bull:own@h:1', AGENTLEDGER_REDIS_PASSWORD: 'other' }).redis.url, 'redis://bull:own@h:1');
});

test('redactConfig hides the migrator and Redis passwords', () => {
  const shown = JSON.stringify(
    redactConfig(parseConfig({ AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER: 'ddl', AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD: 'Planted-M1', AGENTLEDGER_REDIS_PASSWORD: 'Planted-R2' })),
  );
  assert.ok(!shown.includes('Planted-M1') && !shown.includes('Planted-R2'), shown);
  assert.match(shown, /"migrator":\{"user":"ddl","password":"\(set\)"\}/);
});
