/**
 * The report of bench/e2e.sh: reads the raw figures of every round, prints the
 * tables and the targets with PASS/FAIL, optionally writes everything as JSON,
 * and exits 0 only when every target is met (or with --no-gate).
 *
 *   node dist/bench/e2e-report.js --meta META.json --runs RUNS.jsonl [--json OUT] [--no-gate]
 *
 * META: the run's setting (topic, sizes, options, machine); RUNS: one JSON
 * object per path and round (see `Run`). Per path: min / median / max
 * envelopes/s; ratios of ingest to each other path computed per round, then
 * min / median / max; CPU µs per envelope (ingest's process, ClickHouse's
 * server) as medians; ingest's peak RSS as the maximum over rounds. With
 * --compression, ingest's CPU per envelope on the compressed topic against
 * the uncompressed one, per round and as the median of the rounds.
 * --stages FILE [--stages-against FILE]: the CPU budget per stage of each
 * build's profiled pass (bench/e2e-stages.js collect), as one table with the
 * two builds side by side.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { BATCH_RATIO_TARGET, QUERY_KIND_LABEL, QUERY_KINDS, STAGE_LABEL, STAGES, type ProcessBudget, type ServerBudget } from './stages.js';
import { median } from './support.js';

const { values: args } = parseArgs({
  options: {
    meta: { type: 'string' },
    runs: { type: 'string' },
    json: { type: 'string' },
    'no-gate': { type: 'boolean', default: false },
    stages: { type: 'string' },
    'stages-against': { type: 'string' },
  },
});

function fail(message: string): never {
  process.stderr.write(`e2e-report: ${message}\n`);
  process.exit(2);
}

/** The paths, in the order bench/e2e.sh rotates them. */
const PATHS = ['ingest', 'bare', 'insert', 'kafka-engine', 'ingest-empty', 'ingest-2p', 'ingest-4p', 'ingest-against', 'ingest-compressed'] as const;
type Path = (typeof PATHS)[number];

interface Meta {
  readonly date: string;
  readonly topic: string;
  readonly partitions: number;
  readonly envelopes: number;
  readonly loops: number;
  readonly perLoop: number;
  readonly payloadBytes: number;
  readonly produceSeconds: number;
  readonly rounds: number;
  readonly prefill: number;
  readonly insertFormat: string;
  readonly insertRows: number;
  readonly batchRows: string;
  readonly profile: string;
  readonly clickhouseVersion: string;
  readonly kafkaEngineConsumers: number;
  /** The build --against ran (its dist/ folder), '' when none. */
  readonly against?: string;
  /** The codec of the second topic the path ingest-compressed reads (--compression), 'none' when there is none. */
  readonly compression?: string;
}

/** One path in one round, as bench/e2e.sh measured it. */
interface Run {
  readonly round: number;
  /** 1-based position of this path within its round. */
  readonly slot: number;
  readonly path: Path;
  readonly envelopes: number;
  readonly seconds: number;
  /** User + system CPU seconds of the path's own process (ingest, bare); null where it has none. */
  readonly processCpuS: number | null;
  /** CPU seconds of ClickHouse's server process over the timed window. */
  readonly clickhouseCpuS: number | null;
  /** CPU seconds of the Kafka broker over the timed window. */
  readonly kafkaCpuS: number | null;
  /** Peak RSS (VmHWM) of ingest, MB. */
  readonly rssMb: number | null;
}

const meta = JSON.parse(readFileSync(args.meta ?? fail('--meta is required'), 'utf8')) as Meta;
const runs = readFileSync(args.runs ?? fail('--runs is required'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as Run);
if (runs.length === 0) fail('no runs');

const rate = (r: Run): number => r.envelopes / r.seconds;
const usPer = (s: number | null, r: Run): number | null => (s === null ? null : (s * 1e6) / r.envelopes);

interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
  readonly n: number;
}
function spread(xs: readonly number[]): Spread | null {
  if (xs.length === 0) return null;
  return { min: Math.min(...xs), median: median(xs), max: Math.max(...xs), n: xs.length };
}
const notNull = <T>(x: T | null): x is T => x !== null;

