/**
 * The I/O half of bench/e2e.sh's per-stage CPU budget (bench/stages.ts holds
 * the mapping and the arithmetic):
 *
 *   node dist/bench/e2e-stages.js snapshot --ticks N [--ch-pid P] [--kafka-pid P] [--url U --user U --password P]
 *     one JSON line: /proc/stat's busy and idle ticks, the CPU seconds of
 *     ClickHouse's server and of the Kafka broker, ClickHouse's merge
 *     counters (system.events), the time;
 *   node dist/bench/e2e-stages.js collect --label L --before F --after F --profiles DIR
 *        --process-cpu S --envelopes N --agent TAG --database DB [--threads F] [--batch F] [--url U --user U --password P]
 *     the budget of one profiled ingest pass as JSON on stdout: the
 *     profiles (one per thread) split into stages and scaled to the
 *     process's measured CPU (per kind of thread, with --threads: see
 *     processBudget); the ingest's queries in system.query_log
 *     (their User-Agent starts with TAG) by kind, and merges as the server's
 *     CPU minus theirs; both cores' busy time and idle share over the pass;
 *     the broker's CPU; the in-process batch step (F: verify-inprocess.js
 *     --json) and the process's CPU against it;
 *   node dist/bench/e2e-stages.js threads --pid P --ticks N
 *     reads /proc/P/task/<tid>/stat every 250 ms until P exits, then writes each
 *     thread's name and its last CPU seconds as JSON (collect's --threads);
 *   node dist/bench/e2e-stages.js frames --profiles DIR [--stage S] [--top N]
 *     the frames with the most self time per stage (all stages, or S), to see
 *     what a stage, or the rest, is made of (bench/e2e.sh --keep leaves the
 *     profiles in its work folder, stages.<build>/).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median } from './support.js';
import {
  attribute,
  batchRatio,
  BATCH_RATIO_TARGET,
  parsePidStat,
  parseProcStat,
  parseTaskStat,
  partLogSql,
  processBudget,
  queryLogSql,
  serverBudget,
  splitProfile,
  type CpuProfile,
  STAGE_LABEL,
  STAGES,
  threadKind,
  type CpuTicks,
  type ThreadKinds,
  type LoggedQuery,
} from './stages.js';

const { positionals, values: args } = parseArgs({
  allowPositionals: true,
  options: {
    ticks: { type: 'string', default: '100' },
    'ch-pid': { type: 'string' },
    'kafka-pid': { type: 'string' },
    url: { type: 'string', default: 'http://127.0.0.1:8123' },
    user: { type: 'string', default: 'default' },
    password: { type: 'string', default: '' },
    label: { type: 'string', default: 'main' },
    before: { type: 'string' },
    after: { type: 'string' },
    profiles: { type: 'string' },
    'process-cpu': { type: 'string' },
    envelopes: { type: 'string' },
    agent: { type: 'string' },
    database: { type: 'string' },
    batch: { type: 'string' },
    threads: { type: 'string' },
    pid: { type: 'string' },
    stage: { type: 'string' },
    top: { type: 'string', default: '12' },
  },
});

function fail(message: string): never {
  process.stderr.write(`e2e-stages: ${message}\n`);
  process.exit(2);
}
const need = (name: keyof typeof args): string => {
  const v = args[name];
  return typeof v === 'string' && v !== '' ? v : fail(`--${name} is required`);
};

async function ch(sql: string): Promise<string> {
  const url = new URL(args.url);
  url.searchParams.set('user', args.user);
  url.searchParams.set('password', args.password);
  const res = await fetch(url, { method: 'POST', body: sql, signal: AbortSignal.timeout(60_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse answered HTTP ${res.status}: ${text.slice(0, 400)}`);
  return text;
}
const rowsOf = <T>(text: string): T[] =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);

const MERGE_EVENTS = ['Merge', 'MergedRows', 'MergesTimeMilliseconds'] as const;

interface Snapshot {
  readonly atMs: number;
  readonly cores: CpuTicks;
  readonly clickhouseCpuS: number | null;
  readonly kafkaCpuS: number | null;
  /** Server-wide since its start (system.events lists a counter once it is non-zero). */
  readonly merges: Record<(typeof MERGE_EVENTS)[number], number>;
}

function pidCpu(pid: string | undefined): number | null {
  if (!pid) return null;
  try {
    return parsePidStat(readFileSync(`/proc/${pid}/stat`, 'utf8'), Number(args.ticks));
  } catch {
    return null;
  }
}

