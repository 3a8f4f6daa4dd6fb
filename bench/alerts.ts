/**
 * Alerting at ingest speed (issue 11): with demo traffic flowing through
 * `agentledger ingest` and `agentledger worker` running, how deep does the
 * alerts queue get, how many jobs a second does the worker run, how many
 * Redis commands does alerting cost per ingested envelope (target < 0.01),
 * and how much ingest throughput does it take (on/off >= 0.9)? Not a test:
 * it prints figures and PASS/FAIL lines.
 *
 *   node dist/bench/alerts.js [--loops 8000] [--envelopes 50] [--rounds 3]
 *                             [--sweep-ms 30000] [--cli bin/agentledger.js] [--keep]
 *
 * 1. Setup (not timed): produce-demo writes loops x envelopes (~1 KB each) to
 *    a fresh 4-partition topic bench.alerts.<ts>.envelopes, the loops
 *    starting over the half hour before (--start-time now-30m: within the
 *    rules' windows and max age, and old enough to stall).
 * 2. --rounds sets of three rounds, off, on and quiet, the order rotated
 *    each set (a drifting machine favours none). Each round has a fresh database (migrated by
 *    the CLI as agentledger_test), Kafka group and queue prefix, so rounds
 *    share no ClickHouse rows and no Redis state:
 *    - every round starts the worker first (rollup sweeps every --sweep-ms:
 *      issue 10's cost is in both arms), then ingest; once ingest exits and
 *      the alerts queue is empty (at most 120 s), the worker gets SIGTERM;
 *    - off: no alerting: AGENTLEDGER_ALERT_EVALUATE_ON_INGEST=false and the
 *      alert sweep a day away;
 *    - on: evaluations on ingest and alert sweeps every --sweep-ms;
 *    - quiet: as on, with every threshold out of reach (few alerts fire, as
 *      on a healthy fleet): the Redis commands per envelope of alerting
 *      itself, which the target is judged on; the on rounds also show what
 *      each alert transition costs (its state, row and delivery job).
 *    Throughput is envelopes / wall seconds from ingest's start until
 *    count() of the round's envelopes equals the number produced (polled
 *    every 500 ms), as bench/e2e.sh measures it. Every second one Redis
 *    client samples the alerts queue's job counts (the depth) and INFO
 *    total_commands_processed; the round's Redis commands are the counter's
 *    delta less the sampler's own (a sample's cost measured back to back
 *    before the round, times the samples). Jobs come from the queue's event
 *    stream, read after the round; sweeps from the round's database.
 * 3. One line per round, the depth and jobs series of each on round, then
 *    the figures and PASS/FAIL lines; the throwaway databases, topics,
 *    groups and Redis keys are removed (--keep leaves them).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ClickHouseClient } from '@clickhouse/client';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { parseConfig } from '../src/config/index.js';
import { ALERT_EVALUATE_JOB, ALERTS_QUEUE } from '../src/jobs/queues.js';
import { createClickHouse } from '../src/clickhouse/client.js';
import { median, spread } from './support.js';

const HELP = `Usage: node dist/bench/alerts.js [options]   (after npx tsc -p tsconfig.json)

Ingest throughput with alerting on (evaluations asked for per flush, the
worker running them and sweeping) against off (the worker running the rollup
sweeps only), in sets of rounds over the same produce-demo traffic: off; on
with the default rules; quiet, with thresholds out of reach so that few
alerts fire (the Redis target is judged on it). With alerting on: the alerts
queue's depth each second, the worker's jobs per second and the Redis
commands per envelope.
Needs the local stack (infra/stack.sh up).

Options:
  --loops N       produce-demo loops (default 8000)
  --envelopes N   envelopes per loop (default 50: 400,000 envelopes)
  --rounds N      sets of rounds, one off, one on and one quiet each (default 3)
  --sweep-ms N    the worker's AGENTLEDGER_ALERT_SWEEP_MS and AGENTLEDGER_ROLLUP_SWEEP_MS
                  (default 30000, the product's default)
  --cli PATH      the agentledger launcher to run (default bin/agentledger.js, which loads dist/)
  --keep          leave the databases, topics, groups and Redis keys
  -h, --help      this text

Exit 0 when "ratio on/off >= 0.9", "Redis commands per envelope < 0.01" and
"queue depth bounded (max <= 10)" pass. "20,000 envelopes/s reached with
alerting on" is printed, PASS or FAIL, but does not decide the exit code: a
2-core machine sharing its cores with Kafka and ClickHouse may not reach it.

Settings: AGENTLEDGER_CLICKHOUSE_URL (http://127.0.0.1:8123), _USER and
_PASSWORD (agentledger_test, which may create databases), AGENTLEDGER_KAFKA_BROKERS
(127.0.0.1:9092), AGENTLEDGER_REDIS_URL and AGENTLEDGER_REDIS_PASSWORD (the
local stack's, as agentledger's config defaults them).`;

const OPTIONS = {
  loops: { type: 'string', default: '8000' },
  envelopes: { type: 'string', default: '50' },
  rounds: { type: 'string', default: '3' },
  'sweep-ms': { type: 'string', default: '30000' },
  cli: { type: 'string' },
  keep: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

function usageError(message: string): never {
  process.stderr.write(`alerts bench: ${message}\n${HELP}\n`);
  process.exit(2);
}

const args = (() => {
  try {
    return parseArgs({ options: OPTIONS }).values;
  } catch (err) {
    return usageError(err instanceof Error ? err.message : String(err));
  }
})();
if (args.help) {
  process.stdout.write(`${HELP}\n`);
  process.exit(0);
}
const whole = (name: string, text: string): number => {
  const n = Number(text);
  return /^\d+$/.test(text) && Number.isSafeInteger(n) && n >= 1 ? n : usageError(`--${name} takes a whole number >= 1`);
};
const LOOPS = whole('loops', args.loops);
const PER_LOOP = whole('envelopes', args.envelopes);
const PAIRS = whole('rounds', args.rounds);
const SWEEP_MS = whole('sweep-ms', args['sweep-ms']);
/** The repository: two folders up from dist*\/bench/alerts.js. */
const REPO = new URL('../../', import.meta.url).pathname;
const CLI = args.cli === undefined ? join(REPO, 'bin', 'agentledger.js') : isAbsolute(args.cli) ? args.cli : resolve(args.cli);