const present = PATHS.filter((p) => runs.some((r) => r.path === p));
const rounds = [...new Set(runs.map((r) => r.round))].sort((a, b) => a - b);
const runOf = (round: number, path: Path): Run | undefined => runs.find((r) => r.round === round && r.path === path);

const LABEL: Record<Path, string> = {
  ingest: meta.prefill > 0 ? `ingest (${meta.prefill.toLocaleString('en-US')} rows stored)` : 'ingest',
  bare: 'bare kafkajs',
  insert: 'ClickHouse insert',
  'kafka-engine': 'ClickHouse Kafka engine',
  'ingest-empty': 'ingest (empty database)',
  'ingest-2p': 'ingest, 2 processes in one group',
  'ingest-4p': 'ingest, 4 processes in one group',
  'ingest-against': `ingest of ${meta.against || 'another build'}`,
  'ingest-compressed': `ingest, ${meta.compression ?? '?'} batches`,
};
const SHORT: Record<Path, string> = { ingest: 'ingest', bare: 'bare', insert: 'insert', 'kafka-engine': 'kafka', 'ingest-empty': 'empty', 'ingest-2p': '2 procs', 'ingest-4p': '4 procs', 'ingest-against': 'against', 'ingest-compressed': meta.compression ?? 'compressed' };

// ---------------------------------------------------------------- figures

const perPath = Object.fromEntries(
  present.map((p) => {
    const rs = runs.filter((r) => r.path === p);
    return [
      p,
      {
        rate: spread(rs.map(rate)),
        processCpuUsPerEnvelope: spread(rs.map((r) => usPer(r.processCpuS, r)).filter(notNull)),
        clickhouseCpuUsPerEnvelope: spread(rs.map((r) => usPer(r.clickhouseCpuS, r)).filter(notNull)),
        kafkaCpuUsPerEnvelope: spread(rs.map((r) => usPer(r.kafkaCpuS, r)).filter(notNull)),
        peakRssMb: rs.some((r) => r.rssMb !== null) ? Math.max(...rs.map((r) => r.rssMb ?? 0)) : null,
      },
    ];
  }),
) as Record<Path, { rate: Spread | null; processCpuUsPerEnvelope: Spread | null; clickhouseCpuUsPerEnvelope: Spread | null; kafkaCpuUsPerEnvelope: Spread | null; peakRssMb: number | null }>;

/** ingest / other, computed within each round (both measured minutes apart on the same machine). */
function ratios(other: Path, of: Path = 'ingest'): number[] {
  return rounds.flatMap((round) => {
    const a = runOf(round, of);
    const b = runOf(round, other);
    return a && b ? [rate(a) / rate(b)] : [];
  });
}
const RATIOS: readonly { name: string; of: Path; to: Path }[] = [
  { name: 'ingest/bare', of: 'ingest', to: 'bare' },
  { name: 'ingest/insert', of: 'ingest', to: 'insert' },
  { name: 'ingest/kafka-engine', of: 'ingest', to: 'kafka-engine' },
  ...(present.includes('ingest-empty') ? [{ name: 'prefilled/empty', of: 'ingest' as Path, to: 'ingest-empty' as Path }] : []),
  ...(present.includes('ingest-2p') ? [{ name: '2 processes/1', of: 'ingest-2p' as Path, to: 'ingest' as Path }] : []),
  ...(present.includes('ingest-4p') ? [{ name: '4 processes/1', of: 'ingest-4p' as Path, to: 'ingest' as Path }] : []),
  ...(present.includes('ingest-against') ? [{ name: 'ingest/against', of: 'ingest' as Path, to: 'ingest-against' as Path }] : []),
  ...(present.includes('ingest-compressed') ? [{ name: `${meta.compression ?? 'compressed'}/none`, of: 'ingest-compressed' as Path, to: 'ingest' as Path }] : []),
];
const ratioSpreads = Object.fromEntries(RATIOS.map((r) => [r.name, spread(ratios(r.to, r.of))])) as Record<string, Spread | null>;
const ingestRss = Math.max(...runs.filter((r) => r.path === 'ingest' || r.path === 'ingest-empty').map((r) => r.rssMb ?? 0));

