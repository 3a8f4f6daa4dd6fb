/**
 * Memory of `agentledger ingest` against the number of keys it sees (issue
 * 20): the same number of records over many keys and over few, in one run,
 * on the local stack (Kafka 127.0.0.1:9092, ClickHouse 127.0.0.1:8123).
 *
 *   npm run bench:memory -- [--envelopes 600000] [--wide-loops 200000] [--narrow-loops 5000]
 *                           [--craze-events 300000] [--wide-sessions 50000] [--narrow-sessions 1000]
 *                           [--payload-bytes 1024] [--only envelopes|craze] [--no-gate] [--json FILE]
 *
 * Four paths, each on a fresh topic (4 partitions), database and group:
 * envelopes-wide (--envelopes over --wide-loops loops), envelopes-narrow
 * (the same number over --narrow-loops), craze-wide (--craze-events over
 * --wide-sessions sessions, two incarnations each, usage reports, turns and
 * tools), craze-narrow (over --narrow-sessions). Envelopes come from
 * `produce-demo` (loops start 200 ms apart, a few dozen live at once);
 * craze events from the generator below (50 sessions live at once). The
 * records are produced first (not timed). Then `agentledger ingest
 * --idle-exit-ms 5000` runs with its default settings (cache budgets
 * included) until count() of its table equals the records produced, and
 * idles until it exits: peak RSS is the process's VmHWM, end RSS its VmRSS
 * sampled last (idle, just before the exit), both every 250 ms; the heap
 * (nodejs_heap_size_used_bytes), external memory and the cache counters
 * (agentledger_cache_*) are scraped from its /metrics when idle.
 * Throughput is records over the time from the process start until
 * count() reached them.
 *
 * Prints each path, then per source the wide/narrow ratio of peak RSS.
 * Targets: ratio <= 1.25 and peak RSS < 400 MB for every path; exit 0 only
 * when all pass (--no-gate: 0 anyway). Topics, groups and databases are
 * removed at the end, also after a failure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { parseConfig } from '../src/config/index.js';
import { createClickHouse } from '../src/clickhouse/client.js';
import { mulberry32 } from '../src/demo/traffic/prng.js';
import { wholeOption } from './support.js';

const BENCH = 'bench/memory.ts';
const CLI = fileURLToPath(new URL('../../bin/agentledger.js', import.meta.url));
const RATIO_TARGET = 1.25;
const PEAK_TARGET_MB = 400;

const { values } = parseArgs({
  options: {
    envelopes: { type: 'string', default: '600000' },
    'wide-loops': { type: 'string', default: '200000' },
    'narrow-loops': { type: 'string', default: '5000' },
    'craze-events': { type: 'string', default: '300000' },
    'wide-sessions': { type: 'string', default: '50000' },
    'narrow-sessions': { type: 'string', default: '1000' },
    'payload-bytes': { type: 'string', default: '1024' },
    only: { type: 'string' },
    'no-gate': { type: 'boolean', default: false },
    json: { type: 'string' },
  },
});
const envelopes = wholeOption(BENCH, 'envelopes', values.envelopes);
const wideLoops = wholeOption(BENCH, 'wide-loops', values['wide-loops']);
const narrowLoops = wholeOption(BENCH, 'narrow-loops', values['narrow-loops']);
const crazeEvents = wholeOption(BENCH, 'craze-events', values['craze-events']);
const wideSessions = wholeOption(BENCH, 'wide-sessions', values['wide-sessions']);
const narrowSessions = wholeOption(BENCH, 'narrow-sessions', values['narrow-sessions']);
const payloadBytes = wholeOption(BENCH, 'payload-bytes', values['payload-bytes']);
if (values.only !== undefined && values.only !== 'envelopes' && values.only !== 'craze') {
  process.stderr.write(`${BENCH}: --only takes envelopes or craze\n`);
  process.exit(2);
}

const log = (line: string): void => void process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const TS = Date.now();
// A throwaway database per path needs a user that may create one: the local
// stack's agentledger_test (agentledger's own writer has no DDL), as bench/e2e.sh.
process.env['AGENTLEDGER_CLICKHOUSE_USER'] ??= 'agentledger_test';
process.env['AGENTLEDGER_CLICKHOUSE_PASSWORD'] ??= 'agentledger_test';
delete process.env['AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER'];
delete process.env['AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD'];
const config = parseConfig(process.env);
const kafka = new Kafka({ clientId: 'bench-memory', brokers: [...config.kafka.brokers], logLevel: logLevel.NOTHING });
const made = { topics: [] as string[], groups: [] as string[], databases: [] as string[] };

interface Path {
  readonly name: string;
  readonly source: 'envelopes' | 'craze';
  readonly keys: number;
  readonly records: number;
}

interface Result extends Path {
  readonly seconds: number;
  readonly perSecond: number;
  readonly peakRssMb: number;
  readonly endRssMb: number;
  readonly heapUsedMb: number;
  readonly externalMb: number;
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
  readonly entries: number;
  readonly missRate: number;
}

// ------------------------------------------------------------------ craze traffic


const spend = (cost: number, input: number, output: number): string =>
  `{"input":${input},"output":${output},"reasoning":0,"cacheRead":${input * 2},"cacheCreation":0,"costPicoUsd":${cost},"unpriced":false}`;

/**
 * craze records of `sessions` sessions, `events` in all: each session two
 * incarnations (a run and its --continue), each a model line, then turns of
 * a user line, a tool call and a usage report (cumulative session spend),
 * 50 sessions live at once, interleaved at random. Keyed by session id.
 */