const TARGET_RATIO = 0.9;
const TARGET_COMMANDS_PER_ENVELOPE = 0.01;
const TARGET_MAX_DEPTH = 10;
const TARGET_RATE = 20_000;
const POLL_MS = 500;
const SAMPLE_MS = 1000;
const IDLE_EXIT_MS = 5000;
const DRAIN_TIMEOUT_MS = 120_000;
/** Generous: a round that slow has failed anyway, and a stuck one must not hang the bench. */
const INGEST_TIMEOUT_MS = Math.max(240_000, LOOPS * PER_LOOP);

const STAMP = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
const TOPIC = `bench.alerts.${STAMP}.envelopes`;
const TOPICS = { AGENTLEDGER_ENVELOPE_TOPIC: TOPIC, AGENTLEDGER_CRAZE_TOPIC: `bench.alerts.${STAMP}.craze`, AGENTLEDGER_DLQ_TOPIC: `bench.alerts.${STAMP}.dlq` };

/**
 * A throwaway database per round needs a user that may create one: the
 * local stack's `agentledger_test` (agentledger's own writer has no DDL).
 */
const CLICKHOUSE_USER = process.env['AGENTLEDGER_CLICKHOUSE_USER'] ?? 'agentledger_test';
const CLICKHOUSE_PASSWORD = process.env['AGENTLEDGER_CLICKHOUSE_PASSWORD'] ?? (CLICKHOUSE_USER === 'agentledger_test' ? 'agentledger_test' : '');
const CLICKHOUSE_URL = process.env['AGENTLEDGER_CLICKHOUSE_URL'] ?? 'http://127.0.0.1:8123';
const KAFKA_BROKERS = process.env['AGENTLEDGER_KAFKA_BROKERS'] ?? '127.0.0.1:9092';

const say = (line: string): void => void process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The environment of every CLI run: only what is set here (and PATH), so
 * nothing from the caller's shell (a migrator user, another database)
 * changes what a round measures. Redis is taken from the caller when set,
 * else the config's defaults, the local stack's user and password, apply.
 */
function cliEnv(extra: Record<string, string>): Record<string, string> {
  const pass = (name: string): Record<string, string> => {
    const value = process.env[name];
    return value === undefined ? {} : { [name]: value };
  };
  return {
    PATH: process.env['PATH'] ?? '',
    AGENTLEDGER_CLICKHOUSE_URL: CLICKHOUSE_URL,
    AGENTLEDGER_CLICKHOUSE_USER: CLICKHOUSE_USER,
    AGENTLEDGER_CLICKHOUSE_PASSWORD: CLICKHOUSE_PASSWORD,
    AGENTLEDGER_KAFKA_BROKERS: KAFKA_BROKERS,
    ...pass('AGENTLEDGER_REDIS_URL'),
    ...pass('AGENTLEDGER_REDIS_PASSWORD'),
    ...TOPICS,
    AGENTLEDGER_METRICS_PORT: '0',
    AGENTLEDGER_LOG_LEVEL: 'warn',
    // The lines are read by a person, and by patterns here (serve's address).
    AGENTLEDGER_LOG_FORMAT: 'text',
    ...extra,
  };
}

// ---------------------------------------------------------------- figures (pure)

/**
 * off: the worker for the rollups only, no evaluation, no alert sweep. on:
 * evaluations and alert sweeps with the default rules, on demo traffic where about a fifth of the loops raise an
 * alert (convergence warnings, unfinished loops): the worst case for the
 * ingest ratio, and what one alert transition costs in Redis. quiet: the same
 * machinery with thresholds out of reach, so few alerts fire, as on a healthy
 * fleet: what alerting itself costs per envelope.
 */