interface Target {
  readonly name: string;
  readonly value: number | null;
  readonly ok: boolean;
  readonly shown: string;
}
function target(name: string, value: number | null | undefined, ok: (v: number) => boolean, show: (v: number) => string): Target {
  const v = value ?? null;
  return { name, value: v, ok: v !== null && ok(v), shown: v === null ? 'not measured' : show(v) };
}
const int = (v: number): string => Math.round(v).toLocaleString('en-US');
const fix = (d: number) => (v: number): string => v.toFixed(d);
const targets: Target[] = [
  target('ingest median >= 45,000 envelopes/s', perPath.ingest?.rate?.median, (v) => v >= 45_000, (v) => `${int(v)} /s`),
  target('ingest/kafka-engine >= 1.0 (median of rounds)', ratioSpreads['ingest/kafka-engine']?.median, (v) => v >= 1.0, fix(3)),
  target('ingest/insert >= 0.5 (median of rounds)', ratioSpreads['ingest/insert']?.median, (v) => v >= 0.5, fix(3)),
  target('ingest/bare >= 0.22 (median of rounds)', ratioSpreads['ingest/bare']?.median, (v) => v >= 0.22, fix(3)),
  target('ingest CPU <= 15 µs/envelope (median)', perPath.ingest?.processCpuUsPerEnvelope?.median, (v) => v <= 15, (v) => `${v.toFixed(1)} µs`),
  target('ingest peak RSS <= 400 MB (max of rounds)', Number.isFinite(ingestRss) && ingestRss > 0 ? ingestRss : null, (v) => v <= 400, (v) => `${int(v)} MB`),
];
const pass = targets.every((t) => t.ok);

// ---------------------------------------------------------------- printing

function table(header: readonly string[], rows: readonly (readonly string[])[], leftColumns = 1): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
const dash = '–';
const opt = (v: number | null | undefined, f: (v: number) => string): string => (v === null || v === undefined ? dash : f(v));

