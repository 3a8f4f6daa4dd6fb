import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError, parseConfig } from '../../src/config/index.js';

const BIN = fileURLToPath(new URL('../support/cli-entry.js', import.meta.url));

test('defaults point at the local stack', () => {
  const c = parseConfig({});
  assert.deepEqual(c.kafka.brokers, ['127.0.0.1:9092']);
  assert.equal(c.kafka.topics.envelopes, 'agent.envelopes');
  assert.equal(c.kafka.topics.craze, 'craze.events');
  assert.equal(c.kafka.topics.deadLetter, 'agentledger.dlq');
  assert.equal(c.clickhouse.url, 'http://127.0.0.1:8123');
  assert.equal(c.clickhouse.database, 'agentledger');
  assert.equal(c.redis.url, 'redis://127.0.0.1:6379');
  assert.equal(c.batch.maxRows, 5000);
});

test('values are coerced and empty values take defaults', () => {
  const c = parseConfig({
    AGENTLEDGER_KAFKA_BROKERS: 'a:1, b:2',
    AGENTLEDGER_BATCH_MAX_ROWS: '250',
    AGENTLEDGER_METRICS_PORT: '0',
    AGENTLEDGER_CLICKHOUSE_DATABASE: '',
  });
  assert.deepEqual(c.kafka.brokers, ['a:1', 'b:2']);
  assert.equal(c.batch.maxRows, 250);
  assert.equal(c.metricsPort, 0);
  assert.equal(c.clickhouse.database, 'agentledger');
});

const wrong: [string, string, RegExp][] = [
  ['AGENTLEDGER_KAFKA_BROKERS', 'localhost', /host:port/],
  ['AGENTLEDGER_BATCH_MAX_ROWS', 'many', /whole number/],
  ['AGENTLEDGER_BATCH_MAX_ROWS', '0', />= 1/],
  ['AGENTLEDGER_METRICS_PORT', '70000', /0-65535/],
  ['AGENTLEDGER_CLICKHOUSE_URL', 'ftp://x', /http/],
  ['AGENTLEDGER_REDIS_URL', 'http://x:1', /redis:\/\//],
  ['AGENTLEDGER_LOG_LEVEL', 'loud', /debug|info/],
  ['AGENTLEDGER_CLICKHOUSE_DATABASE', 'drop table;', /database name/],
  ['AGENTLEDGER_ENVELOPE_TOPIC', 'a b', /topic name/],
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
  const { createMetrics, serveMetrics } = await import('../../src/observability/metrics.js');
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
