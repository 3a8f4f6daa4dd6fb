/**
 * agentledger's alerts in a real Alertmanager (0.25, started by
 * infra/stack.sh on 127.0.0.1:9193). Loops that get stuck (some with hostile
 * LoopIDs) or converge badly go through Kafka and `ingest`; `agentledger
 * worker` sweeps every second and pushes to Alertmanager through a TCP proxy
 * that first holds every byte (an Alertmanager that hangs): the sweeps and
 * the webhook go on, the pushes fail and back off, and once the proxy lets
 * go the alerts arrive, listed by `amtool alert query` with their labels,
 * hostile subjects byte for byte. A second worker pushing the same alerts
 * adds none; Alertmanager restarted (it keeps no alerts) has them all again
 * from the next pushes; the loop that finishes Completed leaves the list.
 * Then the pusher alone against states written for it: an alert
 * Alertmanager refuses (400) is logged and counted once and never sent
 * again, a resolved one is sent until taken, and the example configuration
 * inhibits a loop's warning while the loop has a critical alert.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startPusher, takenKey } from '../../src/alerts/alertmanager-push.js';
import { field, stateKey } from '../../src/alerts/state-store.js';
import type { AlertState } from '../../src/alerts/state.js';
import { notice, type Notice } from '../../src/alerts/webhook.js';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createRedis } from '../../src/jobs/redis.js';
import { migrate } from '../../src/migrate/migrate.js';
import { createLogger, type Logger } from '../../src/observability/logger.js';
import { ALERTMANAGER_URL, alertmanagerUp, amtoolCheckConfig, amtoolQuery, listedAlerts, restartAlertmanager, type ListedAlert } from '../support/alertmanager.js';
import { closedPort } from '../support/cli-run.js';
import { testContext, type TestContext } from '../support/context.js';
import { chain } from '../support/envelope-chain.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { runCli, until, type Running } from '../support/processes.js';
import { REPO_ROOT } from '../support/services.js';
import { tcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { webhookReceiver, type Receiver } from '../support/webhook-receiver.js';

const SECRET = 'alertmanager-test-secret';
const PAGE = 'https://ledger.example.com';
const WAIT_MS = 60_000;
let ctx: TestContext;
let proxy: TcpProxy;
let hook: Receiver;

before(async () => {
  ctx = await testContext('alertmanager', {
    AGENTLEDGER_ALERT_SWEEP_MS: '1000',
    AGENTLEDGER_ALERT_WEBHOOK_URL: 'http://127.0.0.1:1/unused',
    AGENTLEDGER_ALERT_WEBHOOK_SECRET: SECRET,
    AGENTLEDGER_ALERTMANAGER_TIMEOUT_MS: '1000',
    AGENTLEDGER_SERVE_PUBLIC_URL: PAGE,
  });
  await alertmanagerUp();
  proxy = await tcpProxy('127.0.0.1', Number(new URL(ALERTMANAGER_URL).port));
  hook = await webhookReceiver(SECRET, 0);
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, createLogger('warn'));
});
after(async () => {
  await proxy?.close();
  await hook?.close();
  await ctx?.cleanup();
});

const at = (ms: number): string => new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z');
const started = (name: string): string => JSON.stringify({ name });
const warn = (n: number): string => JSON.stringify({ detector: 'oscillation', reason: `flip-flopping (${n})`, count: n });

/** LoopIDs of the hostile-input tests (terminal-output, sql-escaping), made this file's own. */
const hostile = (id: string): string[] => [
  `${id}\u001b]0;pwned\u0007\u001b[2J\r\nrow\u0000\u009b\u2028\\end`,
  `${id}'); DROP TABLE hostile; --`,
  `${id}{s:String} "double" \`back\` ;=,{}`,
  `${id}\t\u00e9\u{1f600}\u200b`,
];

/** The notices the receiver accepted, decoded. */
const accepted = (): Notice[] => hook.got.filter((r) => r.status === 200).map((r) => notice.parse(JSON.parse(r.body)));

/** A counter of a worker's /metrics summed over the series whose labels include `labels` (NaN when unreachable). */
async function metric(port: number, name: string, labels: string): Promise<number> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => undefined);
  if (text === undefined) return NaN;
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && l.slice(0, l.indexOf('}')).includes(labels))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** Our alerts in Alertmanager (the API: byte for byte), by `alertname subject`. */
async function ours(): Promise<Map<string, ListedAlert[]>> {
  const out = new Map<string, ListedAlert[]>();
  for (const a of (await listedAlerts()) ?? []) {
    if (!(a.labels['subject'] ?? '').startsWith(ctx.id)) continue;
    const k = `${a.labels['alertname']} ${a.labels['subject']}`;
    out.set(k, [...(out.get(k) ?? []), a]);
  }
  return out;
}

async function stop(w: Running): Promise<void> {
  w.child.kill('SIGTERM');
  assert.equal(await w.exited, 0, w.stderr());
}