const out: string[] = [];
const cpu = cpus();
out.push(
  `agentledger e2e benchmark  ${meta.date}   node ${process.version}, ${cpu.length} x ${cpu[0]?.model ?? '?'}, load avg ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}, ClickHouse ${meta.clickhouseVersion}`,
  `topic ${meta.topic} (${meta.partitions} partitions): ${int(meta.envelopes)} envelopes, ${int(meta.loops)} loops x ${meta.perLoop}, ~${meta.payloadBytes} B payload; produced in ${meta.produceSeconds.toFixed(1)} s (not timed)`,
  `${rounds.length} rounds, each running every path once on that topic, the order rotated (each round starts one path later than the round before)`,
  '',
  `  ingest        agentledger ingest --idle-exit-ms 5000${meta.batchRows ? `, AGENTLEDGER_BATCH_MAX_ROWS=${meta.batchRows}` : ' (default settings)'}, a new group and database;`,
  `                wall time from process start until count() = ${int(meta.envelopes)} (polled every 1 s), nothing subtracted`,
  ...(meta.prefill > 0
    ? [
        `                into a database already holding ${int(meta.prefill)} synthetic envelopes (filled once, before the rounds, not timed);`,
        `                'empty' is the same run into a new empty database, in every round`,
      ]
    : []),
  ...(present.includes('ingest-2p')
    ? [`  2 procs       two ingest processes in one new group and database (2 partitions each); CPU summed, RSS the larger process's`]
    : []),
  ...(present.includes('ingest-4p')
    ? [`  4 procs       four ingest processes in one new group and database (1 partition each); CPU summed, RSS the largest process's`]
    : []),
  ...(present.includes('ingest-against') ? [`  against       the ingest of ${meta.against}, as ingest (its own group and database)`] : []),
  ...(present.includes('ingest-compressed')
    ? [`  ${SHORT['ingest-compressed'].padEnd(13)} ingest of the same records produced again with --compression ${meta.compression ?? '?'}, as ingest (its own topic, group and database)`]
    : []),
  '  bare          kafkajs eachBatch that only counts (same fetch sizes), process start until the last message',
  `  insert        ClickHouse alone inserting ingest's own rows (exported once from round 1) into a freshly migrated database:`,
  `                INSERT INTO envelopes FORMAT ${meta.insertFormat}, ${int(meta.insertRows)} rows per request, one request at a time; first request to last answer`,
  `  kafka-engine  ClickHouse's Kafka engine (${meta.kafkaEngineConsumers} consumer, JSONEachRow) + materialized view into a MergeTree, group reset to offset 0;`,
  `                from CREATE MATERIALIZED VIEW until the target's count() = ${int(meta.envelopes)} (polled every 0.5 s)`,
  '',
  'per round (envelopes/s; ratios within the round):',
);
const roundHeader = ['round', 'order', ...present.map((p) => SHORT[p]), ...RATIOS.map((r) => r.name), 'ingest µs/env', 'RSS MB'];
const roundRows = rounds.map((round) => {
  const order = runs
    .filter((r) => r.round === round)
    .sort((a, b) => a.slot - b.slot)
    .map((r) => SHORT[r.path])
    .join(' ');
  const ing = runOf(round, 'ingest');
  return [
    String(round),
    order,
    ...present.map((p) => opt(runOf(round, p) && rate(runOf(round, p)!), int)),
    ...RATIOS.map((r) => {
      const a = runOf(round, r.of);
      const b = runOf(round, r.to);
      return a && b ? (rate(a) / rate(b)).toFixed(3) : dash;
    }),
    opt(ing && usPer(ing.processCpuS, ing), fix(1)),
    opt(ing?.rssMb, int),
  ];
});
out.push(table(roundHeader, roundRows, 2), '');

out.push('per path (envelopes/s over the rounds; CPU µs per envelope, medians):');
out.push(
  table(
    ['path', 'min', 'median', 'max', 'process CPU', 'ClickHouse CPU', 'Kafka CPU', 'peak RSS MB'],
    present.map((p) => {
      const f = perPath[p];
      return [
        LABEL[p],
        opt(f.rate?.min, int),
        opt(f.rate?.median, int),
        opt(f.rate?.max, int),
        opt(f.processCpuUsPerEnvelope?.median, fix(1)),
        opt(f.clickhouseCpuUsPerEnvelope?.median, fix(1)),
        opt(f.kafkaCpuUsPerEnvelope?.median, fix(1)),
        opt(f.peakRssMb, int),
      ];
    }),
  ),
  '',
);

out.push('ratios (each computed within a round, then over the rounds):');
out.push(
  table(
    ['ratio', 'min', 'median', 'max'],
    RATIOS.map((r) => {
      const s = ratioSpreads[r.name];
      return [r.name, opt(s?.min, fix(3)), opt(s?.median, fix(3)), opt(s?.max, fix(3))];
    }),
  ),
  '',
);
// The codec's cost: ingest's own CPU per envelope on the compressed topic
// against the uncompressed one, each pair measured in the same round.
const cpuRatios = rounds.flatMap((round) => {
  const a = runOf(round, 'ingest-compressed');
  const b = runOf(round, 'ingest');
  const ua = a && usPer(a.processCpuS, a);
  const ub = b && usPer(b.processCpuS, b);
  return ua && ub ? [{ round, compressed: ua, none: ub, ratio: ua / ub }] : [];
});
const cpuRatio = spread(cpuRatios.map((c) => c.ratio));
if (cpuRatios.length > 0) {
  out.push(`ingest CPU µs per envelope, ${meta.compression ?? '?'} batches against uncompressed (each pair in one round):`);
  out.push(
    table(
      ['round', meta.compression ?? 'compressed', 'none', 'ratio'],
      cpuRatios.map((c) => [String(c.round), fix(1)(c.compressed), fix(1)(c.none), fix(3)(c.ratio)]),
    ),
  );
  out.push(`  median ratio ${opt(cpuRatio?.median, fix(3))} (min ${opt(cpuRatio?.min, fix(3))}, max ${opt(cpuRatio?.max, fix(3))})`, '');
}
// ---------------------------------------------------------------- the CPU budget per stage