type Mode = 'off' | 'on' | 'quiet';
const MODES: readonly Mode[] = ['off', 'on', 'quiet'];
const alerting = (m: Mode): boolean => m !== 'off';

/** The modes of set p (0-based), rotated each set so a drifting machine favours none. */
function pairOrder(p: number): readonly Mode[] {
  return MODES.map((_, i) => MODES[(i + p) % MODES.length]!);
}

/** Rule thresholds out of reach (quiet rounds): every rule is evaluated, nearly none fires. */
const QUIET_RULES: Readonly<Record<string, string>> = {
  AGENTLEDGER_ALERT_CONVERGENCE_MIN_WARNINGS: '1000000',
  AGENTLEDGER_ALERT_CONVERGENCE_COUNT: '1000000',
  AGENTLEDGER_ALERT_STALLED_AFTER_MS: String(30 * 86_400_000),
  AGENTLEDGER_ALERT_MAX_AGE_MS: String(31 * 86_400_000),
  AGENTLEDGER_ALERT_HUMAN_WAIT_MS: String(30 * 86_400_000),
  AGENTLEDGER_ALERT_SUBAGENT_MIN_OUTCOMES: '1000000',
  AGENTLEDGER_ALERT_GAP_GRACE_MS: String(30 * 86_400_000),
};


/** One look at Redis: the alerts queue's counts and the server's command counter. */
interface Sample {
  /** ms since the round started (this host's clock, as the event stream's ids). */
  readonly atMs: number;
  /** waiting + active + delayed + prioritized: the next scheduled sweep waits in delayed, so an idle on-round queue reads 1. */
  readonly depth: number;
  /** waiting + active + prioritized: evaluations and sweeps not yet done. */
  readonly pending: number;
  /** INFO stats total_commands_processed, every client's, commands run inside scripts included. */
  readonly commands: number;
}

/**
 * What one sample costs Redis, from back-to-back samples: the counter's
 * smallest step between consecutive ones. Each step holds one sample (the
 * counter is read after the earlier INFO was counted), plus whatever other
 * clients sent meanwhile, which the smallest step leaves out best.
 */
function sampleCost(backToBack: readonly Sample[]): number {
  const steps = backToBack.slice(1).map((s, i) => s.commands - backToBack[i]!.commands);
  return Math.min(...steps);
}

/**
 * The round's Redis commands between the first and the last sample, raw and
 * less the sampler's: every sample after the first added `cost` (the first
 * one's INFO is counted in the interval, the last one's is not).
 */
function roundCommands(samples: readonly Sample[], cost: number): { raw: number; net: number } {
  const raw = samples.at(-1)!.commands - samples[0]!.commands;
  return { raw, net: raw - (samples.length - 1) * cost };
}

/** INFO commandstats as calls per command (commands run inside scripts under their own names). */
function parseCommandStats(info: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(m[1]!, Number(m[2]));
  return calls;
}

/** The commands run between two commandstats, most first: where a round's Redis commands went. */
function commandDelta(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): [string, number][] {
  return [...after]
    .map(([cmd, n]): [string, number] => [cmd, n - (before.get(cmd) ?? 0)])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
}

/** An entry of a BullMQ event stream: its id (`<ms>-<n>`) and field/value list. */
type StreamEntry = [id: string, fields: string[]];

interface JobTally {
  /** Evaluation jobs added (by ingest's trigger). */
  readonly evaluationsAdded: number;
  readonly evaluationsDone: number;
  readonly evaluationsFailed: number;
  /** When each job of any kind (evaluations and sweeps) completed or failed, in ms since the round started. */
  readonly doneAtMs: readonly number[];
}

/**
 * The jobs of a round from its alerts queue's event stream: `added` events
 * name their job, `completed` and `failed` ones give only its id; an entry's
 * id starts with Redis's clock in ms. (The completed set cannot count them:
 * ROLLUP_JOB_OPTIONS keeps its last 100.)
 */
function tallyJobs(entries: readonly StreamEntry[], roundStartMs: number): JobTally {
  const evaluations = new Set<string>();
  let evaluationsDone = 0;
  let evaluationsFailed = 0;
  const doneAtMs: number[] = [];
  for (const [id, list] of entries) {
    const f = new Map<string, string>();
    for (let i = 0; i + 1 < list.length; i += 2) f.set(list[i]!, list[i + 1]!);
    const jobId = f.get('jobId') ?? '';
    const event = f.get('event');
    if (event === 'added' && f.get('name') === ALERT_EVALUATE_JOB) evaluations.add(jobId);
    if (event !== 'completed' && event !== 'failed') continue;
    if (evaluations.has(jobId)) {
      if (event === 'completed') evaluationsDone++;
      else evaluationsFailed++;
    }
    doneAtMs.push(Number(id.split('-')[0]) - roundStartMs);
  }
  return { evaluationsAdded: evaluations.size, evaluationsDone, evaluationsFailed, doneAtMs };
}

/** Jobs done in each whole second since the round started. */
function perSecond(atMs: readonly number[]): number[] {
  const bins: number[] = [];
  for (const t of atMs) {
    const second = Math.max(0, Math.floor(t / 1000));
    while (bins.length <= second) bins.push(0);
    bins[second]!++;
  }
  return bins;
}