test('the example configuration passes amtool check-config', () => {
  const checked = amtoolCheckConfig(`${REPO_ROOT}infra/alertmanager/alertmanager.yml`);
  assert.equal(checked.status, 0, checked.out);
  assert.match(checked.out, /SUCCESS/);
  assert.match(checked.out, /1 inhibit rules/);
  assert.match(checked.out, /2 receivers/);
});

test('real traffic: pushed past a hung Alertmanager, listed with its labels, once for two workers, back after a restart, gone when resolved', { timeout: 240_000 }, async () => {
  const stuck = `${ctx.id}-stuck`;
  const converging = `${ctx.id}-converging`;
  const subjects = [stuck, ...hostile(ctx.id)];
  const t0 = Date.now();
  const convergingLinks: [string, string, string][] = [
    [at(t0 - 20_000), 'LoopStarted', started('converging')],
    [at(t0 - 15_000), 'ConvergenceWarning', warn(1)],
    [at(t0 - 14_000), 'ConvergenceWarning', warn(2)],
    [at(t0 - 13_000), 'ConvergenceWarning', warn(3)],
  ];
  await produceEnvelopes(ctx, [
    ...subjects.flatMap((loop) =>
      chain(loop, [
        [at(t0 - 20_000), 'LoopStarted', started('stuck')],
        [at(t0 - 10_000), 'LoopFinished', JSON.stringify({ outcome_kind: 'Stuck' })],
      ]),
    ),
    ...chain(converging, convergingLinks),
  ]);
  const ingest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], ctx.env);
  assert.equal(await ingest.exited, 0, ingest.stderr());

  // Alertmanager hangs (the proxy holds every byte): the sweeps and the webhook go on.
  proxy.hold();
  const port1 = await closedPort();
  const env = { ...ctx.env, AGENTLEDGER_ALERT_WEBHOOK_URL: hook.url };
  const w1 = runCli(['worker'], { ...env, AGENTLEDGER_ALERTMANAGER_URL: `http://127.0.0.1:${proxy.port}`, AGENTLEDGER_WORKER_METRICS_PORT: String(port1) });
  const want = [...subjects.map((s) => `stuck_loop ${s}`), `convergence ${converging}`].sort();
  await until('every alert fired and delivered to the webhook while Alertmanager hangs', WAIT_MS, () => {
    const fired = new Set(accepted().filter((n) => n.notification === 'fired').map((n) => `${n.rule} ${n.subject}`));
    return Promise.resolve(want.every((k) => fired.has(k)) || undefined);
  }, [w1]);
  await until('a failed push, retried', WAIT_MS, async () => ((await metric(port1, 'agentledger_alertmanager_pushes_total', 'result="failed"')) >= 2 ? true : undefined), [w1]);
  assert.equal((await ours()).size, 0, 'nothing got through the hung proxy');

  // Alertmanager answers again: the pushes catch up.
  proxy.release();
  const listed = await until('the stuck loop listed by amtool', WAIT_MS, () => Promise.resolve(amtoolQuery('alertname=stuck_loop', `subject=${stuck}`)[0]), [w1]);
  assert.deepEqual(listed.labels, { alertname: 'stuck_loop', severity: 'critical', subject: stuck });
  assert.match(listed.annotations['description'] ?? '', /^finished Stuck; /);
  assert.equal(listed.generatorURL, `${PAGE}/api/loops?id-prefix=${encodeURIComponent(stuck)}`);
  const firedNotice = accepted().find((n) => n.rule === 'stuck_loop' && n.subject === stuck && n.notification === 'fired');
  assert.equal(new Date(listed.startsAt).getTime(), new Date(firedNotice!.firedAt).getTime(), 'startsAt is when it fired');
  assert.ok(new Date(listed.endsAt).getTime() > Date.now() + 60_000, 'a firing alert ends well after the next sweeps');
  const all = await until('every alert in Alertmanager, hostile subjects byte for byte', WAIT_MS, async () => {
    const got = await ours();
    return want.every((k) => got.has(k)) ? got : undefined;
  }, [w1]);
  assert.deepEqual([...all.keys()].sort(), want, 'exactly our alerts, each subject exactly as its LoopID');
  assert.equal(all.get(`convergence ${converging}`)![0]!.labels['severity'], 'warning');

  // A second worker pushing the same alerts straight to Alertmanager: still one alert each.
  const port2 = await closedPort();
  const w2 = runCli(['worker'], { ...env, AGENTLEDGER_ALERTMANAGER_URL: ALERTMANAGER_URL, AGENTLEDGER_WORKER_METRICS_PORT: String(port2) });
  await until('the second worker pushed twice', WAIT_MS, async () => ((await metric(port2, 'agentledger_alertmanager_pushes_total', 'result="sent"')) >= 2 ? true : undefined), [w2]);
  const twice = await ours();
  assert.deepEqual([...twice.keys()].sort(), want);
  for (const [k, list] of twice) assert.equal(list.length, 1, `one alert for ${JSON.stringify(k)}`);
  assert.equal(amtoolQuery('alertname=stuck_loop', `subject=${stuck}`).length, 1);
  await stop(w2);

  // Alertmanager restarted keeps no alert; the next pushes bring every firing one back.
  restartAlertmanager();
  await until('every firing alert back after the restart', WAIT_MS, async () => {
    const got = await ours();
    return want.every((k) => got.has(k)) || undefined;
  }, [w1]);

  // The converging loop finishes Completed: resolved, it leaves the list; the resolve is marked taken.
  await produceEnvelopes(ctx, chain(converging, [...convergingLinks, [at(Date.now()), 'LoopFinished', JSON.stringify({ outcome_kind: 'Completed' })]]).slice(4));
  const more = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], ctx.env);
  assert.equal(await more.exited, 0, more.stderr());
  await until('the resolve delivered to the webhook', WAIT_MS, () => Promise.resolve(accepted().some((n) => n.notification === 'resolved' && n.subject === converging) || undefined), [w1]);
  await until('the resolved alert gone from amtool alert query', WAIT_MS, () => Promise.resolve(amtoolQuery('alertname=convergence', `subject=${converging}`).length === 0 ? true : undefined), [w1]);
  const redis = createRedis(ctx.config.redis.url);
  try {
    const marks = await until('the resolve marked taken', WAIT_MS, async () => {
      const m = await redis.hgetall(takenKey(ctx.config.redis.queuePrefix));
      return Object.keys(m).length > 0 ? m : undefined;
    });
    assert.deepEqual(Object.keys(marks), [JSON.stringify([`http://127.0.0.1:${proxy.port}`, field('convergence', converging)])]);
  } finally {
    redis.disconnect();
  }
  assert.equal(amtoolQuery('alertname=stuck_loop', `subject=${stuck}`).length, 1, 'the stuck loop still fires');
  await stop(w1);
});