async function snapshot(): Promise<Snapshot> {
  const merges = Object.fromEntries(MERGE_EVENTS.map((e) => [e, 0])) as Record<(typeof MERGE_EVENTS)[number], number>;
  const events = rowsOf<{ event: string; value: string | number }>(
    await ch(`SELECT event, value FROM system.events WHERE event IN (${MERGE_EVENTS.map((e) => `'${e}'`).join(', ')}) FORMAT JSONEachRow`),
  );
  for (const e of events) merges[e.event as (typeof MERGE_EVENTS)[number]] = Number(e.value);
  return {
    atMs: Date.now(),
    cores: parseProcStat(readFileSync('/proc/stat', 'utf8')),
    clickhouseCpuS: pidCpu(args['ch-pid']),
    kafkaCpuS: pidCpu(args['kafka-pid']),
    merges,
  };
}

// ---------------------------------------------------------------- ClickHouse's side

/**
 * The ingest's finished queries (queryLogSql); whether this server keeps
 * ProfileEvents as 18.16's Nested pair or as current versions' Map is read
 * from system.columns first.
 */
async function loggedQueries(agent: string): Promise<{ queries: LoggedQuery[]; profileEvents: 'nested' | 'map' }> {
  await ch('SYSTEM FLUSH LOGS');
  const columns = rowsOf<{ name: string }>(
    await ch("SELECT name FROM system.columns WHERE database = 'system' AND table = 'query_log' AND name IN ('ProfileEvents', 'ProfileEvents.Names') FORMAT JSONEachRow"),
  ).map((r) => r.name);
  const nested = columns.includes('ProfileEvents.Names');
  if (!nested && !columns.includes('ProfileEvents')) throw new Error('system.query_log has no ProfileEvents');
  if (!/^[A-Za-z0-9._-]+$/.test(agent)) fail(`--agent ${JSON.stringify(agent)}: letters, digits, . _ - only`);
  const rows = rowsOf<{ query: string; user_us: string | number; system_us: string | number; os_cpu_us: string | number }>(
    await ch(`${queryLogSql(nested ? 'nested' : 'map', agent)} FORMAT JSONEachRow`),
  );
  return {
    queries: rows.map((r) => ({ query: r.query, userUs: Number(r.user_us), systemUs: Number(r.system_us), osCpuUs: Number(r.os_cpu_us) })),
    profileEvents: nested ? 'nested' : 'map',
  };
}

/** Merges of the pass's own database from system.part_log where the server keeps one; else null (the local stack keeps none). */
async function partLogMerges(database: string, sinceMs: number): Promise<{ merges: number; rows: number } | null> {
  const has = (await ch("SELECT count() FROM system.tables WHERE database = 'system' AND name = 'part_log'")).trim();
  if (has === '0') return null;
  const [r] = rowsOf<{ merges: string | number; rows: string | number }>(await ch(`${partLogSql(database, Math.floor(sinceMs / 1000))} FORMAT JSONEachRow`));
  return { merges: Number(r?.merges ?? 0), rows: Number(r?.rows ?? 0) };
}

// ---------------------------------------------------------------- the batch step

/** verify-inprocess.js --json --only batch: CPU ms per round where it reports them (wall ms from an older build). */
function batchStep(file: string): { usPerEnvelope: number; measure: 'cpu' | 'wall'; envelopes: number } {
  const r = JSON.parse(readFileSync(file, 'utf8')) as { input: { envelopes: number }; msPerRound: { batch?: number[] }; cpuMsPerRound?: { batch?: number[] } };
  const cpu = r.cpuMsPerRound?.batch;
  const xs = cpu ?? r.msPerRound.batch ?? fail(`${file} holds no batch path`);
  return { usPerEnvelope: (median(xs) * 1000) / r.input.envelopes, measure: cpu ? 'cpu' : 'wall', envelopes: r.input.envelopes };
}

// ---------------------------------------------------------------- threads

interface TaskCpu {
  readonly tid: number;
  readonly name: string;
  readonly cpuSeconds: number;
}

