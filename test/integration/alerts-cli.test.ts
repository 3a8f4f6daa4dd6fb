/**
 * `agentledger alerts` (issue 11) against the real stack: transitions written
 * straight into the `alerts` table (a firing alert reminded once, a resolved
 * one, a subject planted with terminal escapes) and deliveries that really
 * failed in the BullMQ failed set; the JSON contract, the filters, the
 * --limit bounds, the escaping of text output, and a Redis that does not
 * answer (the alerts are still listed, their failed deliveries unknown).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { Queue, Worker } from 'bullmq';
import { deliveryProcessor, enqueueNotice } from '../../src/alerts/delivery.js';
import type { AlertState, Notification } from '../../src/alerts/state.js';
import { noticeOf } from '../../src/alerts/webhook.js';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { ALERT_DELIVERIES_QUEUE } from '../../src/jobs/queues.js';
import { createRedis } from '../../src/jobs/redis.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { migrate } from '../../src/migrate/migrate.js';
import { closedPort } from '../support/cli-run.js';
import { testContext, type TestContext } from '../support/context.js';
import { BIN } from '../support/processes.js';

const HOSTILE = 'loop\u001b]0;pwned\u0007\u001b[2J\rrow';
const ESCAPED = 'loop\\x1b]0;pwned\\x07\\x1b[2J\\rrow';
/** Any character a terminal acts on, other than the newlines that end rows. */
const RAW = /[^\P{Cc}\n]|[\u2028\u2029]/u;

const T0 = Date.UTC(2026, 11, 1, 6, 0, 0);
const HOUR = 3_600_000;

/** The states the transitions below leave behind, as the state machine would hold them. */
const chain: AlertState = { rule: 'chain_integrity', subject: 'loop-a:1', state: 'firing', severity: 'critical', firedAt: T0, lastNotifiedAt: T0 + HOUR, notifications: 2, detail: 'mismatch at seq 7' };
const stuck: AlertState = { rule: 'stuck_loop', subject: 'loop-b', state: 'resolved', severity: 'critical', firedAt: T0 + 600_000, resolvedAt: T0 + 1_200_000, lastNotifiedAt: T0 + 1_200_000, notifications: 2, detail: 'finished Completed' };
const hostile: AlertState = { rule: 'chain_integrity', subject: HOSTILE, state: 'firing', severity: 'warning', firedAt: T0 + 1_800_000, lastNotifiedAt: T0 + 1_800_000, notifications: 1, detail: `gap at seq 3 ${HOSTILE}` };

/** One row of the `alerts` table. */
function transition(s: AlertState, notification: Notification, atMs: number, notifications: number, state: string, detail = s.detail) {
  return {
    rule: s.rule,
    subject: s.subject,
    transition_key: `${s.rule}/${s.subject}/${notification}/${atMs}`,
    notification,
    state,
    severity: s.severity,
    fired_at_ms: s.firedAt,
    resolved_at_ms: state === 'resolved' ? (s.resolvedAt ?? 0) : 0,
    at_ms: atMs,
    notifications,
    detail,
    recorded_at: '2026-12-01 07:00:00',
  };
}

let ctx: TestContext;

before(async () => {
  ctx = await testContext('alerts_cli');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, createLogger('warn'));
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    await ch.insert({
      table: 'alerts',
      format: 'JSONEachRow',
      values: [
        transition(chain, 'fired', T0, 1, 'firing', 'mismatch at seq 5'),
        transition(chain, 'renotified', T0 + HOUR, 2, 'firing'),
        transition(stuck, 'fired', T0 + 600_000, 1, 'firing', 'finished Stuck'),
        transition(stuck, 'resolved', T0 + 1_200_000, 2, 'resolved'),
        transition(hostile, 'fired', T0 + 1_800_000, 1, 'firing'),
      ],
    });
  } finally {
    await ch.close();
  }
  await failDeliveries([noticeOf({ ...chain, lastNotifiedAt: T0, notifications: 1 }, 'fired'), noticeOf(chain, 'renotified'), noticeOf(hostile, 'fired')]);
});

after(async () => {
  const redis = createRedis(ctx.config.redis.url);
  const queue = new Queue(ALERT_DELIVERIES_QUEUE, { connection: redis, prefix: ctx.config.redis.queuePrefix });
  try {
    await queue.obliterate({ force: true });
  } finally {
    await queue.close();
    redis.disconnect();
    await ctx.cleanup();
  }
});

/** Delivers each notice once to a port where nothing listens: each ends in the failed set, as a receiver that is down leaves it. */
async function failDeliveries(notices: readonly ReturnType<typeof noticeOf>[]): Promise<void> {
  const redis = createRedis(ctx.config.redis.url);
  const blocking = redis.duplicate();
  const prefix = ctx.config.redis.queuePrefix;
  const queue = new Queue(ALERT_DELIVERIES_QUEUE, { connection: redis, prefix });
  const hook = { url: `http://127.0.0.1:${await closedPort()}/hook`, secret: undefined, timeoutMs: 5000 };
  let failed = 0;
  const allFailed = new Promise<void>((resolve) => {
    const worker = new Worker(ALERT_DELIVERIES_QUEUE, deliveryProcessor(hook), { connection: blocking, prefix });
    worker.on('failed', () => {
      if (++failed === notices.length) void worker.close().then(() => resolve());
    });
  });
  try {
    for (const n of notices) await enqueueNotice(queue, n, { attempts: 1 });
    await allFailed;
    assert.equal(await queue.getFailedCount(), notices.length);
  } finally {
    await queue.close();
    blocking.disconnect();
    redis.disconnect();
  }
}

