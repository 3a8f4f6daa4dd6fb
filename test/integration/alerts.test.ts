/**
 * Alerts end to end (issue 11) against the real stack: loops that converge
 * badly, stall, get stuck, wait on a human, spawn failing sub-agents or carry
 * a tampered envelope go through Kafka and `ingest`; `agentledger worker`
 * sweeps every 300 ms and delivers to a local receiver that checks every
 * signature and refuses its first three requests. Each alert must fire once,
 * remind after the interval, resolve once when its loop finishes — with the
 * worker SIGKILLed, Redis restarted and the alert states wiped from it on the
 * way.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { notice, type Notice } from '../../src/alerts/webhook.js';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { ALERT_SWEEP_JOB } from '../../src/jobs/queues.js';
import { envelopeJson } from '../../src/demo/traffic/envelope.js';
import { createRedis } from '../../src/jobs/redis.js';
import { createLogger } from '../../src/observability/logger.js';
import { migrate } from '../../src/migrate/migrate.js';
import { query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { REPO_ROOT, services } from '../support/services.js';
import { chain } from '../support/envelope-chain.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { runCli, sleep, type Running } from '../support/processes.js';
import { webhookReceiver, type Receiver } from '../support/webhook-receiver.js';
import { closedPort } from '../support/cli-run.js';

const SECRET = 'alerts-e2e-secret';
const RENOTIFY_MS = 6000;
const log = createLogger('error');
/** The Redis restart needs the local stack (testcontainers: the wipe alone). */
const local = (await services()).kind === 'local';
let ctx: TestContext;
let hook: Receiver;

/** RFC 3339 as Go's RFC3339Nano writes it (trailing zeros of the fraction dropped): what the chain hashes. */
const at = (ms: number): string => new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z');
const started = (name: string): string => JSON.stringify({ name });
const finished = (outcome: string): string => JSON.stringify({ outcome_kind: outcome });

/** The loops of the test, timed relative to `t0` (now): what each must raise is in its name. */
function traffic(t0: number): { key: string; value: Buffer }[] {
  const warn = (count: number): string => JSON.stringify({ detector: 'oscillation', reason: `flip-flopping between two plans (${count})`, count });
  const outcomes = (definition: string, failed: number, from: number): [string, string, string][] =>
    Array.from({ length: 20 }, (_, i) => [at(from + i), 'SubAgentCompleted', JSON.stringify({ child_loop_id: `${definition}-child-${i}`, definition, outcome_kind: i < failed ? 'Failed' : 'Completed' })]);
  // A tampered link: its hash is not the hash of its content.
  const tampered = chain('tampered', [
    [at(t0 - 20_000), 'LoopStarted', started('tampered')],
    [at(t0 - 19_000), 'IterationStarted', '{"iteration":1}'],
    [at(t0 - 18_000), 'LoopFinished', finished('Completed')],
  ]);
  const original = JSON.parse(tampered[1]!.value.toString()) as { Hash: number[] };
  const forged = envelopeJson('tampered', 2, at(t0 - 19_000), 'IterationStarted', Buffer.from('{"iteration":99}'), Buffer.from(original.Hash));
  tampered[1] = { key: 'tampered', value: Buffer.from(forged) };
  return [
    ...chain('converging-badly', [
      [at(t0 - 20_000), 'LoopStarted', started('converging-badly')],
      [at(t0 - 15_000), 'ConvergenceWarning', warn(1)],
      [at(t0 - 14_000), 'ConvergenceWarning', warn(2)],
      [at(t0 - 13_000), 'ConvergenceWarning', warn(3)],
    ]),
    ...chain('stalls', [
      [at(t0 - 20_000), 'LoopStarted', started('stalls')],
      [at(t0 - 10_000), 'IterationStarted', '{"iteration":1}'],
    ]),
    ...chain('gets-stuck', [
      [at(t0 - 20_000), 'LoopStarted', started('gets-stuck')],
      [at(t0 - 12_000), 'ConvergenceWarning', JSON.stringify({ detector: 'zero-progress', reason: 'no progress in 3 iterations', count: 3 })],
      [at(t0 - 10_000), 'LoopFinished', finished('Stuck')],
    ]),
    ...chain('asks-a-human', [
      [at(t0 - 20_000), 'LoopStarted', started('asks-a-human')],
      [at(t0 - 10_000), 'HumanRequested', JSON.stringify({ action_id: 'ask-1', prompt: 'May I delete prod?' })],
    ]),
    ...chain('parent', [
      [at(t0 - 40_000), 'LoopStarted', started('parent')],
      ...outcomes('flaky', 8, t0 - 30_000),
      ...outcomes('solid', 2, t0 - 29_000),
      [at(t0 - 5_000), 'LoopFinished', finished('Completed')],
    ]),
    ...tampered,
  ];
}

