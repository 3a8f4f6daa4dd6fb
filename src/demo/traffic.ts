/**
 * Deterministic loop-runtime traffic (DESIGN.md §1) for demos, benchmarks and
 * tests: hash-chained Envelopes encoded as Go's encoding/json writes them,
 * interleaved across loops as one topic would carry them (per-loop order
 * kept), with planted violations and the verdicts the verifier must report.
 *
 * Everything comes from a seeded PRNG (mulberry32): the same options give the
 * same bytes. The generator hashes with its own few lines of SHA-256 and never
 * calls the verifier, so a test that runs the output through the verifier
 * checks one against the other.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

// ---------------------------------------------------------------- PRNG

/** mulberry32: a small, fast, seeded 32-bit PRNG. Returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;
/** An integer in [min, max]. */
const int = (rng: Rng, min: number, max: number): number => min + Math.floor(rng() * (max - min + 1));
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
const chance = (rng: Rng, p: number): boolean => rng() < p;

function mixSeed(seed: number, index: number): number {
  let h = Math.imul((seed >>> 0) ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return h >>> 0;
}

// ---------------------------------------------------------------- time

const NS_PER_S = 1_000_000_000n;
const START = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;

/** Parses a UTC RFC 3339 time (`…Z`, up to 9 fraction digits) to integer nanoseconds since the epoch. */
export function parseUtcNanos(text: string): bigint {
  const m = START.exec(text);
  if (!m) throw new RangeError(`startTime ${JSON.stringify(text)} is not an RFC 3339 UTC time such as 2026-11-30T10:00:00Z`);
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  return BigInt(ms / 1000) * NS_PER_S + BigInt((m[7] ?? '').padEnd(9, '0') || '0');
}

/**
 * Go's time.RFC3339Nano text of a UTC instant: the fraction is built from the
 * integer nanoseconds with trailing zeros trimmed (none for whole seconds).
 * Date is used for the calendar of the whole seconds only.
 */
export function formatRfc3339Nano(nanos: bigint): string {
  let seconds = nanos / NS_PER_S;
  let frac = nanos % NS_PER_S;
  if (frac < 0n) {
    frac += NS_PER_S;
    seconds -= 1n;
  }
  const base = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  const fraction = frac === 0n ? '' : '.' + frac.toString().padStart(9, '0').replace(/0+$/, '');
  return `${base}${fraction}Z`;
}

// ---------------------------------------------------------------- JSON as Go writes it

/** Printable text without `"` `\\` `&` `<` `>` U+2028 U+2029: written as it is. */
const PLAIN = /^[\x20\x21\x23-\x25\x27-\x3b\x3d\x3f-\x5b\x5d-\u2027\u202a-\uffff]*$/;
/** A JSON string as Go's encoding/json writes it (HTML characters and U+2028/9 escaped). */
function goString(s: string): string {
  if (PLAIN.test(s)) return `"${s}"`;
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

type Json = string | number | bigint | boolean | null | readonly Json[] | { readonly [k: string]: Json | undefined };

/**
 * Canonical JSON (event.Marshal): sorted keys, no whitespace. Numbers are
 * written as JavaScript's shortest round-trip text, which is Go's float64
 * text too (exponent below 1e-6: `1e-7`); bigints as their digits; undefined
 * members are omitted (Go's omitempty).
 */
function canonical(v: Json): string {
  if (typeof v === 'string') return goString(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new RangeError('JSON has no non-finite numbers');
    return String(v);
  }
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v === null) return 'null';
  if (Array.isArray(v)) return `[${(v as readonly Json[]).map(canonical).join(',')}]`;
  const obj = v as { readonly [k: string]: Json | undefined };
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${goString(k)}:${canonical(obj[k]!)}`).join(',')}}`;
}

/** Nanodollars -> the float64 USD value Go would write (exact: at most 15 significant digits). */
const usd = (nanoUsd: number): number => nanoUsd / 1e9;

// ---------------------------------------------------------------- hash chain

function linkHash(prev: Buffer, loopId: string, seq: number, timeText: string, kind: string, payload: Buffer): Buffer {
  const seqBytes = Buffer.alloc(8);
  seqBytes.writeBigUInt64BE(BigInt(seq));
  return createHash('sha256').update(prev).update(loopId, 'utf8').update(seqBytes).update(timeText, 'utf8').update(kind, 'utf8').update(payload).digest();
}

/** One Kafka record value: the Envelope as Go's json.Marshal writes it. */
function envelopeJson(loopId: string, seq: number, timeText: string, kind: string, payload: Buffer, hash: Buffer): string {
  return `{"LoopID":${goString(loopId)},"Seq":${seq},"Time":"${timeText}","Kind":${goString(kind)},"Payload":"${payload.toString('base64')}","Hash":[${hash.join(',')}]}`;
}

// ---------------------------------------------------------------- public types

/** One Kafka record: key = the LoopID, value = the Envelope JSON. */
export interface TrafficRecord {
  readonly key: string;
  readonly value: Buffer;
}

/**
 * How many loops get each kind of planted problem (one problem per loop, at
 * the first, a middle or the last usable seq in turn):
 * - mismatch: one payload digit changed, carried hash kept → `mismatch` at k;
 * - gap: envelope k deleted → `gap` at k+1;
 * - fork: a second, honestly hashed version of seq k with another payload, after the original → `fork` at k;
 * - timeRegression: envelope k honestly hashed with a Time 1 ns..1 s before k-1's → `time_regression` at k;
 * - reorder: k+1 delivered before k → `gap` at k+1, then `regression` at k;
 * - duplicate: a byte-identical redelivery of k later on → no violation.
 */
export interface ViolationPlan {
  readonly mismatch?: number;
  readonly gap?: number;
  readonly fork?: number;
  readonly timeRegression?: number;
  readonly reorder?: number;
  readonly duplicate?: number;
}
export type PlantedKind = keyof ViolationPlan;
const PLANTED_KINDS: readonly PlantedKind[] = ['mismatch', 'gap', 'fork', 'timeRegression', 'reorder', 'duplicate'];

/** About 1.5% of the loops (at least one) for each kind of problem. */
export function defaultViolationPlan(loops: number): Required<ViolationPlan> {
  const n = Math.max(1, Math.ceil(loops * 0.015));
  return { mismatch: n, gap: n, fork: n, timeRegression: n, reorder: n, duplicate: n };
}

export type ViolationVerdict = 'mismatch' | 'gap' | 'fork' | 'regression' | 'time_regression';

export interface PlantedViolation {
  readonly loopId: string;
  readonly seq: number;
  readonly verdict: ViolationVerdict;
}

export interface TrafficOptions {
  readonly loops: number;
  /** Envelopes per loop (before planting), fixed or drawn from [min, max]. */
  readonly envelopesPerLoop: number | readonly [number, number];
  readonly seed: number;
  /** Average Kafka record value size to aim for, in bytes (default 1024): pads model responses and tool results. */
  readonly payloadBytes?: number;
  readonly violations?: ViolationPlan;
  /** Earliest loop start, RFC 3339 UTC (default 2026-11-30T10:00:00Z). */
  readonly startTime?: string;
}

export interface ExpectedLoop {
  readonly loopId: string;
  /** Distinct seqs that reach the topic: what must be stored, once each. */
  readonly envelopes: number;
  /** Kafka records of this loop (forks' second versions and duplicates included). */
  readonly records: number;
  /** The planted problem, if any. */
  readonly planted?: { readonly kind: PlantedKind; readonly seq: number };
}

export interface ExpectedTraffic {
  readonly loops: readonly ExpectedLoop[];
  /** Sum of the loops' distinct (loop, seq): rows to store. */
  readonly envelopes: number;
  /** Kafka records in total. */
  readonly records: number;
  /** Exact redeliveries (verdict duplicate; not violations). */
  readonly duplicates: number;
  /** Every verdict other than ok and duplicate, sorted by loopId then seq. */
  readonly violations: readonly PlantedViolation[];
  /**
   * Every (loopId, seq) that must be stored exactly once, sorted by loopId then
   * seq: all envelopes but deleted ones. A fork's second version is extra
   * evidence, not another (loop, seq).
   */
  readonly stored: readonly { readonly loopId: string; readonly seq: number }[];
}

export interface Traffic {
  /** The records in topic order. Generated lazily; iterating again yields the same records. */
  readonly records: Iterable<TrafficRecord>;
  readonly expected: ExpectedTraffic;
}

// ---------------------------------------------------------------- plan

interface LoopPlan {
  readonly index: number;
  readonly loopId: string;
  readonly n: number;
  readonly startNs: bigint;
  readonly planted?: { readonly kind: PlantedKind; readonly seq: number; readonly later: number; readonly backNs: bigint };
}

type Position = 'middle' | 'first' | 'last';
const POSITIONS: readonly Position[] = ['middle', 'first', 'last'];

/** The seq a problem is planted at, for a loop of n envelopes (n >= 3). */
function plantedSeq(kind: PlantedKind, n: number, position: Position, rng: Rng): number {
  // Usable range of k per kind.
  const [lo, hi] =
    kind === 'gap' || kind === 'reorder' ? [1, n - 1] : kind === 'timeRegression' ? [2, n] : [1, n];
  if (position === 'first') return lo;
  if (position === 'last') return hi;
  return hi - lo >= 2 ? int(rng, lo + 1, hi - 1) : lo;
}

function makePlan(opts: TrafficOptions): LoopPlan[] {
  const { loops, envelopesPerLoop, seed } = opts;
  if (!Number.isSafeInteger(loops) || loops < 1) throw new RangeError(`loops must be a whole number >= 1, got ${loops}`);
  const [min, max] = typeof envelopesPerLoop === 'number' ? [envelopesPerLoop, envelopesPerLoop] : envelopesPerLoop;
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min < 1 || max < min) {
    throw new RangeError(`envelopesPerLoop must be a whole number >= 1 or [min, max] with 1 <= min <= max, got ${JSON.stringify(envelopesPerLoop)}`);
  }
  const rng = mulberry32(seed);
  const width = Math.max(5, String(loops).length);
  const start = parseUtcNanos(opts.startTime ?? '2026-11-30T10:00:00Z');
  // Loops start over a window of 200 ms per loop, so a few dozen run at once.
  const windowNs = loops * 200_000_000;
  const base = Array.from({ length: loops }, (_, index) => ({
    index,
    loopId: `demo-s${seed}-${String(index + 1).padStart(width, '0')}`,
    n: int(rng, min, max),
    startNs: start + BigInt(Math.floor(rng() * windowNs)),
  }));

  const plan: LoopPlan[] = base;
  const wanted = PLANTED_KINDS.flatMap((k) => {
    const count = opts.violations?.[k] ?? 0;
    if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`violations.${k} must be a whole number >= 0, got ${count}`);
    return Array.from({ length: count }, (_, i) => ({ kind: k, position: POSITIONS[i % POSITIONS.length]! }));
  });
  if (wanted.length === 0) return plan;
  // Distinct loops of at least 3 envelopes, chosen by a partial shuffle.
  const eligible = base.filter((l) => l.n >= 3).map((l) => l.index);
  if (eligible.length < wanted.length) {
    throw new RangeError(`${wanted.length} planted problems need as many loops of >= 3 envelopes; there are ${eligible.length}`);
  }
  for (let i = 0; i < wanted.length; i++) {
    const j = i + Math.floor(rng() * (eligible.length - i));
    [eligible[i], eligible[j]] = [eligible[j]!, eligible[i]!];
    const loop = base[eligible[i]!]!;
    const { kind, position } = wanted[i]!;
    plan[loop.index] = {
      ...loop,
      planted: {
        kind,
        seq: plantedSeq(kind, loop.n, position, rng),
        later: int(rng, 0, 3),
        backNs: BigInt(chance(rng, 0.3) ? 1 : int(rng, 2, 1_000_000_000)),
      },
    };
  }
  return plan;
}

