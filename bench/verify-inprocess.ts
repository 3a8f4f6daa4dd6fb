/**
 * CPU benchmark of envelope decoding and chain verification, in process, no
 * services: agentledger's path against the irreducible work on the same
 * records, measured interleaved in the same run (the machine is noisy, so
 * only ratios measured side by side mean anything).
 *
 *   node dist/bench/verify-inprocess.js [--envelopes N] [--loops L] [--payload-bytes B]
 *                                       [--rounds R] [--batch B] [--only floor,decode,batch] [--json]
 *
 * Paths, each over every record, once per round (order rotated every round):
 * - floor:  JSON.parse(value), base64 decode of Payload, JSON.parse(payload),
 *           one SHA-256 over (zero hash | LoopID | 8-byte Seq | Time | Kind | payload);
 * - decode+verify: decodeEnvelope (zod, exact ints and USD) + MemoryChains.verify;
 * - batch: processEnvelopeBatch (decode, verify, row building) over Kafka-sized
 *          batches, with empty in-memory chain state (MemoryChains as the
 *          pipeline's ChainPort: no ClickHouse, CPU only).
 *
 * Target: agentledger / floor >= 0.5 for both agentledger paths.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { decodeEnvelope, DEFAULT_DECODE_OPTIONS } from '../src/decode/envelope.js';
import { generateTraffic } from '../src/demo/traffic/index.js';
import { ChainState, processEnvelopeBatch } from '../src/pipeline/envelopes.js';
import type { SourceRecord } from '../src/pipeline/stream.js';
import type { Verdict } from '../src/verify/chain.js';
import { MemoryChains } from '../src/verify/memory-chains.js';
import { median } from './support.js';

const TARGET_RATIO = 0.5;

const { values: args } = parseArgs({
  options: {
    envelopes: { type: 'string', default: '200000' },
    loops: { type: 'string', default: '2000' },
    'payload-bytes': { type: 'string', default: '1024' },
    rounds: { type: 'string', default: '5' },
    batch: { type: 'string', default: '4000' },
    only: { type: 'string' },
    seed: { type: 'string', default: '7' },
    json: { type: 'boolean', default: false },
  },
});

function wholeNumber(name: string, text: string | undefined, min: number): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min) {
    process.stderr.write(`verify-inprocess: --${name} takes a whole number >= ${min}, got ${JSON.stringify(text)}\n`);
    process.exit(2);
  }
  return n;
}

const envelopes = wholeNumber('envelopes', args.envelopes, 1);
const loops = wholeNumber('loops', args.loops, 1);
const payloadBytes = wholeNumber('payload-bytes', args['payload-bytes'], 0);
const rounds = wholeNumber('rounds', args.rounds, 1);
const batchSize = wholeNumber('batch', args.batch, 1);
const seed = wholeNumber('seed', args.seed, 0);
const json = args.json === true;
const say = (line: string): void => {
  if (!json) process.stdout.write(line + '\n');
};

// A forced GC between timed runs keeps one path's garbage out of the next one's time.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

// ---------------------------------------------------------------- input, generated before timing

const perLoop = Math.max(1, Math.round(envelopes / loops));
const genStart = performance.now();
const traffic = generateTraffic({ loops, envelopesPerLoop: perLoop, seed, payloadBytes });
const values: Buffer[] = [];
const keys: Buffer[] = [];
for (const r of traffic.records) {
  values.push(r.value);
  keys.push(Buffer.from(r.key, 'utf8'));
}
// Keyed by LoopID, as the runtime produces them (a wrong key costs a note per row).
const sources: SourceRecord[] = values.map((value, i) => ({
  topic: 'bench.envelopes',
  partition: 0,
  offset: String(i),
  timestamp: '0',
  key: keys[i]!,
  value,
}));
const genMs = performance.now() - genStart;
const totalBytes = values.reduce((s, v) => s + v.length, 0);
const n = values.length;

// ---------------------------------------------------------------- the three paths

const ZERO = Buffer.alloc(32);

/** The irreducible work per record. Returns a checksum so nothing is optimized away. */
function floor(): number {
  let check = 0;
  const seqBytes = Buffer.allocUnsafe(8);
  for (const value of values) {
    const rec = JSON.parse(value.toString('utf8')) as { LoopID: string; Seq: number; Time: string; Kind: string; Payload: string };
    const payload = Buffer.from(rec.Payload, 'base64');
    const body = JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
    seqBytes.writeBigUInt64BE(BigInt(rec.Seq));
    const digest = createHash('sha256').update(ZERO).update(rec.LoopID, 'utf8').update(seqBytes).update(rec.Time, 'utf8').update(rec.Kind, 'utf8').update(payload).digest();
    check = (check + digest[0]! + (body === null ? 0 : 1)) | 0;
  }
  return check;
}