/** Jobs done per second while ingest ran: from its start (ms into the round) for `seconds`. */
function jobsPerSecond(tally: JobTally, ingestStartMs: number, seconds: number): number {
  return tally.doneAtMs.filter((t) => t >= ingestStartMs && t < ingestStartMs + seconds * 1000).length / seconds;
}

/** Each set's ingest throughput in mode `m` over off. */
function pairRatios(rounds: readonly RoundResult[], m: Mode = 'on'): number[] {
  const rate = (p: number, mode: Mode): number => rounds.find((r) => r.pair === p && r.mode === mode)!.rate;
  return [...new Set(rounds.map((r) => r.pair))].map((p) => rate(p, m) / rate(p, 'off'));
}

interface RoundResult {
  readonly n: number;
  readonly pair: number;
  readonly mode: Mode;
  readonly envelopes: number;
  readonly seconds: number;
  readonly rate: number;
  readonly samples: readonly Sample[];
  readonly sampleCost: number;
  readonly redis: { readonly raw: number; readonly net: number };
  /** The round's commands by name, most first (the sampler's included). */
  readonly byCommand: readonly [string, number][];
  /** When ingest started, ms into the round. */
  readonly ingestStartMs: number;
  /** On rounds only. */
  readonly on?: {
    readonly jobs: JobTally;
    /** Evaluations still queued when the worker was stopped. */
    readonly left: number;
    readonly drained: boolean;
    readonly alertSweeps: number;
    readonly rollupSweeps: number;
    readonly alertsRecorded: number;
    /** The event stream reached BullMQ's trim length: early events may be gone. */
    readonly eventsTrimmed: boolean;
  };
}

function roundLine(r: RoundResult): string {
  const depths = r.samples.map((s) => s.depth);
  const perEnvelope = r.redis.net / r.envelopes;
  const head = `round ${r.n} (set ${r.pair + 1}) ${r.mode.padEnd(5)} ${String(Math.round(r.rate)).padStart(7)} envelopes/s ${r.seconds.toFixed(2).padStart(7)} s`;
  const redis = `Redis ${r.redis.raw} raw, ${r.redis.net} net of ${r.samples.length - 1} samples x ${r.sampleCost} = ${perEnvelope.toFixed(5)}/envelope`;
  if (r.on === undefined) return `${head}  ${redis}  depth max ${Math.max(...depths)}`;
  const o = r.on;
  const jobs =
    `jobs: ${o.jobs.evaluationsAdded} evaluations added (${o.jobs.evaluationsDone} done, ${o.jobs.evaluationsFailed} failed, ${o.left} left), ` +
    `${jobsPerSecond(o.jobs, r.ingestStartMs, r.seconds).toFixed(2)} jobs/s during ingest, ${o.alertSweeps} alert + ${o.rollupSweeps} rollup sweeps, ${o.alertsRecorded} alert transitions`;
  const drained = o.drained ? '' : `  NOT DRAINED within ${DRAIN_TIMEOUT_MS / 1000} s`;
  const trimmed = o.eventsTrimmed ? '  (event stream trimmed: job counts may be short)' : '';
  return `${head}  ${redis}  depth max ${Math.max(...depths)} median ${median(depths)}  ${jobs}${drained}${trimmed}`;
}

interface Verdict {
  readonly label: string;
  readonly pass: boolean;
  readonly figure: string;
  /** Decides the exit code. */
  readonly gates: boolean;
}

/** The PASS/FAIL lines from every round; each set gives one on/off ratio. */
function verdicts(rounds: readonly RoundResult[]): Verdict[] {
  const on = rounds.filter((r) => alerting(r.mode));
  const ratio = median(pairRatios(rounds));
  const quiet = rounds.filter((r) => r.mode === 'quiet');
  const perEnvelope = median(quiet.map((r) => r.redis.net / r.envelopes));
  const maxDepth = Math.max(...on.flatMap((r) => r.samples.map((s) => s.depth)));
  const undrained = on.filter((r) => r.on?.drained === false).length;
  const onRate = median(rounds.filter((r) => r.mode === 'on').map((r) => r.rate));
  return [
    { label: `ratio on/off >= ${TARGET_RATIO}`, pass: ratio >= TARGET_RATIO, figure: `median of the sets ${ratio.toFixed(3)} (default rules, alert-heavy traffic)`, gates: true },
    {
      label: `Redis commands per envelope < ${TARGET_COMMANDS_PER_ENVELOPE}`,
      pass: perEnvelope < TARGET_COMMANDS_PER_ENVELOPE,
      figure: `median of the quiet rounds ${perEnvelope.toFixed(5)} (the on rounds' figure, which adds each alert transition's own commands, is above)`,
      gates: true,
    },
    {
      label: `queue depth bounded (max <= ${TARGET_MAX_DEPTH})`,
      pass: maxDepth <= TARGET_MAX_DEPTH && undrained === 0,
      figure: `max ${maxDepth}${undrained === 0 ? ', every on round drained' : `, ${undrained} on round(s) NOT drained within ${DRAIN_TIMEOUT_MS / 1000} s`}`,
      gates: true,
    },
    {
      label: `${TARGET_RATE.toLocaleString('en-US')} envelopes/s reached with alerting on (median)`,
      pass: onRate >= TARGET_RATE,
      figure: `${Math.round(onRate)} envelopes/s (printed, not gating the exit)`,
      gates: false,
    },
  ];
}

