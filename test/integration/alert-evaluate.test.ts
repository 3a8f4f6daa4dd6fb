/**
 * Alerts raised per flushed batch (issue 11, "Evaluation"): `ingest` adds
 * the loops a flush touched to the news in Redis once its rows are durable
 * and asks for an evaluation — one job waiting at most, never one per event —
 * which waits in Redis while no worker runs.
 * With the sweep a day away, a worker must raise the alerts that need no
 * clock (a Stuck finish, a tampered link, convergence warnings, failing
 * sub-agents of the loop runtime and of craze) from those jobs alone.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Queue } from 'bullmq';
import { Partitioners } from 'kafkajs';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { envelopeJson } from '../../src/demo/traffic/envelope.js';
import { ALERT_EVALUATE_JOB, ALERT_EVALUATIONS_QUEUE, ALERT_SWEEP_SCHEDULER, ALERTS_QUEUE, alertEvaluatePayload } from '../../src/jobs/queues.js';
import { createRedis } from '../../src/jobs/redis.js';
import { peekNews } from '../../src/alerts/news.js';
import { createLogger } from '../../src/observability/logger.js';
import { migrate } from '../../src/migrate/migrate.js';
import { createKafka, ensureTopics, TOPIC_CONFIG } from '../../src/kafka/client.js';
import { query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { chain } from '../support/envelope-chain.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { runCli, sleep, type Running } from '../support/processes.js';
import { closedPort } from '../support/cli-run.js';

const log = createLogger('error');
let ctx: TestContext;

const at = (ms: number): string => new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z');
const started = (name: string): string => JSON.stringify({ name });
const finished = (outcome: string): string => JSON.stringify({ outcome_kind: outcome });

before(async () => {
  ctx = await testContext('alert_evaluate', {
    // No sweep within the test: every alert must come from ingest's jobs.
    AGENTLEDGER_ALERT_SWEEP_MS: '86400000',
    AGENTLEDGER_BATCH_MAX_ROWS: '100',
  });
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  await ensureTopics(createKafka(ctx.config.kafka, log), [{ topic: ctx.config.kafka.topics.craze, numPartitions: 3, configEntries: TOPIC_CONFIG }]);
});
after(() => ctx.cleanup());

async function ingest(): Promise<void> {
  const run = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], ctx.env);
  assert.equal(await run.exited, 0, run.stderr());
}

async function withQueue<T>(fn: (q: Queue) => Promise<T>, name: string = ALERTS_QUEUE): Promise<T> {
  const redis = createRedis(ctx.config.redis.url);
  const q = new Queue(name, { connection: redis, prefix: ctx.config.redis.queuePrefix });
  try {
    return await fn(q);
  } finally {
    await q.close();
    redis.disconnect();
  }
}

async function until(what: string, done: () => Promise<boolean>, worker: Running): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await done()) return;
    await sleep(100);
  }
  const state = await query(ctx, 'SELECT rule, subject, state FROM alerts_current');
  const jobs = await withQueue((q) => q.getJobCounts());
  assert.fail(`not within 60 s: ${what}; alerts: ${JSON.stringify(state)}; jobs: ${JSON.stringify(jobs)}; worker: ${worker.stderr().slice(-3000)}`);
}

test('ingest gathers the loops with news of its flushes in Redis and asks for one evaluation, which waits while no worker runs', { timeout: 120_000 }, async () => {
  const t0 = Date.now();
  // 40 loops of 10 envelopes: 20 finish (news), 20 only iterate (none).
  const records = [];
  for (let l = 0; l < 40; l++) {
    const steps: [string, string, string][] = [[at(t0 - 60_000), 'LoopStarted', started(`busy-${l}`)]];
    for (let i = 1; i < 9; i++) steps.push([at(t0 - 60_000 + i * 1000), 'IterationStarted', JSON.stringify({ iteration: i })]);
    steps.push(l < 20 ? [at(t0 - 40_000), 'LoopFinished', finished('Completed')] : [at(t0 - 40_000), 'IterationStarted', '{"iteration":9}']);
    records.push(...chain(`busy-${l}`, steps));
  }
  await produceEnvelopes(ctx, records);
  await ingest();
  const jobs = await withQueue((q) => q.getJobs(['waiting', 'prioritized', 'delayed']), ALERT_EVALUATIONS_QUEUE);
  const evaluations = jobs.filter((j) => j.name === ALERT_EVALUATE_JOB);
  assert.equal(evaluations.length, 1, 'one evaluation waits in Redis, however many flushes asked (deduplicated)');
  assert.deepEqual(alertEvaluatePayload.parse(evaluations[0]!.data), {});
  const redis = createRedis(ctx.config.redis.url);
  const news = await peekNews(redis, ctx.config.redis.queuePrefix).finally(() => redis.disconnect());
  assert.deepEqual(news.loops.sort(), Array.from({ length: 20 }, (_, l) => `busy-${l}`).sort(), 'the news: exactly the loops with news');
  assert.equal(news.rates, false, 'no sub-agent outcome: no rate read');
});

test('a worker raises the alerts that need no clock from ingest’s evaluations alone, craze sub-agents included; its metrics and doctor tell', { timeout: 180_000 }, async () => {
  const port = await closedPort();
  const worker = runCli(['worker'], { ...ctx.env, AGENTLEDGER_WORKER_METRICS_PORT: String(port) });
  // The worker's first sweep (a scheduler may start with one) and the waiting jobs are done first.
  const sweeps = async (): Promise<number> => Number((await query<{ n: string }>(ctx, 'SELECT toString(count()) AS n FROM alert_sweeps'))[0]!.n);
  await until(
    'the queue idle with the next sweep a day away',
    () =>
      withQueue(async (q) => {
        const counts = await q.getJobCounts('waiting', 'active', 'prioritized');
        const scheduler = await q.getJobScheduler(ALERT_SWEEP_SCHEDULER);
        const evaluations = await withQueue((e) => e.getJobCounts('waiting', 'active', 'prioritized'), ALERT_EVALUATIONS_QUEUE);
        return [...Object.values(counts), ...Object.values(evaluations)].every((n) => n === 0) && scheduler !== undefined && Number(scheduler.next) > Date.now() + 3_600_000;
      }),
    worker,
  );
  const sweptBefore = await sweeps();

  const t0 = Date.now();
  const tampered = chain('tampered', [
    [at(t0 - 20_000), 'LoopStarted', started('tampered')],
    [at(t0 - 19_000), 'IterationStarted', '{"iteration":1}'],
    [at(t0 - 18_000), 'IterationStarted', '{"iteration":2}'],
  ]);
  const original = JSON.parse(tampered[1]!.value.toString()) as { Hash: number[] };
  tampered[1] = { key: 'tampered', value: Buffer.from(envelopeJson('tampered', 2, at(t0 - 19_000), 'IterationStarted', Buffer.from('{"iteration":99}'), Buffer.from(original.Hash))) };
  const warn = (count: number): string => JSON.stringify({ detector: 'oscillation', reason: `flip-flop ${count}`, count });
  await produceEnvelopes(ctx, [
    ...tampered,
    ...chain('gets-stuck', [
      [at(t0 - 20_000), 'LoopStarted', started('gets-stuck')],
      [at(t0 - 10_000), 'LoopFinished', finished('Stuck')],
    ]),
    ...chain('converging-badly', [
      [at(t0 - 20_000), 'LoopStarted', started('converging-badly')],
      [at(t0 - 15_000), 'ConvergenceWarning', warn(1)],
      [at(t0 - 14_000), 'ConvergenceWarning', warn(2)],
      [at(t0 - 13_000), 'ConvergenceWarning', warn(3)],
    ]),
    ...chain('parent', [
      [at(t0 - 40_000), 'LoopStarted', started('parent')],
      ...Array.from({ length: 20 }, (_, i): [string, string, string] => [
        at(t0 - 30_000 + i),
        'SubAgentCompleted',
        JSON.stringify({ child_loop_id: `child-${i}`, definition: 'flaky', outcome_kind: i < 8 ? 'Failed' : 'Completed' }),
      ]),
    ]),
  ]);
  // craze: 24 `reviewer` sub-agents finish, 10 failed, 4 cancelled (set apart: 20 outcomes count), 10 completed.
  const session = '0195604e-0000-7000-8000-00000000e7a1';
  const crazeRecords = Array.from({ length: 24 }, (_, i) => {
    const status = i < 10 ? 'failed' : i < 14 ? 'cancelled' : 'completed';
    const event = { type: 'subagent', subagent: { id: `sa-${i}`, attemptId: `sa-${i}.1`, subagentType: 'reviewer', status }, subagentChange: 'finished', at: at(t0 - 5000 + i) };
    return { key: session, value: JSON.stringify({ sessionId: session, incarnation: 'inc-1', seq: i + 1, event }) };
  });
  const producer = createKafka(ctx.config.kafka, log).producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  await producer.send({ topic: ctx.config.kafka.topics.craze, acks: -1, messages: crazeRecords });
  await producer.disconnect();
  await ingest();

  const expected = ['chain_integrity tampered', 'convergence converging-badly', 'stuck_loop gets-stuck', 'subagent_failure_rate craze:reviewer', 'subagent_failure_rate runtime:flaky'];
  const firing = async (): Promise<string[]> =>
    (await query<{ s: string }>(ctx, "SELECT concat(rule, ' ', subject) AS s FROM alerts_current WHERE state = 'firing' ORDER BY s")).map((r) => r.s);
  await until(
    'the alerts of the new traffic firing',
    async () => {
      const now = await firing();
      return expected.every((e) => now.includes(e));
    },
    worker,
  );
  assert.deepEqual(await firing(), expected, 'these alerts and no other (a stall or a wait needs the clock: the sweep)');
  assert.equal(await sweeps(), sweptBefore, 'no sweep ran: the evaluations raised them');
  const [craze] = await query<{ detail: string }>(ctx, "SELECT detail FROM alerts_current WHERE subject = 'craze:reviewer'");
  assert.match(craze!.detail, /^10 of 20 outcome\(s\) failed/);
  assert.match(craze!.detail, /set apart: cancelled 4/);

  // The worker's metrics: firing alerts by rule, the jobs it ran, the transitions, the queue depth.
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const metric = (line: string): number => Number(new RegExp(`^${line.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  assert.equal(metric('agentledger_alerts_firing{rule="stuck_loop"}'), 1);
  assert.equal(metric('agentledger_alerts_firing{rule="subagent_failure_rate"}'), 2);
  assert.equal(metric('agentledger_alerts_firing{rule="stalled_loop"}'), 0);
  assert.equal(metric('agentledger_alert_transitions_total{rule="chain_integrity",notification="fired"}'), 1);
  assert.ok(metric('agentledger_worker_jobs_total{job="alert-evaluate",result="done"}') >= 1, metrics);
  assert.equal(metric('agentledger_queue_jobs{queue="alerts",state="failed"}'), 0);
  worker.child.kill('SIGTERM');
  assert.equal(await worker.exited, 0, worker.stderr());

  // doctor reports the queues: the alerts queue idle, its next sweep a day away.
  const doctor = runCli(['doctor', '--json'], ctx.env);
  let out = '';
  doctor.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  assert.equal(await doctor.exited, 0, doctor.stderr());
  const queues = (JSON.parse(out) as { service: string; ok: boolean; detail: string }[]).find((c) => c.service === 'queues')!;
  assert.equal(queues.ok, true);
  assert.match(queues.detail, /alerts: 0 waiting, 0 active, \d+ delayed, 0 prioritized, 0 failed; next sweep in \d+ s/);
});

test('with Redis unreachable, ingest still stores every envelope and exits 0, saying once that the evaluations are left to the sweep', { timeout: 120_000 }, async () => {
  const port = await closedPort();
  const t0 = Date.now();
  const records = Array.from({ length: 30 }, (_, l) =>
    chain(`no-redis-${l}`, [
      [at(t0 - 20_000), 'LoopStarted', started(`no-redis-${l}`)],
      [at(t0 - 10_000), 'LoopFinished', finished('Stuck')],
    ]),
  ).flat();
  const before = Number((await query<{ n: string }>(ctx, 'SELECT toString(count()) AS n FROM envelopes'))[0]!.n);
  await produceEnvelopes(ctx, records);
  const run = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], {
    ...ctx.env,
    AGENTLEDGER_REDIS_URL: `redis://127.0.0.1:${port}`,
    AGENTLEDGER_ALERT_EVALUATE_GAP_MS: '100',
    AGENTLEDGER_BATCH_MAX_ROWS: '10',
  });
  assert.equal(await run.exited, 0, run.stderr());
  const after = Number((await query<{ n: string }>(ctx, 'SELECT toString(count()) AS n FROM envelopes'))[0]!.n);
  assert.equal(after - before, records.length, 'every envelope stored');
  const warnings = run.stderr().split('\n').filter((l) => l.includes('alert evaluation not queued'));
  assert.equal(warnings.length, 1, `said once per outage, though several flushes asked: ${run.stderr().slice(-2000)}`);
});