/** Every thread the process had, with its CPU at the last reading before the thread (or the process) ended. */
async function threads(): Promise<{ pid: number; tasks: TaskCpu[] }> {
  const pid = Number(need('pid'));
  const ticks = Number(args.ticks);
  const last = new Map<number, TaskCpu>();
  for (;;) {
    let state: string;
    try {
      state = parsePidState(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      break;
    }
    if (state === 'Z' || state === 'X') break;
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      break;
    }
    for (const t of tids) {
      try {
        const { name, cpuSeconds } = parseTaskStat(readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8'), ticks);
        last.set(Number(t), { tid: Number(t), name, cpuSeconds });
      } catch {
        // The thread ended between the listing and the read: its last reading stands.
      }
    }
    await sleep(250);
  }
  return { pid, tasks: [...last.values()].sort((a, b) => a.tid - b.tid) };
}
const parsePidState = (text: string): string => text.slice(text.lastIndexOf(')') + 2).split(' ')[0] ?? '';

function kindsOf(file: string): { kinds: ThreadKinds; byName: Record<string, number> } {
  const t = JSON.parse(readFileSync(file, 'utf8')) as { pid: number; tasks: TaskCpu[] };
  const kinds = { main: 0, worker: 0, v8: 0, other: 0 };
  const byName: Record<string, number> = {};
  for (const task of t.tasks) {
    kinds[threadKind(task.tid, t.pid, task.name)] += task.cpuSeconds;
    byName[task.name] = (byName[task.name] ?? 0) + task.cpuSeconds;
  }
  return { kinds, byName };
}

// ---------------------------------------------------------------- collect

async function collect(): Promise<unknown> {
  const envelopes = Number(need('envelopes'));
  const processCpu = Number(need('process-cpu'));
  const before = JSON.parse(readFileSync(need('before'), 'utf8')) as Snapshot;
  const after = JSON.parse(readFileSync(need('after'), 'utf8')) as Snapshot;
  const dir = need('profiles');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort();
  if (files.length === 0) fail(`no .cpuprofile in ${dir}`);
  const profiles = files.map((file) => ({ file, split: splitProfile(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile) }));
  const threadCpu = args.threads ? kindsOf(args.threads) : undefined;
  const proc = processBudget(profiles, processCpu, envelopes, threadCpu?.kinds);

  const delta = (a: number | null, b: number | null): number | null => (a === null || b === null || b < a ? null : b - a);
  const serverCpu = delta(before.clickhouseCpuS, after.clickhouseCpuS);
  const { queries, profileEvents } = await loggedQueries(need('agent'));
  const server = serverBudget(queries, serverCpu, envelopes);
  const partLog = await partLogMerges(need('database'), before.atMs);
  const ticks = Number(args.ticks);
  const busy = (after.cores.busy - before.cores.busy) / ticks;
  const idle = (after.cores.idle - before.cores.idle) / ticks;
  const kafka = delta(before.kafkaCpuS, after.kafkaCpuS);
  const batch = args.batch ? batchStep(args.batch) : null;
  return {
    label: args.label,
    envelopes,
    seconds: (after.atMs - before.atMs) / 1000,
    process: { cpuSeconds: processCpu, ...proc, threadCpuSeconds: threadCpu ?? null },
    clickhouse: {
      ...server,
      serverCpuSeconds: serverCpu,
      loggedQueries: queries.length,
      profileEvents,
      // Cross-checks of the merges figure: this database's merges where system.part_log exists; the server's merges of every database otherwise.
      partLogMerges: partLog,
      serverMerges: Object.fromEntries(Object.entries(after.merges).map(([k, v]) => [k, v - (before.merges[k as keyof Snapshot['merges']] ?? 0)])),
    },
    kafkaUsPerEnvelope: kafka === null ? null : (kafka * 1e6) / envelopes,
    cores: { busySeconds: busy, busyUsPerEnvelope: (busy * 1e6) / envelopes, idleShare: busy + idle > 0 ? idle / (busy + idle) : null },
    batchStep: batch,
    batchRatio: { value: batchRatio(proc.totalUsPerEnvelope, batch?.usPerEnvelope ?? null), target: BATCH_RATIO_TARGET },
  };
}

// ---------------------------------------------------------------- frames

function frames(): string {
  const dir = need('profiles');
  const totals = new Map<string, { stage: string; micros: number }>();
  let all = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    for (const a of attribute(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile)) {
      if (a.stage === 'idle') continue;
      all += a.micros;
      const key = `${a.stage}\t${a.frame.functionName || '(anonymous)'} ${a.frame.url.replace(/^file:\/\/.*?\/(node_modules|dist)\//, '$1/')}:${(a.frame.lineNumber ?? -1) + 1}`;
      const t = totals.get(key) ?? { stage: a.stage, micros: 0 };
      t.micros += a.micros;
      totals.set(key, t);
    }
  }
  const top = Number(args.top);
  const stages = args.stage ? [args.stage] : STAGES;
  return stages
    .map((stage) => {
      const rows = [...totals].filter(([, t]) => t.stage === stage).sort((a, b) => b[1].micros - a[1].micros);
      const sum = rows.reduce((s, [, t]) => s + t.micros, 0);
      const label = STAGE_LABEL[stage as keyof typeof STAGE_LABEL] ?? stage;
      return [
        `${label}: ${((sum / all) * 100).toFixed(1)} % of the sampled CPU`,
        ...rows.slice(0, top).map(([key, t]) => `  ${((t.micros / all) * 100).toFixed(2).padStart(6)} %  ${key.split('\t')[1]}`),
      ].join('\n');
    })
    .join('\n');
}

const command = positionals[0];
if (command === 'snapshot') process.stdout.write(JSON.stringify(await snapshot()) + '\n');
else if (command === 'collect') process.stdout.write(JSON.stringify(await collect(), null, 2) + '\n');
else if (command === 'threads') process.stdout.write(JSON.stringify(await threads()) + '\n');
else if (command === 'frames') process.stdout.write(frames() + '\n');
else fail('usage: e2e-stages.js snapshot|threads|collect|frames [options] (see the file header)');