function decodeVerify(): { check: number; verdicts: Map<string, number> } {
  const chains = new MemoryChains('binary');
  const verdicts = new Map<string, number>();
  let check = 0;
  for (const value of values) {
    const d = decodeEnvelope(value, DEFAULT_DECODE_OPTIONS);
    const verdict = d.ok ? chains.verify(d.value).verdict : 'malformed';
    verdicts.set(verdict, (verdicts.get(verdict) ?? 0) + 1);
    check = (check + (d.ok ? d.value.seq : 0)) | 0;
  }
  return { check, verdicts };
}

async function batch(): Promise<{ check: number; verdicts: Map<string, number> }> {
  // Nothing stored: every loop is new, no version lookups (CPU only, no ClickHouse).
  const state = new ChainState(new MemoryChains('binary'));
  const verdicts = new Map<string, number>();
  const options = { ...DEFAULT_DECODE_OPTIONS, seqEncoding: 'binary' as const };
  let check = 0;
  for (let i = 0; i < n; i += batchSize) {
    const outcome = await processEnvelopeBatch(sources.slice(i, i + batchSize), state, options);
    state.flushed();
    for (const [v, c] of outcome.verdicts) verdicts.set(v, (verdicts.get(v) ?? 0) + c);
    check = (check + outcome.rows.length) | 0;
  }
  return { check, verdicts };
}

type PathName = 'floor' | 'decode+verify' | 'batch';
const paths: Record<PathName, () => Promise<{ check: number; verdicts?: Map<string, number> }>> = {
  floor: () => Promise.resolve({ check: floor() }),
  'decode+verify': () => Promise.resolve(decodeVerify()),
  batch,
};
const aliases: Record<string, PathName> = { floor: 'floor', decode: 'decode+verify', 'decode+verify': 'decode+verify', batch: 'batch' };
const selected: PathName[] = args.only
  ? args.only.split(',').map((s) => {
      const p = aliases[s.trim()];
      if (!p) {
        process.stderr.write(`verify-inprocess: --only takes floor, decode, batch; got ${JSON.stringify(s)}\n`);
        process.exit(2);
      }
      return p;
    })
  : ['floor', 'decode+verify', 'batch'];

// ---------------------------------------------------------------- rounds


const cpu = os.cpus()[0]?.model ?? 'unknown';
say(`agentledger verify-inprocess benchmark  ${new Date().toISOString()}`);
say(`node ${process.version}, ${os.cpus().length} x ${cpu}, ${os.platform()} ${os.release()}`);
say(
  `input: ${n} envelopes over ${loops} loops (${perLoop}/loop), ${(totalBytes / n).toFixed(0)} B/record avg, ` +
    `${(totalBytes / 1024 / 1024).toFixed(1)} MiB total; generated in ${(genMs / 1000).toFixed(1)} s (not timed)`,
);
say(`batch path: processEnvelopeBatch in batches of ${batchSize}, in-memory store (heads()/versions() return empty maps: CPU only, no ClickHouse)`);
say(`rounds: ${rounds} + 1 warm-up, paths interleaved, order rotated each round; figures are medians`);
say('');

const times: Record<PathName, number[]> = { floor: [], 'decode+verify': [], batch: [] };
// The process's CPU over each timed path (the thread is alone in the process, so
// wall time and CPU differ by what the machine takes away: bench/e2e.sh reads CPU).
const cpuTimes: Record<PathName, number[]> = { floor: [], 'decode+verify': [], batch: [] };
const verdictsSeen: Partial<Record<PathName, Map<string, number>>> = {};
const pairRatios: Record<'decode+verify' | 'batch', number[]> = { 'decode+verify': [], batch: [] };

for (let round = 0; round <= rounds; round++) {
  const order = selected.map((_, i) => selected[(i + round) % selected.length]!);
  const roundMs: Partial<Record<PathName, number>> = {};
  for (const p of order) {
    gc();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const result = await paths[p]();
    const ms = performance.now() - t0;
    const c = process.cpuUsage(c0);
    if (result.verdicts) verdictsSeen[p] = result.verdicts;
    if (round > 0) {
      times[p].push(ms);
      cpuTimes[p].push((c.user + c.system) / 1000);
      roundMs[p] = ms;
    }
  }
  if (round === 0) {
    say(`warm-up: ${order.join(', ')} done`);
    continue;
  }
  for (const p of ['decode+verify', 'batch'] as const) {
    if (roundMs.floor !== undefined && roundMs[p] !== undefined) pairRatios[p].push(roundMs.floor / roundMs[p]);
  }
  say(
    `round ${round}: ` +
      selected.map((p) => `${p} ${Math.round(n / (roundMs[p]! / 1000)).toLocaleString('en-US')}/s`).join('  '),
  );
}