// ---------------------------------------------------------------- processes

/** Spawned children still running: stopped on the way out, whatever happens. */
const children = new Set<ChildProcess>();

interface Run {
  readonly child: ChildProcess;
  /** The exit code (null when killed by a signal) and the output's tails. */
  readonly done: Promise<{ code: number | null; out: string; err: string }>;
  /** stderr so far (its last 200 KB). */
  err(): string;
}

/** Runs `node <--cli> argv` with exactly `env`. */
function cli(argv: readonly string[], env: Record<string, string>): Run {
  const child = spawn(process.execPath, [CLI, ...argv], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-200_000)));
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-200_000)));
  const done = new Promise<{ code: number | null; out: string; err: string }>((resolveDone) =>
    child.on('close', (code) => {
      children.delete(child);
      resolveDone({ code, out, err });
    }),
  );
  return { child, done, err: () => err };
}

const running = (run: Run): boolean => run.child.exitCode === null && run.child.signalCode === null;
const tail = (text: string): string => text.trim().split('\n').slice(-15).join('\n');

/** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
async function stop(run: Run, graceMs: number): Promise<number | null> {
  if (running(run)) run.child.kill('SIGTERM');
  const timer = setTimeout(() => run.child.kill('SIGKILL'), graceMs);
  const { code } = await run.done;
  clearTimeout(timer);
  return code;
}

/** The exit code once the process exits by itself, or after SIGTERM (then SIGKILL) when it has not within `ms`. */
async function exitWithin(run: Run, ms: number): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), ms)));
  const first = await Promise.race([run.done.then((r) => r.code), late]);
  clearTimeout(timer);
  if (first !== 'late') return first;
  say(`  the process did not exit within ${ms / 1000} s; stopping it`);
  return stop(run, 10_000);
}

async function count(ch: ClickHouseClient, sql: string): Promise<number> {
  const rows = await ch.query({ query: sql, format: 'JSONEachRow' }).then((r) => r.json<{ n: string | number }>());
  return Number(rows[0]?.n ?? 0);
}

/** Waits (up to 60 s) until ClickHouse runs no merge, so a round does not share the cores with the last one's. */
async function settleMerges(admin: ClickHouseClient): Promise<void> {
  for (let i = 0; i < 60; i++) {
    if ((await count(admin, 'SELECT count() AS n FROM system.merges')) === 0) return;
    await sleep(1000);
  }
  say('ClickHouse merges still running after 60 s; going on');
}

// ---------------------------------------------------------------- one round

interface Sampler {
  readonly samples: Sample[];
  /** Stops sampling and takes the last sample. */
  finish(): Promise<Sample[]>;
}

async function sample(queue: Queue, redis: Redis, startMs: number): Promise<Sample> {
  const c = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
  const info = await redis.info('stats');
  const commands = Number(/total_commands_processed:(\d+)/.exec(info)?.[1]);
  if (!Number.isSafeInteger(commands)) throw new Error('INFO stats has no total_commands_processed');
  const pending = (c['waiting'] ?? 0) + (c['active'] ?? 0) + (c['prioritized'] ?? 0);
  return { atMs: Date.now() - startMs, depth: pending + (c['delayed'] ?? 0), pending, commands };
}

/** One sample now, then one a second until finish(), which throws if a sample failed (sampling stops there). */
function startSampler(queue: Queue, redis: Redis, first: Sample, startMs: number): Sampler {
  const samples = [first];
  let stopped = false;
  let failure: Error | undefined;
  const loop = (async () => {
    while (!stopped) {
      await sleep(SAMPLE_MS - ((Date.now() - startMs) % SAMPLE_MS));
      if (stopped) break;
      try {
        samples.push(await sample(queue, redis, startMs));
      } catch (err) {
        failure = err instanceof Error ? err : new Error(String(err));
        return;
      }
    }
  })();
  return {
    samples,
    async finish() {
      stopped = true;
      await loop;
      if (failure !== undefined) throw failure;
      samples.push(await sample(queue, redis, startMs));
      return samples;
    },
  };
}

interface RoundSetup {
  readonly n: number;
  readonly pair: number;
  readonly mode: Mode;
  readonly envelopes: number;
  readonly redis: Redis;
  readonly admin: ClickHouseClient;
  readonly made: Made;
}

/** What the bench made, for the clean-up. */
interface Made {
  readonly databases: string[];
  readonly groups: string[];
  readonly prefixes: string[];
  topics: boolean;
}