test('the pusher alone: a 400 logged and counted once, never re-sent; a resolved alert sent until taken; a loop\'s warning inhibited by its critical', { timeout: 120_000 }, async () => {
  const prefix = `${ctx.config.redis.queuePrefix}_push`;
  const subject = `${ctx.id}-pushed`;
  const now = Date.now();
  const state = (s: Partial<AlertState> & Pick<AlertState, 'rule' | 'severity'>): AlertState => ({
    subject,
    state: 'firing',
    firedAt: now - 5000,
    lastNotifiedAt: now - 5000,
    notifications: 1,
    detail: 'written by the test',
    ...s,
  });
  const states = [
    state({ rule: 'stuck_loop', severity: 'critical' }),
    state({ rule: 'convergence', severity: 'warning' }),
    state({ rule: 'chain_integrity', severity: 'warning', state: 'resolved', resolvedAt: now - 1000 }),
    // Resolved before it fired: Alertmanager refuses it ("start time must be before end time").
    state({ rule: 'waiting_on_human', severity: 'warning', state: 'resolved', firedAt: now, resolvedAt: now - 60_000 }),
  ];
  const redis = createRedis(ctx.config.redis.url);
  const warnings: string[] = [];
  const log: Logger = { ...createLogger('error'), warn: (msg, fields) => warnings.push(`${msg} ${JSON.stringify(fields)}`) };
  const sizes: number[] = [];
  let refused = 0;
  try {
    await redis.hset(stateKey(prefix), Object.fromEntries(states.map((s) => [field(s.rule, s.subject), JSON.stringify(s)])));
    const pusher = startPusher({ urls: [ALERTMANAGER_URL], timeoutMs: 5000, resendMs: 200, redis, prefix, log, onPush: (_u, result, n) => result === 'sent' && sizes.push(n), onRefused: () => refused++ });
    try {
      await until('six pushes taken', WAIT_MS, () => Promise.resolve(sizes.length >= 6 || undefined));
    } finally {
      await pusher.stop();
    }
    assert.equal(refused, 1, 'the refused alert counted once');
    const told = warnings.filter((w) => w.startsWith('Alertmanager refused an alert'));
    assert.equal(told.length, 1, warnings.join('\n'));
    assert.ok(told[0]!.includes('waiting_on_human') && told[0]!.includes('start time must be before end time'), told[0]);
    assert.equal(sizes[0], 4, 'the first push: both firing, the resolved, the one refused');
    assert.deepEqual(sizes.slice(1), sizes.slice(1).map(() => 2), 'then the firing ones only: the resolved one was taken, the refused one left out');
    assert.deepEqual(Object.keys(await redis.hgetall(takenKey(prefix))), [JSON.stringify([ALERTMANAGER_URL, field('chain_integrity', subject)])]);
    const got = await until('the warning inhibited by the critical of the same loop', WAIT_MS, async () => {
      const mine = await ours();
      const w = mine.get(`convergence ${subject}`)?.[0];
      return w !== undefined && w.status.inhibitedBy.length > 0 ? mine : undefined;
    });
    assert.equal(got.get(`stuck_loop ${subject}`)?.[0]?.status.state, 'active');
    assert.equal(got.get(`convergence ${subject}`)?.[0]?.status.state, 'suppressed');
    assert.equal(got.has(`waiting_on_human ${subject}`), false, 'the refused one is not there');
    assert.equal(got.has(`chain_integrity ${subject}`), false, 'a resolved one is not listed');
  } finally {
    await redis.del(stateKey(prefix), takenKey(prefix));
    redis.disconnect();
  }
});