/**
 * Every notice the receiver accepted (a signed 200), decoded, each key once:
 * a worker killed after the receiver's 200 but before BullMQ recorded the
 * job done sends it again, with the same Idempotency-Key, which is what a
 * receiver drops a repeat by. Two transitions never share a key.
 */
const accepted = (): Notice[] => {
  const seen = new Set<string>();
  return hook.got
    .filter((r) => r.status === 200)
    .map((r) => notice.parse(JSON.parse(r.body)))
    .filter((n) => !seen.has(n.key) && seen.add(n.key) !== undefined);
};
const subjectOf = (n: Notice): string => `${n.rule} ${n.subject}`;

async function until(what: string, done: () => boolean | Promise<boolean>, worker?: Running): Promise<void> {
  for (let i = 0; i < 900; i++) {
    if (await done()) return;
    await sleep(100);
  }
  assert.fail(`not within 90 s: ${what}; accepted: ${JSON.stringify(accepted().map((n) => `${n.notification} ${subjectOf(n)}`))}${worker ? `; worker: ${worker.stderr().slice(-3000)}` : ''}`);
}

const WORKER_METRICS_PORT = await closedPort();
/** The sum of a counter of the worker's `/metrics` over the series whose labels include `labels` (0 when there are none yet; NaN when unreachable). */
async function workerMetric(name: string, labels: string): Promise<number> {
  const text = await fetch(`http://127.0.0.1:${WORKER_METRICS_PORT}/metrics`).then((r) => r.text(), () => undefined);
  if (text === undefined) return NaN;
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && l.slice(0, l.indexOf('}')).includes(labels))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

const FIRES = [
  'convergence converging-badly',
  'stalled_loop converging-badly',
  'stalled_loop stalls',
  'stuck_loop gets-stuck',
  'waiting_on_human asks-a-human',
  'stalled_loop asks-a-human',
  'subagent_failure_rate runtime:flaky',
  'chain_integrity tampered',
].sort();

before(async () => {
  hook = await webhookReceiver(SECRET, 3);
  ctx = await testContext('alerts', {
    AGENTLEDGER_ALERT_SWEEP_MS: '300',
    AGENTLEDGER_ALERT_STALLED_AFTER_MS: '3000',
    AGENTLEDGER_ALERT_HUMAN_WAIT_MS: '3000',
    AGENTLEDGER_ALERT_RENOTIFY_MS: String(RENOTIFY_MS),
    AGENTLEDGER_ALERT_WEBHOOK_URL: hook.url,
    AGENTLEDGER_ALERT_WEBHOOK_SECRET: SECRET,
    AGENTLEDGER_ROLLUP_LATE_MS: '2000',
  });
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
});
after(async () => {
  await ctx.cleanup();
  await hook.close();
});