function expectedOf(plan: readonly LoopPlan[]): ExpectedTraffic {
  const loops: ExpectedLoop[] = [];
  const violations: PlantedViolation[] = [];
  const stored: { loopId: string; seq: number }[] = [];
  let envelopes = 0;
  let records = 0;
  let duplicates = 0;
  for (const p of plan) {
    const k = p.planted?.seq ?? 0;
    const kind = p.planted?.kind;
    const deleted = kind === 'gap' ? k : 0;
    const loopEnvelopes = p.n - (deleted ? 1 : 0);
    const loopRecords = loopEnvelopes + (kind === 'fork' || kind === 'duplicate' ? 1 : 0);
    loops.push(p.planted ? { loopId: p.loopId, envelopes: loopEnvelopes, records: loopRecords, planted: { kind: p.planted.kind, seq: k } } : { loopId: p.loopId, envelopes: loopEnvelopes, records: loopRecords });
    envelopes += loopEnvelopes;
    records += loopRecords;
    for (let seq = 1; seq <= p.n; seq++) if (seq !== deleted) stored.push({ loopId: p.loopId, seq });
    switch (kind) {
      case 'mismatch':
        violations.push({ loopId: p.loopId, seq: k, verdict: 'mismatch' });
        break;
      case 'gap':
        violations.push({ loopId: p.loopId, seq: k + 1, verdict: 'gap' });
        break;
      case 'fork':
        violations.push({ loopId: p.loopId, seq: k, verdict: 'fork' });
        break;
      case 'timeRegression':
        violations.push({ loopId: p.loopId, seq: k, verdict: 'time_regression' });
        break;
      case 'reorder':
        violations.push({ loopId: p.loopId, seq: k, verdict: 'regression' }, { loopId: p.loopId, seq: k + 1, verdict: 'gap' });
        break;
      case 'duplicate':
        duplicates++;
        break;
      case undefined:
        break;
    }
  }
  const byKey = (a: { loopId: string; seq: number }, b: { loopId: string; seq: number }): number =>
    a.loopId === b.loopId ? a.seq - b.seq : a.loopId < b.loopId ? -1 : 1;
  violations.sort(byKey);
  stored.sort(byKey);
  return { loops, envelopes, records, duplicates, violations, stored };
}