function* crazeRecords(sessions: number, events: number): Generator<{ key: string; value: string }> {
  const rnd = mulberry32(20);
  const perSession = Math.max(4, Math.floor(events / sessions));
  let started = 0;
  const live: { id: string; sent: number; costs: [number, number] }[] = [];
  const at = (n: number): string => new Date(Date.UTC(2026, 10, 30, 10) + n * 1000).toISOString();
  let emitted = 0;
  while (live.length > 0 || started < sessions) {
    while (live.length < 50 && started < sessions) live.push({ id: `bench-session-${String(started++).padStart(6, '0')}`, sent: 0, costs: [0, 0] });
    const i = Math.floor(rnd() * live.length);
    const s = live[i]!;
    const half = Math.ceil(perSession / 2);
    const inc = s.sent < half ? 0 : 1;
    const seq = inc === 0 ? s.sent + 1 : s.sent - half + 1;
    const incarnation = `${s.id}-run-${inc + 1}`;
    let event: string;
    const step = (seq - 2) % 4;
    if (seq === 1) event = `{"type":"meta","state":{"mode":"default","model":"claude-sonnet-4-5"},"at":"${at(emitted)}"}`;
    else if (step === 0) event = `{"type":"turn","turn":{"id":"turn-${seq}","phase":"started"},"at":"${at(emitted)}"}`;
    else if (step === 1) event = `{"type":"user","text":"make the build green and add a test for the cart total ${seq}","at":"${at(emitted)}"}`;
    else if (step === 2) event = `{"type":"tool","tool":{"id":"call-${seq}","name":"bash","kind":"execute","status":"completed","exitCode":0},"at":"${at(emitted)}"}`;
    else {
      const turnCost = 1_000_000 + Math.floor(rnd() * 5_000_000);
      s.costs[inc] = s.costs[inc] + turnCost;
      event = `{"type":"meta","state":{"usage":{"contextTokens":${1000 + seq * 10},"contextWindow":200000,"turn":${spend(turnCost, 300, 120)},"session":${spend(s.costs[inc], 300 * seq, 120 * seq)}}},"at":"${at(emitted)}"}`;
    }
    yield { key: s.id, value: `{"sessionId":"${s.id}","incarnation":"${incarnation}","seq":${seq},"event":${event}}` };
    emitted++;
    s.sent++;
    if (s.sent >= perSession) live.splice(i, 1);
  }
}

// ------------------------------------------------------------------ steps