const rate = (p: PathName): number | undefined => (times[p].length ? n / (median(times[p]) / 1000) : undefined);
const floorRate = rate('floor');
const results = (['decode+verify', 'batch'] as const)
  .filter((p) => selected.includes(p))
  .map((p) => {
    const r = rate(p)!;
    const ratio = floorRate !== undefined ? r / floorRate : undefined;
    const roundRatio = pairRatios[p].length ? median(pairRatios[p]) : undefined;
    return { path: p, envelopesPerSecond: Math.round(r), ratio, medianRoundRatio: roundRatio, pass: ratio === undefined ? undefined : ratio >= TARGET_RATIO };
  });

const fmt = (x: number | undefined): string => (x === undefined ? '-' : Math.round(x).toLocaleString('en-US'));
say('');
say(`${'path'.padEnd(16)}${'envelopes/s'.padStart(14)}${'MiB/s'.padStart(9)}${'ratio/floor'.padStart(13)}  target`);
if (floorRate !== undefined) say(`${'floor'.padEnd(16)}${fmt(floorRate).padStart(14)}${((floorRate * totalBytes) / n / 1048576).toFixed(0).padStart(9)}${'1.00'.padStart(13)}`);
for (const r of results) {
  const ratio = r.ratio === undefined ? '-' : r.ratio.toFixed(2);
  const verdict = r.pass === undefined ? '' : `${r.pass ? 'PASS' : 'FAIL'} (ratio >= ${TARGET_RATIO})`;
  say(`${r.path.padEnd(16)}${fmt(r.envelopesPerSecond).padStart(14)}${((r.envelopesPerSecond * totalBytes) / n / 1048576).toFixed(0).padStart(9)}${ratio.padStart(13)}  ${verdict}`);
}
for (const r of results) {
  if (r.medianRoundRatio !== undefined) say(`  ${r.path}: median of per-round ratios ${r.medianRoundRatio.toFixed(2)}`);
}
for (const [p, v] of Object.entries(verdictsSeen)) {
  say(`  verdicts (${p}, last round): ${[...v].map(([k, c]) => `${k} ${c}`).join(', ')}`);
}
const judged = results.filter((r) => r.pass !== undefined);
const overall = judged.length === 0 ? undefined : judged.every((r) => r.pass);
if (overall !== undefined) say(`\nOVERALL: ${overall ? 'PASS' : 'FAIL'}: agentledger/floor >= ${TARGET_RATIO} for ${judged.map((r) => r.path).join(' and ')}`);

if (json) {
  const report = {
    benchmark: 'verify-inprocess',
    date: new Date().toISOString(),
    node: process.version,
    cpu,
    cores: os.cpus().length,
    input: { envelopes: n, loops, envelopesPerLoop: perLoop, avgRecordBytes: Math.round(totalBytes / n), payloadBytesOption: payloadBytes, seed },
    batchSize,
    store: 'in-memory fake: heads()/versions() return empty maps (CPU only, no ClickHouse)',
    rounds,
    msPerRound: Object.fromEntries(Object.entries(times).filter(([, xs]) => xs.length > 0).map(([p, xs]) => [p, xs.map((x) => Math.round(x * 10) / 10)])),
    cpuMsPerRound: Object.fromEntries(Object.entries(cpuTimes).filter(([, xs]) => xs.length > 0).map(([p, xs]) => [p, xs.map((x) => Math.round(x * 10) / 10)])),
    envelopesPerSecond: { floor: floorRate === undefined ? undefined : Math.round(floorRate), ...Object.fromEntries(results.map((r) => [r.path, r.envelopesPerSecond])) },
    ratios: Object.fromEntries(results.map((r) => [r.path, r.ratio === undefined ? undefined : Math.round(r.ratio * 1000) / 1000])),
    medianRoundRatios: Object.fromEntries(results.map((r) => [r.path, r.medianRoundRatio === undefined ? undefined : Math.round(r.medianRoundRatio * 1000) / 1000])),
    target: { ratioAtLeast: TARGET_RATIO },
    pass: Object.fromEntries(results.map((r) => [r.path, r.pass])),
    overall: overall === undefined ? undefined : overall ? 'PASS' : 'FAIL',
    verdicts: Object.fromEntries(Object.entries(verdictsSeen).map(([p, v]) => [p, Object.fromEntries(v as Map<Verdict, number>)])),
  };
  process.stdout.write(JSON.stringify(report, null, 2) + '\n');
}
process.exitCode = overall === false ? 1 : 0;