// ---------------------------------------------------------------- one loop's events

interface Event {
  readonly kind: string;
  readonly body: (pad: string) => Json;
  /** Time since the previous event, ns. */
  readonly dtNs: number;
  /** Whether this event carries padding text. */
  readonly paddable: boolean;
  /** What a BudgetCharged event charged. */
  readonly charge?: Charge;
}

interface Charge {
  readonly action_type: string;
  readonly iterations?: number;
  readonly tokens?: number;
  readonly nanoUsd?: number;
  readonly wallMs?: number;
}

const WORDS = (
  'the agent reads file tests pass build config loop step plan tool call result error retry budget model ' +
  'token cost output input cache context window summary patch diff commit branch review check value table ' +
  'query index stream record offset partition consumer producer schema ledger chain hash verify store'
).split(' ');

/** 64 KiB of words from a fixed seed: padding is a slice of it at a random offset (cheap, and not one repeated string). */
let corpus: string | undefined;
function padText(rng: Rng, bytes: number): string {
  if (bytes <= 0) return '';
  if (corpus === undefined) {
    const words = mulberry32(0x5eed);
    const parts: string[] = [];
    let len = 0;
    while (len < 65_536) {
      const w = pick(words, WORDS);
      parts.push(w);
      len += w.length + 1;
    }
    corpus = parts.join(' ');
  }
  let text = '';
  while (text.length < bytes) {
    const from = Math.floor(rng() * (corpus.length - 1));
    text += corpus.slice(from, from + bytes - text.length);
  }
  return text;
}