async function runRound(s: RoundSetup): Promise<RoundResult> {
  const db = `bench_alerts_${STAMP}_${s.n}`;
  const group = `bench.alerts.${STAMP}.round${s.n}`;
  const prefix = `benchalerts${STAMP}r${s.n}`;
  s.made.databases.push(db);
  s.made.groups.push(group);
  s.made.prefixes.push(prefix);
  const env = (extra: Record<string, string> = {}): Record<string, string> =>
    cliEnv({ AGENTLEDGER_CLICKHOUSE_DATABASE: db, AGENTLEDGER_KAFKA_GROUP_ID: group, AGENTLEDGER_QUEUE_PREFIX: prefix, ...extra });

  const migrated = await cli(['migrate'], env()).done;
  if (migrated.code !== 0) throw new Error(`migrate of ${db} failed (exit ${migrated.code}):\n${tail(migrated.err)}`);
  await settleMerges(s.admin);
  const ch = createClickHouse(parseConfig(env()).clickhouse, db);
  // A reader only: it must not write the queue's meta inside the measured window.
  const queue = new Queue(ALERTS_QUEUE, { connection: s.redis, prefix, skipMetasUpdate: true });
  queue.on('error', () => undefined);
  const processes: Run[] = [];
  try {
    await queue.waitUntilReady();
    // A warm-up (ioredis loads BullMQ's script), then back-to-back samples for the sampler's cost.
    const startMs = Date.now();
    await sample(queue, s.redis, startMs);
    const backToBack: Sample[] = [];
    for (let i = 0; i < 4; i++) backToBack.push(await sample(queue, s.redis, startMs));
    const cost = sampleCost(backToBack);

    const statsBefore = parseCommandStats(await s.redis.info('commandstats'));
    const roundStart = Date.now();
    const sampler = startSampler(queue, s.redis, await sample(queue, s.redis, roundStart), roundStart);
    // Every round runs the worker for the rollup sweeps (issue 10's cost, in
    // both arms); off takes the alerting away: no evaluations, the alert sweep
    // a day away (its first one runs at the start, on an empty database).
    const rules = s.mode === 'quiet' ? QUIET_RULES : {};
    const alertSweepMs = alerting(s.mode) ? SWEEP_MS : 86_400_000;
    const worker: Run | undefined = cli(
      ['worker'],
      env({ ...rules, AGENTLEDGER_ALERT_SWEEP_MS: String(alertSweepMs), AGENTLEDGER_ROLLUP_SWEEP_MS: String(SWEEP_MS), AGENTLEDGER_LOG_LEVEL: 'info' }),
    );
    processes.push(worker);
    await waitForLine(worker, 'worker started', 60_000);

    const ingestStart = performance.now();
    const ingestStartMs = Date.now() - roundStart;
    const ingest = cli(['ingest', '--no-migrate', '--idle-exit-ms', String(IDLE_EXIT_MS)], env({ AGENTLEDGER_ALERT_EVALUATE_ON_INGEST: alerting(s.mode) ? 'true' : 'false' }));
    processes.push(ingest);
    const seconds = await untilStored(ch, ingest, s.envelopes, ingestStart);
    say(`  round ${s.n} (${s.mode}): ${s.envelopes} envelopes stored in ${seconds.toFixed(2)} s; waiting for ingest to exit`);
    const exit = await exitWithin(ingest, 60_000);
    if (exit !== 0) throw new Error(`ingest exited with ${exit}:\n${tail(ingest.err())}`);
    const stored = await count(ch, 'SELECT count() AS n FROM envelopes');
    if (stored !== s.envelopes) throw new Error(`${stored} rows stored for ${s.envelopes} envelopes after ingest exited`);

    let drained = true;
    if (worker !== undefined) {
      // The evaluations ingest added last (its close) are in Redis now: the worker has them to run.
      const exitedAtMs = Date.now() - roundStart;
      drained = await untilDrained(sampler, worker, exitedAtMs);
      if (!drained) say(`  round ${s.n}: the alerts queue did not drain within ${DRAIN_TIMEOUT_MS / 1000} s`);
      const code = await stop(worker, 60_000);
      if (code !== 0) throw new Error(`the worker exited with ${code} on SIGTERM:\n${tail(worker.err())}`);
    }
    const samples = await sampler.finish();
    const byCommand = commandDelta(statsBefore, parseCommandStats(await s.redis.info('commandstats')));
    const base = {
      n: s.n,
      pair: s.pair,
      mode: s.mode,
      envelopes: s.envelopes,
      seconds,
      rate: s.envelopes / seconds,
      samples,
      sampleCost: cost,
      redis: roundCommands(samples, cost),
      byCommand,
      ingestStartMs,
    };
    if (!alerting(s.mode)) return base;
    const events = (await s.redis.xrange(`${prefix}:${ALERTS_QUEUE}:events`, '-', '+')) as StreamEntry[];
    const jobs = tallyJobs(events, roundStart);
    const left = samples.at(-1)!.pending;
    return {
      ...base,
      on: {
        jobs,
        left,
        drained,
        alertSweeps: await count(ch, 'SELECT count() AS n FROM alert_sweeps'),
        rollupSweeps: await count(ch, 'SELECT count() AS n FROM rollup_sweeps'),
        alertsRecorded: await count(ch, 'SELECT count() AS n FROM alerts'),
        // BullMQ trims the stream to about 10,000 events (MAXLEN ~).
        eventsTrimmed: events.length >= 9000,
      },
    };
  } finally {
    for (const p of processes) if (running(p)) await stop(p, 10_000);
    await queue.close().catch(() => undefined);
    await ch.close().catch(() => undefined);
  }
}

