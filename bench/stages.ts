/**
 * The per-stage CPU budget of bench/e2e.sh (docs/benchmarks.md, "Where the
 * CPU goes"): which stage a V8 CPU profile sample belongs to, which kind of
 * work a ClickHouse query is, and the arithmetic that turns both into µs per
 * envelope. Pure: no files, no network; bench/e2e-stages.ts reads the
 * profiles and the logs and hands them here.
 *
 * The mapping lives here and nowhere else, so a stage moved to another
 * folder is one edit, proven by test/unit/bench/stages.test.ts.
 */

/** The stages of the ingest process, in the order an envelope meets them. */
export const STAGES = ['kafka', 'decode', 'verify', 'account', 'encode', 'insert', 'gc', 'core', 'rest'] as const;
export type Stage = (typeof STAGES)[number];

export const STAGE_LABEL: Record<Stage, string> = {
  kafka: 'Kafka fetch + record decoding',
  decode: 'decode',
  verify: 'verify',
  account: 'account',
  encode: 'row encoding',
  insert: 'ClickHouse I/O (inserts, read-backs)',
  gc: 'GC',
  core: 'pipeline/ingest core',
  rest: 'the rest',
};

/**
 * What one frame says about whose work a sample is:
 * - owner: the frame's own code is the stage's (a decode function's self
 *   time is decode's, and so is that of a JSON.parse it calls);
 * - helper: shared code (natives, Buffer, zod, node's internals) whose time
 *   belongs to the nearest owner above it; `fallback` names the stage when
 *   no owner is above it at all (a socket callback straight from the event
 *   loop). 'net' is node's socket and stream internals, used by both kafkajs
 *   and the ClickHouse client: resolved by what the callback leads to.
 */
export type FrameRole =
  | { readonly role: 'owner'; readonly stage: Stage }
  | { readonly role: 'helper'; readonly fallback?: Stage | 'net' }
  | { readonly role: 'idle' };

export interface CallFrame {
  readonly functionName: string;
  readonly url: string;
}