function cli(args: readonly string[], env: Record<string, string> = ctx.env): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [BIN, 'alerts', ...args], { env: { PATH: process.env['PATH'] ?? '', ...env }, encoding: 'utf8' });
}

function listed(args: readonly string[], env?: Record<string, string>): Record<string, unknown>[] {
  const r = cli(['--json', ...args], env);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Record<string, unknown>[];
}

const iso = (ms: number): string => new Date(ms).toISOString();

const chainJson = {
  rule: 'chain_integrity',
  subject: 'loop-a:1',
  state: 'firing',
  severity: 'critical',
  firedAt: '2026-12-01T06:00:00.000Z',
  resolvedAt: null,
  lastNotifiedAt: '2026-12-01T07:00:00.000Z',
  notifications: 2,
  transitions: 2,
  detail: 'mismatch at seq 7',
  failedDeliveries: 2,
};
const hostileJson = {
  rule: 'chain_integrity',
  subject: HOSTILE,
  state: 'firing',
  severity: 'warning',
  firedAt: iso(T0 + 1_800_000),
  resolvedAt: null,
  lastNotifiedAt: iso(T0 + 1_800_000),
  notifications: 1,
  transitions: 1,
  detail: `gap at seq 3 ${HOSTILE}`,
  failedDeliveries: 1,
};
const stuckJson = {
  rule: 'stuck_loop',
  subject: 'loop-b',
  state: 'resolved',
  severity: 'critical',
  firedAt: '2026-12-01T06:10:00.000Z',
  resolvedAt: '2026-12-01T06:20:00.000Z',
  lastNotifiedAt: '2026-12-01T06:20:00.000Z',
  notifications: 2,
  transitions: 2,
  detail: 'finished Completed',
  failedDeliveries: 0,
};

test('--json by default: the firing alerts, latest transition each, newest notified first, with their failed deliveries counted', () => {
  assert.deepEqual(listed([]), [chainJson, hostileJson]);
});

test('--state resolved, --state all (firing first), --rule', () => {
  assert.deepEqual(listed(['--state', 'resolved']), [stuckJson]);
  assert.deepEqual(listed(['--state', 'all']), [chainJson, hostileJson, stuckJson]);
  assert.deepEqual(listed(['--state', 'all', '--rule', 'stuck_loop']), [stuckJson]);
  assert.deepEqual(listed(['--rule', 'stuck_loop']), []);
  assert.deepEqual(listed(['--rule', 'convergence', '--state', 'all']), []);
});

test('--limit keeps the first N in order; 0, a huge number, a bad state or rule is a usage error, exit 2', () => {
  assert.deepEqual(listed(['--state', 'all', '--limit', '2']), [chainJson, hostileJson]);
  for (const args of [['--limit', '0'], ['--limit', '99999999999999999999'], ['--limit', '-1'], ['--limit', '1.5'], ['--state', 'open'], ['--rule', 'no_such_rule'], ['--bogus']]) {
    const r = cli(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^agentledger alerts: [^\n]+\n$/, args.join(' '));
  }
});

test('text output: one row per alert and one line per failed delivery, ids and details escaped', () => {
  const r = cli(['--state', 'all']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.doesNotMatch(r.stdout, RAW);
  const lines = r.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 1 + 3 + 3, r.stdout);
  assert.match(lines[1]!, /^firing +critical +chain_integrity +loop-a:1 +2026-12-01 06:00:00 +2 +mismatch at seq 7$/);
  assert.ok(lines[2]!.startsWith('firing    warning   chain_integrity         '), lines[2]);
  assert.ok(lines[2]!.includes(` ${ESCAPED} `) && lines[2]!.endsWith(`gap at seq 3 ${ESCAPED}`), lines[2]);
  assert.match(lines[3]!, /^resolved +critical +stuck_loop +loop-b +2026-12-01 06:20:00 +2 +finished Completed$/);
  const failed = lines.slice(4).sort();
  assert.match(failed[0]!, /^failed delivery: chain_integrity loop-a:1 fired after 1 attempt\(s\): webhook did not answer: .*ECONNREFUSED/);
  assert.match(failed[1]!, /^failed delivery: chain_integrity loop-a:1 renotified after 1 attempt\(s\): webhook did not answer: /);
  assert.ok(failed[2]!.startsWith(`failed delivery: chain_integrity ${ESCAPED} fired after 1 attempt(s): `), failed[2]);
});

test('Redis not answering: one warning line, the alerts listed anyway with failedDeliveries null, exit 0', async () => {
  const env = { ...ctx.env, AGENTLEDGER_REDIS_URL: `redis://127.0.0.1:${await closedPort()}` };
  const r = cli(['--json'], env);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /^agentledger alerts: failed deliveries not counted: Redis at redis:\/\/[^\n]* did not answer[^\n]*\n$/);
  assert.deepEqual(JSON.parse(r.stdout), [chainJson, hostileJson].map((a) => ({ ...a, failedDeliveries: null })));
  const text = cli([], env);
  assert.equal(text.status, 0, text.stderr);
  assert.equal(text.stdout.trimEnd().split('\n').length, 3, 'the header and two alerts, no delivery lines');
});

test('no alerts of a rule: one line saying so', () => {
  const r = cli(['--rule', 'spend_budget']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, '(no alerts)\n');
});