/** Waits until the process writes `text` on stderr; fails when it exits first or `ms` pass. */
async function waitForLine(run: Run, text: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!run.err().includes(text)) {
    if (!running(run)) throw new Error(`the worker exited before it started:\n${tail((await run.done).err)}`);
    if (Date.now() > deadline) throw new Error(`the worker did not start within ${ms / 1000} s:\n${tail(run.err())}`);
    await sleep(100);
  }
}

/** Seconds from `start` until count() reaches `envelopes` (polled every POLL_MS), as bench/e2e.sh measures. */
async function untilStored(ch: ClickHouseClient, ingest: Run, envelopes: number, start: number): Promise<number> {
  for (;;) {
    await sleep(POLL_MS);
    const stored = await count(ch, 'SELECT count() AS n FROM envelopes').catch(() => 0);
    if (stored >= envelopes) return (performance.now() - start) / 1000;
    if (!running(ingest)) throw new Error(`ingest exited (${(await ingest.done).code}) with ${stored} of ${envelopes} rows stored:\n${tail(ingest.err())}`);
    if (performance.now() - start > INGEST_TIMEOUT_MS) throw new Error(`ingest stored only ${stored} of ${envelopes} rows in ${INGEST_TIMEOUT_MS / 1000} s`);
  }
}

/** True once a sample taken after `sinceMs` shows nothing pending; false after DRAIN_TIMEOUT_MS. */
async function untilDrained(sampler: Sampler, worker: Run, sinceMs: number): Promise<boolean> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const last = sampler.samples.at(-1)!;
    if (last.atMs > sinceMs && last.pending === 0) return true;
    if (!running(worker)) throw new Error(`the worker exited during the round:\n${tail(worker.err())}`);
    await sleep(250);
  }
  return false;
}

// ---------------------------------------------------------------- the run

async function produce(made: Made): Promise<number> {
  say(`producing ${LOOPS} loops x ${PER_LOOP} envelopes (~1 KB) to ${TOPIC} (4 partitions; not timed)`);
  made.topics = true;
  const r = await cli(['produce-demo', '--loops', String(LOOPS), '--envelopes', String(PER_LOOP), '--payload-bytes', '1024', '--seed', '7', '--start-time', 'now-30m', '--json'], cliEnv({})).done;
  if (r.code !== 0) throw new Error(`produce-demo failed (exit ${r.code}):\n${tail(r.err)}`);
  const summary = JSON.parse(r.out) as { envelopes: number; records: number; seconds: number };
  if (summary.records !== summary.envelopes) throw new Error(`produced ${summary.records} records for ${summary.envelopes} envelopes (expected equal: no violations planted)`);
  say(`produced ${summary.records} records in ${summary.seconds} s`);
  return summary.envelopes;
}

async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

/** Removes what the bench made (only that: its own names and prefixes, never FLUSHALL), or says what --keep left. */
async function cleanUp(made: Made, admin: ClickHouseClient, redis: Redis): Promise<void> {
  for (const c of children) c.kill('SIGKILL');
  if (args.keep) {
    say(`--keep: left topic ${TOPIC}, databases ${made.databases.join(' ') || 'none'}, groups ${made.groups.join(' ') || 'none'}, Redis keys ${made.prefixes.map((p) => `${p}:*`).join(' ') || 'none'}`);
    return;
  }
  say('cleaning up: databases, topics, groups, Redis keys');
  for (const db of made.databases) await admin.command({ query: `DROP DATABASE IF EXISTS ${db}` }).catch((err: unknown) => say(`could not drop ${db}: ${String(err)}`));
  if (made.topics || made.groups.length > 0) {
    const kafka = new Kafka({ clientId: 'bench-alerts', brokers: KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING }).admin();
    try {
      await kafka.connect();
      if (made.groups.length > 0) await kafka.deleteGroups(made.groups).catch((err: unknown) => say(`could not delete the groups: ${String(err)}`));
      if (made.topics) await kafka.deleteTopics({ topics: Object.values(TOPICS) }).catch((err: unknown) => say(`could not delete the topics: ${String(err)}`));
    } finally {
      await kafka.disconnect().catch(() => undefined);
    }
  }
  for (const prefix of made.prefixes) await deleteKeys(redis, prefix).catch((err: unknown) => say(`could not delete the Redis keys ${prefix}:*: ${String(err)}`));
}