/** Owner rules, first match wins: a project file is matched on its path below src/, a package on its name. */
const OWNERS: readonly { readonly stage: Stage; readonly url: RegExp }[] = [
  { stage: 'kafka', url: /\/node_modules\/kafkajs\// },
  { stage: 'insert', url: /\/node_modules\/@clickhouse\// },
  { stage: 'decode', url: /\/src\/decode\// },
  { stage: 'verify', url: /\/src\/verify\// },
  { stage: 'account', url: /\/src\/account\/|\/src\/rows\/envelope-facts\.[jt]s$/ },
  // The insert bodies: TabSeparated today, RowBinary (rowbinary.ts, insert-format.ts) being added;
  // a judging thread's rows travel as encoded bytes (rows/encoded.ts).
  { stage: 'encode', url: /\/src\/store\/(tsv|rowbinary|insert-format|columns)\.[jt]s$|\/src\/rows\/encoded\.[jt]s$/ },
  // The rest of the sink: the stores' calls, the typed client wrapper.
  { stage: 'insert', url: /\/src\/(store|clickhouse)\// },
  // Kafka's adapter (codecs, the checked producer of dead letters).
  { stage: 'kafka', url: /\/src\/kafka\// },
  { stage: 'core', url: /\/src\/(pipeline|ingest)\// },
];

/** Helpers whose time, when no owner is above them, still has an obvious owner. */
const FALLBACKS: readonly { readonly fallback: Stage | 'net'; readonly url: RegExp }[] = [
  { fallback: 'verify', url: /^node:(internal\/)?crypto/ },
  { fallback: 'insert', url: /^node:(_http_|http$|https$|internal\/http)/ },
  { fallback: 'net', url: /^node:(net$|stream$|_stream_|internal\/(net|stream_base_commons|streams\/|tls|js_stream_socket))/ },
];

export function frameRole(frame: CallFrame): FrameRole {
  switch (frame.functionName) {
    case '(idle)':
      return { role: 'idle' };
    case '(garbage collector)':
      return { role: 'owner', stage: 'gc' };
    // V8 outside any JavaScript (compilation, the embedder) and the tree's root: nobody's stage.
    case '(program)':
    case '(root)':
      return { role: 'owner', stage: 'rest' };
  }
  const url = frame.url;
  // A package's own src/ folder (kafkajs/src/…) is the package's, never the project's.
  const inPackage = url.includes('/node_modules/');
  for (const o of OWNERS) {
    if (o.url.test(url) && (inPackage === o.url.source.includes('node_modules'))) return { role: 'owner', stage: o.stage };
  }
  for (const f of FALLBACKS) if (f.url.test(url)) return { role: 'helper', fallback: f.fallback };
  return { role: 'helper' };
}

// ---------------------------------------------------------------- profiles

/** The parts of a V8 .cpuprofile (node --cpu-prof) read here. */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: CallFrame & { readonly lineNumber?: number };
    readonly hitCount?: number;
    readonly children?: readonly number[];
  }[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples?: readonly number[];
  readonly timeDeltas?: readonly number[];
}

export type StageMicros = Record<Stage, number>;
export const zeroStages = (): StageMicros => Object.fromEntries(STAGES.map((s) => [s, 0])) as StageMicros;

export interface ProfileSplit {
  /** Sampled µs per stage (not yet scaled to measured CPU). */
  readonly stages: StageMicros;
  /** Sampled µs of "(idle)": the thread waited; not CPU. */
  readonly idleMicros: number;
  /** Sampled µs of all stages: what the thread spent on the CPU, as the profiler saw it. */
  readonly busyMicros: number;
}

/** µs of self time per node: each sample lasts until the next one (the last until endTime), as DevTools counts. */
function selfMicros(p: CpuProfile): Map<number, number> {
  const self = new Map<number, number>();
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  if (samples.length > 0 && deltas.length === samples.length) {
    let t = p.startTime;
    const at = deltas.map((d) => (t += d));
    for (let i = 0; i < samples.length; i++) {
      const next = i + 1 < samples.length ? at[i + 1]! : p.endTime;
      self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + Math.max(0, next - at[i]!));
    }
    return self;
  }
  // No sample list: spread the profile's length over the hit counts.
  const hits = p.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0);
  for (const n of p.nodes) if (n.hitCount) self.set(n.id, ((p.endTime - p.startTime) * n.hitCount) / hits);
  return self;
}

/** One profile node's self time and the stage it went to. */
export interface Attributed {
  readonly frame: CallFrame & { readonly lineNumber?: number };
  readonly stage: Stage | 'idle';
  readonly micros: number;
}

/** Splits one thread's profile into stages (module comment; FrameRole). */
export function splitProfile(p: CpuProfile): ProfileSplit {
  const stages = zeroStages();
  let idleMicros = 0;
  for (const a of attribute(p)) {
    if (a.stage === 'idle') idleMicros += a.micros;
    else stages[a.stage] += a.micros;
  }
  return { stages, idleMicros, busyMicros: STAGES.reduce((sum, s) => sum + stages[s], 0) };
}

/** Every sampled node's self time with its stage: splitProfile's sums, and what `e2e-stages.js frames` lists. */
export function attribute(p: CpuProfile): Attributed[] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const role = new Map(p.nodes.map((n) => [n.id, frameRole(n.callFrame)]));

  // Which package a node's subtree reaches: settles a socket callback's owner.
  const reaches = new Map<number, { kafka: boolean; insert: boolean }>();
  const reach = (id: number): { kafka: boolean; insert: boolean } => {
    // Iterative post-order: profiles nest deeper than the call stack allows.
    const stack: [number, boolean][] = [[id, false]];
    while (stack.length > 0) {
      const [cur, expanded] = stack.pop()!;
      if (reaches.has(cur)) continue;
      const node = byId.get(cur)!;
      const children = node.children ?? [];
      if (!expanded) {
        stack.push([cur, true]);
        for (const c of children) if (!reaches.has(c)) stack.push([c, false]);
        continue;
      }
      const r = role.get(cur)!;
      const own = { kafka: r.role === 'owner' && r.stage === 'kafka', insert: r.role === 'owner' && r.stage === 'insert' };
      if (r.role === 'helper' && r.fallback === 'insert') own.insert = true;
      for (const c of children) {
        const rc = reaches.get(c)!;
        own.kafka ||= rc.kafka;
        own.insert ||= rc.insert;
      }
      reaches.set(cur, own);
    }
    return reaches.get(id)!;
  };

  const stageOf = (id: number): Stage | 'idle' => {
    let fallback: Stage | 'net' | undefined;
    let outermostNet: number | undefined;
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const r = role.get(cur)!;
      if (r.role === 'idle') return 'idle';
      if (r.role === 'owner') {
        // The root is an owner only of its own self time, not of what runs below it.
        if (cur !== id && byId.get(cur)!.callFrame.functionName === '(root)') break;
        return r.stage;
      }
      if (r.fallback !== undefined) {
        fallback ??= r.fallback;
        if (r.fallback === 'net') outermostNet = cur;
      }
    }
    if (fallback === 'net') {
      const r = reach(outermostNet!);
      return r.kafka && !r.insert ? 'kafka' : 'insert';
    }
    return fallback ?? 'rest';
  };

  return [...selfMicros(p)].map(([id, micros]) => ({ frame: byId.get(id)!.callFrame, stage: stageOf(id), micros }));
}

/** A thread's profile file as node names it: CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile (0 is the main thread). */
export function threadOfProfile(file: string): { pid: number; thread: number } | undefined {
  const m = /^CPU\.\d+\.\d+\.(\d+)\.(\d+)\.\d+\.cpuprofile$/.exec(file.split('/').pop() ?? '');
  return m ? { pid: Number(m[1]), thread: Number(m[2]) } : undefined;
}

export interface ThreadBudget {
  readonly file: string;
  /** 0: the main thread; else a worker thread's id. */
  readonly thread: number;
  /** µs per envelope, scaled like the stages. */
  readonly usPerEnvelope: number;
  readonly stages: StageMicros;
}

export interface ProcessBudget {
  /** µs per envelope per stage of the JavaScript threads; with `helpers`, summing to the process's measured CPU per envelope. */
  readonly stages: StageMicros;
  /** µs per envelope of the threads that run no JavaScript (from /proc/<pid>/task), when they were read. */
  readonly helpers: { readonly v8: number; readonly other: number } | null;
  readonly totalUsPerEnvelope: number;
  readonly threads: readonly ThreadBudget[];
  /**
   * Sampled busy time over the CPU it is scaled to: below 1 where the
   * threads' CPU was not read and threads without a profile ran; above 1 on
   * a busy machine, where a thread waiting for a core is sampled as running.
   */
  readonly sampledShare: number;
}

/** The process's OS threads by kind (/proc/<pid>/task), CPU seconds. */
export interface ThreadKinds {
  /** The main thread (its task id is the pid). */
  readonly main: number;
  /** JavaScript worker threads (node names them WorkerThread, or by the Worker's `name`). */
  readonly worker: number;
  /** V8's platform threads: concurrent and parallel GC, background compilers. */
  readonly v8: number;
  /** node's and libuv's own (the thread pool, signals, delayed tasks). */
  readonly other: number;
}

/** node's and libuv's own threads, by the name they give themselves. */
const NODE_THREADS = new Set(['DelayedTaskSche', 'SignalInspector', 'libuv-worker', 'node', 'inspector']);

/** A task of /proc/<pid>/task: which kind of thread it is. */
export function threadKind(tid: number, pid: number, name: string): keyof ThreadKinds {
  if (tid === pid) return 'main';
  if (name === 'V8Worker') return 'v8';
  return NODE_THREADS.has(name) ? 'other' : 'worker';
}

/**
 * The profiles' shares scaled to what the process measurably used, so the
 * table sums to the process's own total. With the threads' CPU read
 * (`kinds`), the main thread's profile is scaled to the main thread's CPU,
 * the workers' profiles to the worker threads', and V8's and node's helper
 * threads are rows of their own: a profiler samples wall time, so on a busy
 * machine a thread waiting for a core would otherwise take CPU from one
 * that ran. Without them, every profile is scaled by one factor.
 */
export function processBudget(
  profiles: readonly { file: string; split: ProfileSplit }[],
  processCpuSeconds: number,
  envelopes: number,
  kinds?: ThreadKinds,
): ProcessBudget {
  const perEnvelope = (seconds: number): number => (seconds * 1e6) / envelopes;
  const isMain = (p: { file: string }): boolean => (threadOfProfile(p.file)?.thread ?? 0) === 0;
  const sampledOf = (ps: readonly { split: ProfileSplit }[]): number => ps.reduce((s, p) => s + p.split.busyMicros, 0);
  const sampled = sampledOf(profiles);
  // CPU seconds each profile's samples are scaled to, per group, and what no profile covers.
  let groups: { profiles: readonly { file: string; split: ProfileSplit }[]; seconds: number }[];
  let helpers: { v8: number; other: number } | null = null;
  if (kinds) {
    const taskSum = kinds.main + kinds.worker + kinds.v8 + kinds.other;
    // The tasks' last readings miss what ran after them: fit them to the process's total.
    const fit = taskSum > 0 ? processCpuSeconds / taskSum : 0;
    const mains = profiles.filter(isMain);
    const workers = profiles.filter((p) => !isMain(p));
    // A worker thread without a profile (one started with execArgv: []) has no stages: its CPU is 'other'.
    const workerSeconds = workers.length > 0 ? kinds.worker * fit : 0;
    groups = [
      { profiles: mains, seconds: kinds.main * fit },
      { profiles: workers, seconds: workerSeconds },
    ];
    helpers = { v8: perEnvelope(kinds.v8 * fit), other: perEnvelope((kinds.other + kinds.worker) * fit - workerSeconds) };
  } else {
    groups = [{ profiles, seconds: processCpuSeconds }];
  }
  const sum = zeroStages();
  const threads: ThreadBudget[] = [];
  for (const g of groups) {
    const gSampled = sampledOf(g.profiles);
    const scale = gSampled > 0 ? perEnvelope(g.seconds) / gSampled : 0;
    for (const p of g.profiles) {
      const stages = Object.fromEntries(STAGES.map((s) => [s, p.split.stages[s] * scale])) as StageMicros;
      for (const s of STAGES) sum[s] += stages[s];
      threads.push({ file: p.file, thread: threadOfProfile(p.file)?.thread ?? 0, usPerEnvelope: p.split.busyMicros * scale, stages });
    }
  }
  const scaledTo = groups.reduce((s, g) => s + (sampledOf(g.profiles) > 0 ? g.seconds : 0), 0);
  return {
    stages: sum,
    helpers,
    totalUsPerEnvelope: perEnvelope(processCpuSeconds),
    threads,
    sampledShare: scaledTo > 0 ? sampled / (scaledTo * 1e6) : 0,
  };
}

/** A task's name and CPU seconds from /proc/<pid>/task/<tid>/stat. */
export function parseTaskStat(text: string, ticksPerSecond: number): { name: string; cpuSeconds: number } {
  return { name: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')), cpuSeconds: parsePidStat(text, ticksPerSecond) };
}

// ---------------------------------------------------------------- ClickHouse

/** ClickHouse's work for the ingest, by kind. */
export const QUERY_KINDS = ['envelopesInsert', 'derivedWrites', 'headsReadBack', 'versionsReadBack', 'progressReadBack', 'otherQueries'] as const;
export type QueryKind = (typeof QUERY_KINDS)[number];

export const QUERY_KIND_LABEL: Record<QueryKind, string> = {
  envelopesInsert: 'insert into envelopes (parse + write)',
  derivedWrites: 'loop_heads + other derived writes',
  headsReadBack: 'read-back: heads (loop_heads)',
  versionsReadBack: 'read-back: versions (envelopes)',
  progressReadBack: 'read-back: progress and checks',
  otherQueries: 'other queries (migrations, pings)',
};

/**
 * A logged query's kind from its text (the ingest names only its inserts'
 * query_id; its reads are the rendered src/store/queries/*.sql).
 */
export function queryKind(sent: string): QueryKind {
  // The query files' header comments reach the server too, and name other tables.
  const text = sent.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/--[^\n]*/g, ' ');
  if (/^\s*INSERT\s+INTO\s+[`"]?(\w+\.)?envelopes[`"]?[\s(]/i.test(text)) return 'envelopesInsert';
  // loop_heads (JSONEachRow from the store, or loop_heads_rederive.sql's INSERT … SELECT), and any other table's insert.
  if (/^\s*INSERT\s+INTO/i.test(text)) return 'derivedWrites';
  // envelope_versions.sql
  if (/\(\s*loop_id\s*,\s*seq\s*\)\s+IN\b/i.test(text)) return 'versionsReadBack';
  // envelope_heads.sql (loop_heads_lost.sql reads envelopes as well: a check, below)
  if (/\bFROM\s+loop_heads\b/i.test(text) && !/\bFROM\s+envelopes\b/i.test(text)) return 'headsReadBack';
  // envelope_progress.sql, loop_heads_lost.sql, the writer's landed check: all read offsets.
  if (/\bkafka_offset\b/i.test(text)) return 'progressReadBack';
  return 'otherQueries';
}

/**
 * The ingest's finished queries in system.query_log (type 2, or 3/4 for
 * those that failed), their User-Agent starting with `agent` (its
 * application tag). 18.16 keeps ProfileEvents as the Nested pair
 * ProfileEvents.Names/Values, current versions as a Map: the caller reads
 * which from system.columns. 18.16 counts UserTimeMicroseconds and
 * SystemTimeMicroseconds per query (checked on 18.16.1);
 * OSCPUVirtualTimeMicroseconds is read too, the fallback where they are absent.
 */
export function queryLogSql(profileEvents: 'nested' | 'map', agent: string, table = 'system.query_log'): string {
  // The tag is the bench's own text; refuse anything that would need quoting.
  if (!/^[A-Za-z0-9._-]+$/.test(agent)) throw new Error(`agent tag ${JSON.stringify(agent)}: letters, digits, . _ - only`);
  const event = (name: string): string =>
    profileEvents === 'nested' ? `toUInt64(ProfileEvents.Values[indexOf(ProfileEvents.Names, '${name}')])` : `toUInt64(ProfileEvents['${name}'])`;
  return `SELECT query,
       ${event('UserTimeMicroseconds')} AS user_us,
       ${event('SystemTimeMicroseconds')} AS system_us,
       ${event('OSCPUVirtualTimeMicroseconds')} AS os_cpu_us
FROM ${table}
WHERE event_date >= yesterday() AND toUInt8(type) >= 2 AND http_user_agent LIKE '${agent} %'`;
}

/** Merges of one database since a Unix second, from system.part_log (where the server keeps one). */
export function partLogSql(database: string, sinceSeconds: number, table = 'system.part_log'): string {
  if (!/^\w+$/.test(database)) throw new Error(`${JSON.stringify(database)} is not a database name`);
  return `SELECT count() AS merges, sum(rows) AS rows FROM ${table}
WHERE database = '${database}' AND toString(event_type) = 'MergeParts' AND event_time >= toDateTime(${Math.trunc(sinceSeconds)})`;
}

/** One finished query of system.query_log: its text and its threads' CPU µs (ProfileEvents). */
export interface LoggedQuery {
  readonly query: string;
  readonly userUs: number;
  readonly systemUs: number;
  /** OSCPUVirtualTimeMicroseconds: the fallback where user/system time is not counted. */
  readonly osCpuUs: number;
}

/** The query's CPU: user + system time where the server counts them, else the OS virtual CPU time. */
export const queryCpuUs = (q: LoggedQuery): number => (q.userUs + q.systemUs > 0 ? q.userUs + q.systemUs : q.osCpuUs);

export interface ServerBudget {
  /** µs per stored row per kind, plus merges: the server's CPU not inside any of the ingest's queries. */
  readonly kinds: Record<QueryKind | 'merges', number>;
  readonly queries: Record<QueryKind, number>;
  readonly totalUsPerRow: number | null;
  /** Which counter gave the queries' CPU. */
  readonly counter: 'UserTimeMicroseconds+SystemTimeMicroseconds' | 'OSCPUVirtualTimeMicroseconds' | 'mixed' | 'none';
}

export function serverBudget(queries: readonly LoggedQuery[], serverCpuSeconds: number | null, rows: number): ServerBudget {
  const kinds = Object.fromEntries([...QUERY_KINDS, 'merges'].map((k) => [k, 0])) as Record<QueryKind | 'merges', number>;
  const counts = Object.fromEntries(QUERY_KINDS.map((k) => [k, 0])) as Record<QueryKind, number>;
  let inQueries = 0;
  let byTimes = 0;
  let byOs = 0;
  for (const q of queries) {
    const k = queryKind(q.query);
    const us = queryCpuUs(q);
    kinds[k] += us / rows;
    counts[k] += 1;
    inQueries += us;
    if (q.userUs + q.systemUs > 0) byTimes++;
    else if (q.osCpuUs > 0) byOs++;
  }
  // Merges and every other background job (and whatever else ran on the server meanwhile): the server's CPU minus its queries'.
  if (serverCpuSeconds !== null) kinds.merges = Math.max(0, serverCpuSeconds * 1e6 - inQueries) / rows;
  return {
    kinds,
    queries: counts,
    totalUsPerRow: serverCpuSeconds === null ? null : (serverCpuSeconds * 1e6) / rows,
    counter: byTimes > 0 && byOs > 0 ? 'mixed' : byTimes > 0 ? 'UserTimeMicroseconds+SystemTimeMicroseconds' : byOs > 0 ? 'OSCPUVirtualTimeMicroseconds' : 'none',
  };
}

// ---------------------------------------------------------------- the machine

/** The first line of /proc/stat, in clock ticks. */
export interface CpuTicks {
  readonly busy: number;
  readonly idle: number;
}

/** `cpu  user nice system idle iowait irq softirq steal …`: idle and iowait are idle, the rest busy (guest time is inside user). */
export function parseProcStat(text: string): CpuTicks {
  const line = text.split('\n').find((l) => /^cpu\s/.test(l));
  if (!line) throw new Error('no cpu line in /proc/stat');
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const at = (i: number): number => f[i] ?? 0;
  return { busy: at(0) + at(1) + at(2) + at(5) + at(6) + at(7), idle: at(3) + at(4) };
}

/** CPU seconds of a process from /proc/<pid>/stat (utime + stime, all its threads). */
export function parsePidStat(text: string, ticksPerSecond: number): number {
  // The command name may hold spaces and parentheses: fields count from the last ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / ticksPerSecond;
}

/** The in-process batch step's CPU µs per envelope, and the ingest's against it. */
export function batchRatio(ingestUsPerEnvelope: number | null, batchUsPerEnvelope: number | null): number | null {
  return ingestUsPerEnvelope === null || batchUsPerEnvelope === null || batchUsPerEnvelope <= 0 ? null : ingestUsPerEnvelope / batchUsPerEnvelope;
}
export const BATCH_RATIO_TARGET = 1.5;