const MODELS = [
  { provider: 'anthropic', model: 'claude-sonnet-4-5', inNano: 3000, outNano: 15000 },
  { provider: 'anthropic', model: 'claude-haiku-4-5', inNano: 1000, outNano: 5000 },
  { provider: 'openai', model: 'gpt-4.1-mini', inNano: 400, outNano: 1600 },
] as const;
const TOOLS = ['bash', 'read_file', 'write_file', 'grep', 'http_get'] as const;
const ms = (rng: Rng, lo: number, hi: number): number => int(rng, lo, hi) * 1_000_000 + int(rng, 0, 999_999);
const us = (rng: Rng, lo: number, hi: number): number => int(rng, lo, hi) * 1_000 + int(rng, 0, 999);

/** The n events of one loop: LoopStarted, iterations of model and tool calls with their charges, LoopFinished. */
function loopEvents(rng: Rng, loopId: string, n: number): Event[] {
  const events: Event[] = [];
  const hex = (s: string): string => createHash('sha256').update(s).digest('hex');
  const m = pick(rng, MODELS);
  const seed = (BigInt(int(rng, 0, 0x3fffffff)) << 32n) | BigInt(int(rng, 0, 0xffffffff));
  events.push({
    kind: 'LoopStarted',
    dtNs: 0,
    paddable: false,
    body: () => ({
      config_hash: hex(`config ${m.model}`),
      initial_state: { goal: `task ${loopId}: make the failing tests pass`, max_iterations: 50 },
      name: `demo ${loopId}`,
      seed,
    }),
  });
  let iteration = 0;
  const middle: Event[] = [];
  const charge = (body: Charge): Event => {
    return {
      kind: 'BudgetCharged',
      dtNs: chance(rng, 0.15) ? 0 : us(rng, 10, 500),
      paddable: false,
      charge: body,
      body: () => ({
        action_type: body.action_type,
        iterations: body.iterations || undefined,
        tokens: body.tokens || undefined,
        usd: body.nanoUsd ? usd(body.nanoUsd) : undefined,
        wall_clock_ms: body.wallMs || undefined,
      }),
    };
  };
  while (middle.length < n - 2) {
    iteration++;
    const it = iteration;
    middle.push({ kind: 'IterationStarted', dtNs: ms(rng, 1, 50), paddable: false, body: () => ({ iteration: it }) });
    middle.push(charge({ action_type: 'iteration', iterations: 1 }));
    // A model call.
    const modelAction = `act-${it}-model`;
    const tokensIn = chance(rng, 0.02) ? 0 : int(rng, 500, 20_000);
    const tokensOut = int(rng, 20, 2_000);
    // Now and then a cache hit that costs a tenth of a micro-dollar (Go writes 1e-7).
    const nano = tokensIn === 0 ? 100 : tokensIn * m.inNano + tokensOut * m.outNano;
    const durationMs = int(rng, 400, 9_000);
    middle.push({
      kind: 'ActionRequested',
      dtNs: us(rng, 50, 2_000),
      paddable: false,
      body: () => ({ action_id: modelAction, action_payload: { messages: 2 * it, model: m.model }, action_type: 'model' }),
    });
    middle.push({
      kind: 'ModelCalled',
      dtNs: durationMs * 1_000_000 + int(rng, 0, 999_999),
      paddable: true,
      body: (pad) => ({
        action_id: modelAction,
        duration_ms: durationMs,
        model: m.model,
        provider: m.provider,
        request: { max_tokens: 4096, messages: 2 * it, model: m.model },
        response: { content: [{ text: pad || 'ok', type: 'text' }], stop_reason: 'tool_use' },
        usage: { cost_usd: usd(nano), in: tokensIn, out: tokensOut },
      }),
    });
    middle.push(charge({ action_type: 'model', tokens: tokensIn + tokensOut, nanoUsd: nano, wallMs: durationMs }));
    // A tool call, after the policy allowed it.
    const tool = pick(rng, TOOLS);
    const toolAction = `act-${it}-tool`;
    const toolMs = chance(rng, 0.1) ? 0 : int(rng, 1, 3_000);
    const isError = chance(rng, 0.05);
    middle.push({
      kind: 'ActionRequested',
      dtNs: us(rng, 50, 2_000),
      paddable: false,
      body: () => ({ action_id: toolAction, action_payload: { args: { path: `src/file${it}.ts` }, tool }, action_type: 'tool' }),
    });
    middle.push({
      kind: 'PolicyDecided',
      dtNs: us(rng, 20, 900),
      paddable: false,
      body: () => ({ action_id: toolAction, capability: `tool:${tool}`, decision: 'allow', reason: 'capability granted by policy v3', tool }),
    });
    middle.push({
      kind: 'ToolCalled',
      dtNs: toolMs * 1_000_000 + int(rng, 0, 999_999),
      paddable: true,
      body: (pad) => ({
        action_id: toolAction,
        args: { path: `src/file${it}.ts` },
        duration_ms: toolMs,
        idempotency_key: `${loopId}/${toolAction}`,
        is_error: isError,
        result: { exit_code: isError ? 1 : 0, output: pad },
        tool,
      }),
    });
    middle.push(charge({ action_type: 'tool', wallMs: toolMs }));
    // Now and then something else happens between iterations.
    const extra = rng();
    if (extra < 0.05) {
      const count = int(rng, 1, 3);
      middle.push({ kind: 'ConvergenceWarning', dtNs: us(rng, 10, 300), paddable: false, body: () => ({ count, detector: 'zero-progress', reason: `no progress in ${count + 1} iterations` }) });
    } else if (extra < 0.09) {
      const to = int(rng, 4, 40);
      middle.push({
        kind: 'CompactionApplied',
        dtNs: ms(rng, 5, 400),
        paddable: false,
        body: () => ({ dropped_from: 2, dropped_to: to, plan_json: { keep_last: 8, summarize: [2, to] }, strategy: 'summarize', summary_ref: `sha256:${hex(`${loopId} ${to}`)}` }),
      });
    } else if (extra < 0.12) {
      const at = events.length + middle.length;
      middle.push({ kind: 'SnapshotTaken', dtNs: us(rng, 100, 5_000), paddable: false, body: () => ({ seq: at, state_hash: hex(`${loopId} state ${at}`) }) });
    } else if (extra < 0.14) {
      const id = `act-${it}-human`;
      middle.push({ kind: 'HumanRequested', dtNs: us(rng, 50, 900), paddable: false, body: () => ({ action_id: id, prompt: `Apply the patch to src/file${it}.ts?` }) });
      middle.push({ kind: 'HumanResponded', dtNs: ms(rng, 3_000, 120_000), paddable: false, body: () => ({ action_id: id, response: 'yes, go ahead' }) });
    } else if (extra < 0.155) {
      middle.push({ kind: 'Interrupted', dtNs: us(rng, 50, 900), paddable: false, body: () => ({ reason: 'operator paused the loop' }) });
      middle.push({ kind: 'Resumed', dtNs: ms(rng, 1_000, 60_000), paddable: false, body: () => ({}) });
    }
  }
  middle.length = Math.max(0, n - 2);
  events.push(...middle);
  if (n >= 2) {
    const outcome = chance(rng, 0.9) ? 'Completed' : 'BudgetExceeded';
    // The spend of what was actually emitted (the last iteration may be cut short).
    const total = { iterations: 0, tokens: 0, nanoUsd: 0, wallMs: 0 };
    for (const { charge: c } of middle) {
      total.iterations += c?.iterations ?? 0;
      total.tokens += c?.tokens ?? 0;
      total.nanoUsd += c?.nanoUsd ?? 0;
      total.wallMs += c?.wallMs ?? 0;
    }
    events.push({
      kind: 'LoopFinished',
      dtNs: ms(rng, 1, 30),
      paddable: false,
      body: () => ({
        error: outcome === 'Completed' ? undefined : 'budget of 50 iterations exhausted',
        outcome_kind: outcome,
        result: outcome === 'Completed' ? { answer: 'all tests pass', iterations: middle.filter((e) => e.kind === 'IterationStarted').length } : undefined,
        total_spend: { iterations: total.iterations, tokens: total.tokens, usd: usd(total.nanoUsd), wall_clock_ms: total.wallMs },
      }),
    });
  }
  events.length = n;
  return events;
}