function report(rounds: readonly RoundResult[], envelopes: number): boolean {
  const lines: string[] = [];
  const rates = (m: Mode): number[] => rounds.filter((r) => r.mode === m).map((r) => r.rate);
  const fmt = (x: { min: number; median: number; max: number }, digits = 0): string => `${x.min.toFixed(digits)} / ${x.median.toFixed(digits)} / ${x.max.toFixed(digits)}`;
  lines.push('');
  lines.push(`agentledger alerts benchmark  ${new Date().toISOString().slice(0, 19)}Z   node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}, load avg ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  lines.push(`topic ${TOPIC} (4 partitions): ${envelopes} envelopes, ${LOOPS} loops x ${PER_LOOP}, ~1 KB each; ${PAIRS} set(s) of off, on and quiet rounds, worker sweeps every ${SWEEP_MS} ms`);
  lines.push(`throughput: wall time from ingest's start until count() = ${envelopes} (polled every ${POLL_MS} ms); Redis: INFO total_commands_processed over the round, less the sampler's own`);
  lines.push('');
  for (const r of rounds) lines.push(roundLine(r));
  for (const r of rounds.filter((x) => x.on !== undefined)) {
    lines.push(`round ${r.n} queue depth per second: ${r.samples.map((s) => s.depth).join(' ')}`);
    lines.push(`round ${r.n} jobs done per second:   ${perSecond(r.on!.jobs.doneAtMs).join(' ')}`);
    const perTransition = r.on!.alertsRecorded > 0 ? `; ${Math.round(r.redis.net / r.on!.alertsRecorded)} per alert transition recorded` : '';
    lines.push(`round ${r.n} Redis by command (sampler's included): ${r.byCommand.slice(0, 10).map(([c, n]) => `${c} ${n}`).join(', ')}${perTransition}`);
  }
  const ratios = pairRatios(rounds);
  lines.push('');
  lines.push(`envelopes/s off (min / median / max): ${fmt(spread(rates('off')))}`);
  lines.push(`envelopes/s on:                       ${fmt(spread(rates('on')))}`);
  lines.push(`envelopes/s quiet:                    ${fmt(spread(rates('quiet')))}`);
  lines.push(`ratio on/off per set:                 ${fmt(spread(ratios), 3)}`);
  lines.push(`ratio quiet/off per set:              ${fmt(spread(pairRatios(rounds, 'quiet')), 3)}`);
  for (const m of ['on', 'quiet'] as const) {
    const these = rounds.filter((r) => r.mode === m);
    lines.push(`Redis commands per envelope, ${m.padEnd(5)}:  ${fmt(spread(these.map((r) => r.redis.net / r.envelopes)), 5)}`);
    lines.push(`alert transitions per round, ${m.padEnd(5)}:  ${fmt(spread(these.map((r) => r.on!.alertsRecorded)))}`);
  }
  // Off rounds run the worker for the rollups only: their commands are the floor every round pays.
  lines.push(`Redis commands per envelope, off  :  ${fmt(spread(rounds.filter((r) => r.mode === 'off').map((r) => r.redis.net / r.envelopes)), 5)} (the worker's rollup sweeps)`);
  const vs = verdicts(rounds);
  lines.push('');
  for (const v of vs) lines.push(`${v.pass ? 'PASS' : 'FAIL'}  ${v.label}: ${v.figure}`);
  const ok = vs.every((v) => v.pass || !v.gates);
  lines.push(`OVERALL: ${ok ? 'PASS' : 'FAIL'} (the ${TARGET_RATE.toLocaleString('en-US')}/s line does not decide it)`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return ok;
}

async function main(): Promise<number> {
  const config = parseConfig(cliEnv({}));
  const admin = createClickHouse(config.clickhouse, 'system');
  const redis = new Redis(config.redis.url, { maxRetriesPerRequest: 3, lazyConnect: true });
  redis.on('error', () => undefined);
  const made: Made = { databases: [], groups: [], prefixes: [], topics: false };
  let cleaning: Promise<void> | undefined;
  const cleanup = (): Promise<void> => (cleaning ??= cleanUp(made, admin, redis));
  const interrupted = (): void => {
    say('interrupted: cleaning up');
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    await redis.connect();
    say(`cli ${CLI}; Redis ${new URL(config.redis.url).host}, ClickHouse ${CLICKHOUSE_URL} as ${CLICKHOUSE_USER}, Kafka ${KAFKA_BROKERS}`);
    const envelopes = await produce(made);
    const rounds: RoundResult[] = [];
    for (let p = 0; p < PAIRS; p++) {
      for (const mode of pairOrder(p)) {
        const n = rounds.length + 1;
        say(`round ${n}/${MODES.length * PAIRS} (set ${p + 1}): ${mode}`);
        const r = await runRound({ n, pair: p, mode, envelopes, redis, admin, made });
        say(`  ${roundLine(r)}`);
        rounds.push(r);
        // Dropped now, so its merges do not share the cores with the next round.
        if (!args.keep) await admin.command({ query: `DROP DATABASE IF EXISTS bench_alerts_${STAMP}_${n}` });
      }
    }
    return report(rounds, envelopes) ? 0 : 1;
  } finally {
    await cleanup();
    redis.disconnect();
    await admin.close().catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`alerts bench: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