function runNode(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

async function produceEnvelopes(topic: string, loops: number, perLoop: number): Promise<number> {
  const child = runNode(['produce-demo', '--loops', String(loops), '--envelopes', String(perLoop), '--payload-bytes', String(payloadBytes), '--json'], {
    AGENTLEDGER_ENVELOPE_TOPIC: topic,
    AGENTLEDGER_LOG_LEVEL: 'warn',
    // The lines are read by a person, and by patterns here (serve's address).
    AGENTLEDGER_LOG_FORMAT: 'text',
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  if (code !== 0) throw new Error(`produce-demo exited ${code}: ${err.slice(-2000)}`);
  return (JSON.parse(out) as { records: number }).records;
}

async function produceCraze(topic: string, sessions: number): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 4 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  let sent = 0;
  let chunk: { key: string; value: string }[] = [];
  const flush = async (): Promise<void> => {
    if (chunk.length === 0) return;
    await producer.send({ topic, acks: -1, messages: chunk });
    sent += chunk.length;
    chunk = [];
  };
  try {
    for (const r of crazeRecords(sessions, crazeEvents)) {
      chunk.push(r);
      if (chunk.length === 2000) await flush();
    }
    await flush();
  } finally {
    await producer.disconnect();
  }
  return sent;
}

const statusKb = (pid: number, field: string): number => {
  try {
    return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
};

const metricOf = (text: string, name: string): number => Number(new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);

async function runPath(path: Path, port: number): Promise<Result> {
  const id = `${TS}_${path.name.replace(/-/g, '_')}`;
  const topic = `bench.mem.${id}`;
  const other = `bench.mem.${id}.unused`;
  const dlq = `bench.mem.${id}.dlq`;
  const group = `bench.mem.${id}`;
  const database = `bench_mem_${id}`;
  made.topics.push(topic, other, dlq);
  made.groups.push(group);
  made.databases.push(database);

  log(`${path.name}: producing ${path.records.toLocaleString('en')} records over ${path.keys.toLocaleString('en')} ${path.source === 'envelopes' ? 'loops' : 'sessions'}`);
  const produced =
    path.source === 'envelopes' ? await produceEnvelopes(topic, path.keys, Math.round(path.records / path.keys)) : await produceCraze(topic, path.keys);

  const table = path.source === 'envelopes' ? 'envelopes' : 'craze_events';
  const ch = createClickHouse(config.clickhouse, 'default');
  const start = Date.now();
  const child = runNode(['ingest', '--idle-exit-ms', '5000'], {
    AGENTLEDGER_ENVELOPE_TOPIC: path.source === 'envelopes' ? topic : other,
    AGENTLEDGER_CRAZE_TOPIC: path.source === 'craze' ? topic : other,
    AGENTLEDGER_DLQ_TOPIC: dlq,
    AGENTLEDGER_KAFKA_GROUP_ID: group,
    AGENTLEDGER_CLICKHOUSE_DATABASE: database,
    AGENTLEDGER_METRICS_PORT: String(port),
    AGENTLEDGER_ALERT_EVALUATE_ON_INGEST: 'false',
    AGENTLEDGER_LOG_LEVEL: 'warn',
    // The lines are read by a person, and by patterns here (serve's address).
    AGENTLEDGER_LOG_FORMAT: 'text',
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  let exited = false;
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => ((exited = true), r(code))));
  const pid = child.pid!;
  let peakKb = 0;
  let lastKb = 0;
  let storedAt: number | undefined;
  let metrics = '';
  let lastCount = 0;
  try {
    for (let tick = 0; !exited; tick++) {
      const hwm = statusKb(pid, 'VmHWM');
      const rss = statusKb(pid, 'VmRSS');
      if (hwm > peakKb) peakKb = hwm;
      if (rss > 0) lastKb = rss;
      if (storedAt === undefined && tick % 4 === 0) {
        lastCount = await ch
          .query({ query: `SELECT count() AS n FROM ${database}.${table}`, format: 'JSONEachRow' })
          .then((r) => r.json<{ n: string }>())
          .then((rows) => Number(rows[0]?.n ?? 0), () => lastCount);
        if (lastCount >= produced) storedAt = Date.now();
      }
      if (storedAt !== undefined && Date.now() - storedAt > 2000) {
        metrics = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => metrics);
      }
      if (Date.now() - start > 900_000) {
        child.kill('SIGTERM');
        throw new Error(`${path.name}: ${lastCount} of ${produced} rows stored in 900 s`);
      }
      await sleep(250);
    }
    const code = await exit;
    if (code !== 0) throw new Error(`${path.name}: ingest exited ${code}: ${stderr}`);
    if (storedAt === undefined) throw new Error(`${path.name}: ingest exited with ${lastCount} of ${produced} rows stored: ${stderr}`);
  } finally {
    await ch.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => undefined);
    await ch.close();
  }
  const cache = path.source === 'envelopes' ? 'loop_heads' : 'craze_sessions';
  const counter = (name: string): number => metricOf(metrics, `agentledger_cache_${name}{cache="${cache}"}`) || 0;
  const hits = counter('hits_total');
  const misses = counter('misses_total');
  const seconds = (storedAt - start) / 1000;
  return {
    ...path,
    records: produced,
    seconds,
    perSecond: Math.round(produced / seconds),
    peakRssMb: Math.round(peakKb / 1024),
    endRssMb: Math.round(lastKb / 1024),
    heapUsedMb: Math.round(metricOf(metrics, 'agentledger_nodejs_heap_size_used_bytes') / 1048576),
    externalMb: Math.round(metricOf(metrics, 'agentledger_nodejs_external_memory_bytes') / 1048576),
    hits,
    misses,
    evictions: counter('evictions_total'),
    entries: counter('entries'),
    missRate: hits + misses === 0 ? 0 : misses / (hits + misses),
  };
}

async function cleanup(): Promise<void> {
  const admin = kafka.admin();
  await admin.connect().catch(() => undefined);
  try {
    const existing = new Set(await admin.listTopics());
    const topics = made.topics.filter((t) => existing.has(t));
    if (topics.length > 0) await admin.deleteTopics({ topics });
    await admin.deleteGroups(made.groups).catch(() => undefined);
  } catch (err) {
    log(`cleanup: ${(err as Error).message}`);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

// ------------------------------------------------------------------ main

const paths: Path[] = [];
if (values.only !== 'craze') {
  paths.push({ name: 'envelopes-wide', source: 'envelopes', keys: wideLoops, records: envelopes });
  paths.push({ name: 'envelopes-narrow', source: 'envelopes', keys: narrowLoops, records: envelopes });
}
if (values.only !== 'envelopes') {
  paths.push({ name: 'craze-wide', source: 'craze', keys: wideSessions, records: crazeEvents });
  paths.push({ name: 'craze-narrow', source: 'craze', keys: narrowSessions, records: crazeEvents });
}

const results: Result[] = [];
let failed = false;
try {
  for (const [i, path] of paths.entries()) {
    const r = await runPath(path, 19480 + i);
    results.push(r);
    log(
      `${r.name}: ${r.records.toLocaleString('en')} records over ${r.keys.toLocaleString('en')} keys in ${r.seconds.toFixed(1)} s ` +
        `(${r.perSecond.toLocaleString('en')}/s); RSS peak ${r.peakRssMb} MB, end ${r.endRssMb} MB (heap ${r.heapUsedMb} MB, external ${r.externalMb} MB); ` +
        `cache ${r.entries} entries, ${r.hits} hits, ${r.misses} misses (${(100 * r.missRate).toFixed(1)}%), ${r.evictions} evictions`,
    );
  }
} finally {
  await cleanup();
}

const lines: string[] = [];
lines.push('path              keys      records   seconds  records/s  peak MB  end MB  heap MB  miss rate  evictions');
for (const r of results) {
  lines.push(
    `${r.name.padEnd(17)} ${String(r.keys).padStart(7)} ${String(r.records).padStart(9)} ${r.seconds.toFixed(1).padStart(9)} ${String(r.perSecond).padStart(10)} ` +
      `${String(r.peakRssMb).padStart(8)} ${String(r.endRssMb).padStart(7)} ${String(r.heapUsedMb).padStart(8)} ${(100 * r.missRate).toFixed(1).padStart(9)}% ${String(r.evictions).padStart(10)}`,
  );
}
const verdict = (ok: boolean): string => (ok ? 'PASS' : 'FAIL');
for (const source of ['envelopes', 'craze'] as const) {
  const wide = results.find((r) => r.name === `${source}-wide`);
  const narrow = results.find((r) => r.name === `${source}-narrow`);
  if (!wide || !narrow) continue;
  const peak = wide.peakRssMb / narrow.peakRssMb;
  const end = wide.endRssMb / narrow.endRssMb;
  const ok = peak <= RATIO_TARGET;
  failed ||= !ok;
  lines.push(`${source}: wide/narrow peak RSS ${peak.toFixed(2)}x (end ${end.toFixed(2)}x), target <= ${RATIO_TARGET}x: ${verdict(ok)}`);
}
for (const r of results) {
  const ok = r.peakRssMb < PEAK_TARGET_MB;
  failed ||= !ok;
  lines.push(`${r.name}: peak RSS ${r.peakRssMb} MB, target < ${PEAK_TARGET_MB} MB: ${verdict(ok)}`);
}
process.stdout.write(`${lines.join('\n')}\n`);
if (values.json) writeFileSync(values.json, JSON.stringify({ date: new Date().toISOString(), payloadBytes, results }, null, 2));
process.exit(failed && !values['no-gate'] ? 1 : 0);