/** What bench/e2e-stages.js collect writes for one build's profiled pass. */
interface StagesBudget {
  readonly label: string;
  readonly envelopes: number;
  readonly seconds: number;
  readonly process: ProcessBudget & { readonly cpuSeconds: number; readonly threadCpuSeconds: { byName: Record<string, number> } | null };
  readonly clickhouse: ServerBudget & {
    readonly serverCpuSeconds: number | null;
    readonly loggedQueries: number;
    readonly profileEvents: 'nested' | 'map';
    readonly partLogMerges: { merges: number; rows: number } | null;
    readonly serverMerges: Record<string, number>;
  };
  readonly kafkaUsPerEnvelope: number | null;
  readonly cores: { readonly busySeconds: number; readonly busyUsPerEnvelope: number; readonly idleShare: number | null };
  readonly batchStep: { readonly usPerEnvelope: number; readonly measure: 'cpu' | 'wall'; readonly envelopes: number } | null;
}
const readStages = (file: string | undefined): StagesBudget | undefined => (file ? (JSON.parse(readFileSync(file, 'utf8')) as StagesBudget) : undefined);
const stagesMain = readStages(args.stages);
const stagesAgainst = readStages(args['stages-against']);
/** Ingest's CPU per envelope over its in-process batch step: the profiled pass's, and the timed rounds' (unprofiled) median. */
function batchRatios(b: StagesBudget | undefined, timedUs: number | null | undefined): { profiled: number | null; timed: number | null } {
  const step = b?.batchStep?.usPerEnvelope;
  if (!b || step === undefined || step <= 0) return { profiled: null, timed: null };
  return { profiled: b.process.totalUsPerEnvelope / step, timed: timedUs == null ? null : timedUs / step };
}
const stageRatios = {
  main: batchRatios(stagesMain, perPath.ingest?.processCpuUsPerEnvelope?.median),
  against: batchRatios(stagesAgainst, perPath['ingest-against']?.processCpuUsPerEnvelope?.median),
};
if (stagesMain || stagesAgainst) {
  const row = (label: string, get: (b: StagesBudget) => number | null | undefined, f: (v: number) => string = fix(1)): string[] => {
    const a = stagesMain ? get(stagesMain) : undefined;
    const b = stagesAgainst ? get(stagesAgainst) : undefined;
    return [label, opt(a, f), opt(b, f), a != null && b != null && b !== 0 ? (a / b).toFixed(3) : dash];
  };
  const pct = (v: number): string => `${(v * 100).toFixed(1)} %`;
  const rows: string[][] = [
    ['ingest process (profiled pass)', '', '', ''],
    ...STAGES.map((s) => row(`  ${STAGE_LABEL[s]}`, (b) => b.process.stages[s])),
    row('  V8 helper threads (concurrent GC, compilers)', (b) => b.process.helpers?.v8),
    row("  node's other threads (libuv pool, signals)", (b) => b.process.helpers?.other),
    row('  = process total', (b) => b.process.totalUsPerEnvelope),
    [
      '  process total, timed rounds (median, unprofiled)',
      opt(perPath.ingest?.processCpuUsPerEnvelope?.median, fix(1)),
      opt(perPath['ingest-against']?.processCpuUsPerEnvelope?.median, fix(1)),
      dash,
    ],
    ...[...new Set([...(stagesMain?.process.threads ?? []), ...(stagesAgainst?.process.threads ?? [])].map((t) => t.thread))]
      .sort((x, y) => x - y)
      .map((thread) => row(`  thread ${thread === 0 ? 'main' : `worker ${thread}`}`, (b) => b.process.threads.filter((t) => t.thread === thread).reduce((sum, t) => sum + t.usPerEnvelope, 0))),
    ['ClickHouse server (per stored row)', '', '', ''],
    ...QUERY_KINDS.map((k) => row(`  ${QUERY_KIND_LABEL[k]}`, (b) => b.clickhouse.kinds[k])),
    row('  merges + background (server - queries)', (b) => b.clickhouse.kinds.merges),
    row('  = server total', (b) => b.clickhouse.totalUsPerRow),
    row('Kafka broker', (b) => b.kafkaUsPerEnvelope),
    row('both cores: busy', (b) => b.cores.busyUsPerEnvelope),
    row('both cores: idle share', (b) => b.cores.idleShare, pct),
    row('in-process batch step (CPU)', (b) => b.batchStep?.usPerEnvelope),
    [`ingest / batch step, timed (target <= ${BATCH_RATIO_TARGET})`, opt(stageRatios.main.timed, fix(2)), opt(stageRatios.against.timed, fix(2)), dash],
    ['ingest / batch step, profiled pass', opt(stageRatios.main.profiled, fix(2)), opt(stageRatios.against.profiled, fix(2)), dash],
  ];
  out.push('CPU per envelope by stage (µs; one profiled ingest pass per build after the timed rounds, under --cpu-prof):');
  out.push(table(['stage', 'this build', 'against', 'ratio'], rows));
  for (const b of [stagesMain, stagesAgainst]) {
    if (!b) continue;
    const c = b.clickhouse;
    const merges = c.partLogMerges
      ? `${c.partLogMerges.merges} merges of its database (system.part_log)`
      : `no system.part_log; the server's merges of every database meanwhile (system.events): ${int(c.serverMerges.MergedRows ?? 0)} rows merged in ${int(c.serverMerges.MergesTimeMilliseconds ?? 0)} ms`;
    out.push(
      `  ${b.label}: ${b.seconds.toFixed(1)} s to store every row; process CPU ${b.process.cpuSeconds.toFixed(2)} s; ` +
        (b.process.helpers
          ? `JavaScript threads' samples ${(b.process.sampledShare * 100).toFixed(0)} % of their CPU (above 100 %: threads waiting for a core were sampled as running), each thread's stages scaled to its own CPU; `
          : `profiles sampled ${(b.process.sampledShare * 100).toFixed(0)} % of it (threads' CPU not read: helper threads are spread over the stages by their shares); `) +
        `${c.loggedQueries} queries logged, CPU from ${c.counter} (ProfileEvents ${c.profileEvents}); ${merges}; ` +
        `batch step ${b.batchStep ? `${int(b.batchStep.envelopes)} envelopes, ${b.batchStep.measure === 'cpu' ? 'CPU' : 'wall time (an older build reports no CPU)'}` : 'not measured'}`,
    );
  }
  out.push('');
}

if (meta.profile) out.push(`profiles: ${meta.profile} (ingest ran under --cpu-prof: slower than unprofiled)`, '');

out.push('targets:');
out.push(table(['target', 'measured', ''], targets.map((t) => [t.name, t.shown, t.ok ? 'PASS' : 'FAIL']), 1));
out.push('', `OVERALL: ${pass ? 'PASS' : 'FAIL'}${!pass && args['no-gate'] ? ' (--no-gate: exit 0 anyway)' : ''}`);
process.stdout.write(out.join('\n') + '\n');

if (args.json) {
  writeFileSync(
    args.json,
    JSON.stringify(
      {
        meta,
        runs: runs.map((r) => ({ ...r, envelopesPerSecond: rate(r) })),
        summary: { perPath, ratios: ratioSpreads, ingestPeakRssMb: ingestRss, compressionCpu: { perRound: cpuRatios, ratio: cpuRatio }, targets, pass },
        stages: { main: stagesMain ?? null, against: stagesAgainst ?? null, batchRatios: stageRatios, batchRatioTarget: BATCH_RATIO_TARGET },
      },
      null,
      2,
    ) + '\n',
  );
}
process.exitCode = pass || args['no-gate'] ? 0 : 1;