/**
 * Another version of a payload that still decodes: its last digit changed,
 * or, with no digit (Resumed's `{}`), a space after the opening brace.
 */
function tamper(payload: Buffer): Buffer {
  const text = payload.toString('utf8');
  for (let i = text.length - 1; i >= 0; i--) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) return Buffer.from(text.slice(0, i) + String.fromCharCode(48 + ((c - 48 + 1) % 10)) + text.slice(i + 1), 'utf8');
  }
  return Buffer.from(`{ ${text.slice(1)}`, 'utf8');
}

const HASH_TEXT_ESTIMATE = 32 * 3.5 + 2;

interface Emitted {
  readonly emitNs: bigint;
  readonly value: Buffer;
}

/** One loop's records in its topic order, with its planted problem. */
function loopRecords(p: LoopPlan, seed: number, payloadBytes: number): Emitted[] {
  const rng = mulberry32(mixSeed(seed, p.index));
  const events = loopEvents(rng, p.loopId, p.n);
  const planted = p.planted;

  // Times: monotonic, with now and then equal times and whole milliseconds or seconds.
  const times: bigint[] = [];
  let t = p.startNs;
  for (const e of events) {
    t += BigInt(e.dtNs);
    const r = rng();
    if (r < 0.03) t = ((t + NS_PER_S - 1n) / NS_PER_S) * NS_PER_S;
    else if (r < 0.08) t = ((t + 999_999n) / 1_000_000n) * 1_000_000n;
    times.push(t);
  }
  if (planted?.kind === 'timeRegression') times[planted.seq - 1] = times[planted.seq - 2]! - planted.backNs;
  const timeTexts = times.map(formatRfc3339Nano);

  // Padding: spread what the records lack over the paddable events' text.
  const bare = events.map((e) => Buffer.from(canonical(e.body('')), 'utf8'));
  const paddable = events.filter((e) => e.paddable).length;
  let padPerEvent = 0;
  if (paddable > 0) {
    let size = 0;
    for (let i = 0; i < events.length; i++) {
      size += 60 + p.loopId.length + timeTexts[i]!.length + events[i]!.kind.length + Math.ceil(bare[i]!.length / 3) * 4 + HASH_TEXT_ESTIMATE;
    }
    padPerEvent = Math.max(0, Math.floor(((payloadBytes * events.length - size) * 3) / 4 / paddable));
  }
  const payloads = events.map((e, i) => (e.paddable && padPerEvent > 0 ? Buffer.from(canonical(e.body(padText(rng, padPerEvent))), 'utf8') : bare[i]!));

  // The honest chain.
  const values: Buffer[] = [];
  const hashes: Buffer[] = [];
  let prev: Buffer = Buffer.alloc(32);
  for (let i = 0; i < events.length; i++) {
    const seq = i + 1;
    const hash = linkHash(prev, p.loopId, seq, timeTexts[i]!, events[i]!.kind, payloads[i]!);
    values.push(Buffer.from(envelopeJson(p.loopId, seq, timeTexts[i]!, events[i]!.kind, payloads[i]!, hash), 'utf8'));
    hashes.push(hash);
    prev = hash;
  }
  let order: { time: bigint; value: Buffer }[] = values.map((value, i) => ({ time: times[i]!, value }));

  if (planted) {
    const k = planted.seq;
    const i = k - 1;
    const e = events[i]!;
    switch (planted.kind) {
      case 'mismatch':
        order[i] = { time: times[i]!, value: Buffer.from(envelopeJson(p.loopId, k, timeTexts[i]!, e.kind, tamper(payloads[i]!), hashes[i]!), 'utf8') };
        break;
      case 'gap':
        order.splice(i, 1);
        break;
      case 'fork': {
        const other = tamper(payloads[i]!);
        const hash = linkHash(i === 0 ? Buffer.alloc(32) : hashes[i - 1]!, p.loopId, k, timeTexts[i]!, e.kind, other);
        const at = Math.min(order.length, i + 1 + planted.later);
        order.splice(at, 0, { time: times[i]!, value: Buffer.from(envelopeJson(p.loopId, k, timeTexts[i]!, e.kind, other, hash), 'utf8') });
        break;
      }
      case 'reorder':
        [order[i], order[i + 1]] = [order[i + 1]!, order[i]!];
        break;
      case 'duplicate': {
        const at = Math.min(order.length, i + 1 + planted.later);
        order.splice(at, 0, { time: times[i]!, value: Buffer.from(values[i]!) });
        break;
      }
      case 'timeRegression':
        break;
    }
  }
  // A record reaches the topic no earlier than the ones before it.
  let emit = 0n;
  order = order.map((r) => {
    if (r.time > emit) emit = r.time;
    return { time: emit, value: r.value };
  });
  return order.map((r) => ({ emitNs: r.time, value: r.value }));
}