test('each alert fires once, reminds after the interval and resolves once, through a worker kill and a Redis that lost the states', { timeout: 240_000 }, async () => {
  const t0 = Date.now();
  await produceEnvelopes(ctx, traffic(t0));
  const ingest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], ctx.env);
  assert.equal(await ingest.exited, 0, ingest.stderr());
  let worker = runCli(['worker'], ctx.env);

  // Every expected alert fires (the receiver refused the first three requests: they were retried).
  const fired = (): string[] => accepted().filter((n) => n.notification === 'fired').map(subjectOf).sort();
  await until('every expected alert delivered as fired', () => FIRES.every((f) => fired().includes(f)), worker);

  // A kill mid-sweep, a Redis restart (its append-only file keeps the
  // states and the queues), then a Redis that lost the alert states (as after
  // a restart without its data).
  worker.child.kill('SIGKILL');
  await worker.exited;
  if (local) {
    const r = spawnSync('bash', [`${REPO_ROOT}infra/stack.sh`, 'restart', 'redis'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
  }
  const redis = createRedis(ctx.config.redis.url);
  try {
    const prefix = ctx.config.redis.queuePrefix;
    assert.equal(await redis.del(`${prefix}:alerts:state`, `${prefix}:alerts:seeded`), 2, 'the states were in Redis');
  } finally {
    redis.disconnect();
  }
  // The second worker serves its metrics: its sweeps and transitions are what "nothing else fired" is read from.
  worker = runCli(['worker'], { ...ctx.env, AGENTLEDGER_WORKER_METRICS_PORT: String(WORKER_METRICS_PORT) });

  // Reminders: every alert still firing is reminded once the interval has passed, not before.
  await until('a reminder for the stalled loop', () => accepted().some((n) => n.notification === 'renotified' && subjectOf(n) === 'stalled_loop stalls'), worker);

  // The badly converging loop finishes Completed: its two alerts resolve.
  await produceEnvelopes(ctx, chain('converging-badly', [
    [at(t0 - 20_000), 'LoopStarted', started('converging-badly')],
    [at(t0 - 15_000), 'ConvergenceWarning', JSON.stringify({ detector: 'oscillation', reason: 'flip-flopping between two plans (1)', count: 1 })],
    [at(t0 - 14_000), 'ConvergenceWarning', JSON.stringify({ detector: 'oscillation', reason: 'flip-flopping between two plans (2)', count: 2 })],
    [at(t0 - 13_000), 'ConvergenceWarning', JSON.stringify({ detector: 'oscillation', reason: 'flip-flopping between two plans (3)', count: 3 })],
    [at(Date.now()), 'LoopFinished', finished('Completed')],
  ]).slice(4));
  const more = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], ctx.env);
  assert.equal(await more.exited, 0, more.stderr());
  const resolved = (): string[] => accepted().filter((n) => n.notification === 'resolved').map(subjectOf).sort();
  await until('both alerts of the finished loop resolved', () => ['convergence converging-badly', 'stalled_loop converging-badly'].every((s) => resolved().includes(s)), worker);
  // Nothing else fired: two whole sweeps after the resolves were seen (the
  // second started after they were) recorded no fired transition, and every
  // transition recorded in the alerts table was delivered.
  const sweepsThen = await workerMetric('agentledger_worker_jobs_total', `job="${ALERT_SWEEP_JOB}",result="done"`);
  await until('two more alert sweeps done', async () => (await workerMetric('agentledger_worker_jobs_total', `job="${ALERT_SWEEP_JOB}",result="done"`)) >= sweepsThen + 2, worker);
  assert.equal(await workerMetric('agentledger_alert_transitions_total', 'notification="resolved"'), 2, 'the metrics are this worker\'s: it recorded the two resolves');
  assert.equal(await workerMetric('agentledger_alert_transitions_total', 'notification="fired"'), 0, 'no alert fired after the restart, the resolves and two more sweeps');
  const recorded = async (): Promise<number> => Number((await query<{ n: string }>(ctx, 'SELECT toString(count()) AS n FROM alerts FINAL'))[0]!.n);
  await until('every recorded transition delivered', async () => (await recorded()) === accepted().length, worker);
  worker.child.kill('SIGTERM');
  assert.equal(await worker.exited, 0, worker.stderr());

  const all = accepted();
  assert.deepEqual(fired(), FIRES, 'each expected alert fired exactly once, and nothing else fired (a 10% failure rate does not)');
  assert.deepEqual(resolved(), ['convergence converging-badly', 'stalled_loop converging-badly'], 'each resolve delivered once');
  assert.ok(hook.got.every((r) => r.signed), 'every request signed');
  assert.equal(hook.got.filter((r) => r.status !== 200).length, 3, 'only the three refused requests failed');
  // A repeated key is the same transition's body, byte for byte.
  const bodies = new Map<string, string>();
  for (const r of hook.got.filter((g) => g.status === 200)) {
    assert.equal(bodies.get(r.key!) ?? r.body, r.body, 'a repeat is the same notice');
    bodies.set(r.key!, r.body);
  }
  // Each alert's notifications are counted up, its reminders included.
  for (const subject of new Set(all.map(subjectOf))) {
    const times = all.filter((n) => subjectOf(n) === subject && n.notification !== 'resolved').map((n) => n.notifications);
    assert.deepEqual(times, [...times].sort((a, b) => a - b), `${subject}: notifications counted up`);
  }
  const stuck = all.find((n) => n.rule === 'stuck_loop')!;
  assert.equal(stuck.severity, 'critical');
  assert.match(stuck.detail, /finished Stuck; convergence warnings: zero-progress: no progress in 3 iterations/);
  const chainAlert = all.find((n) => n.rule === 'chain_integrity')!;
  assert.match(chainAlert.detail, /^mismatch at seq 2/);
  const flaky = all.find((n) => n.subject === 'runtime:flaky')!;
  assert.match(flaky.detail, /^8 of 20 outcome\(s\) failed/);

  // The alerts table holds every transition delivered, once (FINAL), and the state of each alert.
  const rows = await query<{ n: string }>(ctx, 'SELECT toString(count()) AS n FROM alerts FINAL');
  assert.equal(Number(rows[0]!.n), all.length, 'one row per delivered transition');
  const current = await query<{ rule: string; subject: string; state: string }>(ctx, "SELECT rule, subject, state FROM alerts_current WHERE subject = 'converging-badly' ORDER BY rule");
  assert.deepEqual(current.map((r) => `${r.rule} ${r.state}`), ['convergence resolved', 'stalled_loop resolved']);
});