// ---------------------------------------------------------------- interleaving

interface Slot {
  readonly plan: LoopPlan;
  key: bigint;
  records: Emitted[] | undefined;
  next: number;
}

const before = (a: Slot, b: Slot): boolean => (a.key !== b.key ? a.key < b.key : a.plan.index < b.plan.index);

class Heap {
  private readonly items: Slot[] = [];
  get size(): number {
    return this.items.length;
  }
  push(s: Slot): void {
    const h = this.items;
    h.push(s);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }
  pop(): Slot | undefined {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

/**
 * Merges the loops by the time their records reach the topic. A loop's
 * records are generated when it starts and dropped when it ends, so memory
 * holds only the loops running at once.
 */
function* interleave(plan: readonly LoopPlan[], seed: number, payloadBytes: number): Generator<TrafficRecord> {
  const heap = new Heap();
  for (const p of plan) heap.push({ plan: p, key: p.startNs, records: undefined, next: 0 });
  for (let slot = heap.pop(); slot; slot = heap.pop()) {
    if (!slot.records) {
      slot.records = loopRecords(slot.plan, seed, payloadBytes);
      if (slot.records.length === 0) continue;
      slot.key = slot.records[0]!.emitNs;
      heap.push(slot);
      continue;
    }
    yield { key: slot.plan.loopId, value: slot.records[slot.next]!.value };
    slot.next++;
    if (slot.next < slot.records.length) {
      slot.key = slot.records[slot.next]!.emitNs;
      heap.push(slot);
    }
  }
}

/**
 * Generates loop-runtime traffic. The planted problems and the verdicts they
 * must get follow the verifier's rules (src/verify/chain.ts); the records are
 * produced lazily, in topic order.
 */
export function generateTraffic(opts: TrafficOptions): Traffic {
  const plan = makePlan(opts);
  const payloadBytes = opts.payloadBytes ?? 1024;
  if (!Number.isFinite(payloadBytes) || payloadBytes < 0) throw new RangeError(`payloadBytes must be >= 0, got ${payloadBytes}`);
  const seed = opts.seed;
  return {
    records: { [Symbol.iterator]: () => interleave(plan, seed, payloadBytes) },
    expected: expectedOf(plan),
  };
}

// ---------------------------------------------------------------- bad records

/** Every kind of record `decodeEnvelope` must reject (each one alone; the rest of the record is valid). */
export function malformedRecords(): { name: string; key: string | null; value: Buffer }[] {
  const loopId = 'demo-malformed';
  const timeText = '2026-11-30T10:00:00.5Z';
  const payload = Buffer.from('{"iteration":1}');
  const hash = linkHash(Buffer.alloc(32), loopId, 1, timeText, 'IterationStarted', payload);
  const good: Record<string, unknown> = {
    LoopID: loopId,
    Seq: 1,
    Time: timeText,
    Kind: 'IterationStarted',
    Payload: payload.toString('base64'),
    Hash: [...hash],
  };
  const json = (over: Record<string, unknown>): Buffer => Buffer.from(JSON.stringify({ ...good, ...over }), 'utf8');
  const without = (field: string): Buffer => {
    const copy = { ...good };
    delete copy[field];
    return Buffer.from(JSON.stringify(copy), 'utf8');
  };
  const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
  // A > 10 MB JSON object as a ModelCalled payload.
  const huge = `{"action_id":"act-huge","response":{"text":"${'x'.repeat(10 * 1024 * 1024 + 64)}"}}`;
  const seqText = (digits: string): Buffer => Buffer.from(JSON.stringify(good).replace('"Seq":1', `"Seq":${digits}`), 'utf8');
  const invalidUtf8 = Buffer.concat([
    Buffer.from('{"LoopID":"demo-', 'utf8'),
    Buffer.from([0xff, 0xfe, 0xc3]),
    Buffer.from(JSON.stringify(good).slice('{"LoopID":"demo-'.length), 'utf8'),
  ]);
  return [
    { name: 'not JSON', key: loopId, value: Buffer.from('{"LoopID":"demo-malformed","Seq":1,', 'utf8') },
    { name: 'JSON array', key: loopId, value: Buffer.from(JSON.stringify([good]), 'utf8') },
    { name: 'JSON string', key: loopId, value: Buffer.from('"LoopID"', 'utf8') },
    { name: 'wrong types: LoopID a number', key: loopId, value: json({ LoopID: 42 }) },
    { name: 'wrong types: Hash an object', key: loopId, value: json({ Hash: { '0': 1 } }) },
    { name: 'missing Hash', key: loopId, value: without('Hash') },
    { name: 'bad base64 Payload', key: loopId, value: json({ Payload: 'eyJpdGVyYXRpb24iOjF9$$' }) },
    { name: 'hash of 31 bytes', key: loopId, value: json({ Hash: [...hash.subarray(0, 31)] }) },
    { name: 'hash byte 256', key: loopId, value: json({ Hash: [256, ...hash.subarray(1)] }) },
    { name: 'hash as 63 hex characters', key: loopId, value: json({ Hash: hash.toString('hex').slice(1) }) },
    { name: 'Seq 0', key: loopId, value: json({ Seq: 0 }) },
    { name: 'Seq -1', key: loopId, value: json({ Seq: -1 }) },
    { name: 'Seq 1.5', key: loopId, value: json({ Seq: 1.5 }) },
    { name: 'Seq 9007199254740993', key: loopId, value: seqText('9007199254740993') },
    { name: 'Seq "1"', key: loopId, value: json({ Seq: '1' }) },
    { name: 'empty LoopID', key: '', value: json({ LoopID: '' }) },
    { name: 'empty Kind', key: loopId, value: json({ Kind: '' }) },
    { name: 'Time not RFC 3339', key: loopId, value: json({ Time: '30/11/2026 10:00:00' }) },
    { name: 'Time with an impossible date', key: loopId, value: json({ Time: '2026-02-30T10:00:00Z' }) },
    { name: 'payload over 10 MB', key: loopId, value: json({ Kind: 'ModelCalled', Payload: b64(huge) }) },
    { name: 'invalid UTF-8 in the record', key: loopId, value: invalidUtf8 },
    { name: 'payload not UTF-8', key: loopId, value: json({ Payload: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]).toString('base64') }) },
    { name: 'payload not JSON', key: loopId, value: json({ Payload: b64('iteration=1') }) },
    { name: 'empty value', key: null, value: Buffer.alloc(0) },
    { name: 'payload of the wrong type for its kind', key: loopId, value: json({ Payload: b64('{"iteration":"three"}') }) },
    { name: 'payload not an object for its kind', key: loopId, value: json({ Kind: 'ModelCalled', Payload: b64('[1,2,3]') }) },
    { name: 'cost not a number', key: loopId, value: json({ Kind: 'BudgetCharged', Payload: b64('{"action_type":"model","usd":"0.01"}') }) },
  ];
}

// ---------------------------------------------------------------- files

/**
 * Writes record values as JSONL, one per line in the given order: the input
 * `agentledger verify` reads. Returns the number of lines. A value holding a
 * newline cannot be a line and is refused.
 */
export async function writeTrafficJsonl(path: string, records: Iterable<{ readonly value: Buffer }>): Promise<number> {
  const out = createWriteStream(path);
  const failed = new Promise<never>((_, reject) => out.once('error', reject));
  failed.catch(() => undefined);
  let lines = 0;
  try {
    for (const r of records) {
      if (r.value.includes(0x0a)) throw new RangeError(`record ${lines + 1} holds a newline: it cannot be a JSONL line`);
      out.write(r.value);
      const more = out.write('\n');
      lines++;
      if (!more) await Promise.race([once(out, 'drain'), failed]);
    }
  } finally {
    out.end();
  }
  await Promise.race([once(out, 'finish'), failed]);
  return lines;
}
