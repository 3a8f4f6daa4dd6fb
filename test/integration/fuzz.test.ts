/**
 * Hostile input through the code ingest runs (issue 9): random and mutated
 * records — honest envelopes from the demo generator and honest craze records
 * from the sample journals, then random JSON in any field, numbers with huge
 * exponents, lone surrogates, control characters, ids around the 1 KiB cap,
 * deep nesting, duplicate members, truncated and random bytes, odd Kafka keys
 * — go through the envelope and craze streams and the REAL ClickHouse stores
 * (process -> insert -> derive -> durable, batch after batch, so read-back
 * queries see what earlier batches stored). Every record must give exactly
 * one row (a malformed row with its dead letter included) or be a counted
 * redelivery; nothing may throw, no insert or query may fail, and the tables
 * must hold every row inserted.
 *
 * The seed is printed; AGENTLEDGER_FUZZ_SEED=<seed> replays a run (on a fresh
 * database, as every run is). AGENTLEDGER_FUZZ_RUNS sets the batches per
 * stream (default 150, cut short after 8 s per stream on a slow machine: the
 * batches done pass, and are printed; no time limit when the runs are set).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ClickHouseClient } from '@clickhouse/client';
import fc from 'fast-check';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { DEFAULT_DECODE_OPTIONS } from '../../src/decode/envelope.js';
import { MAX_ID_BYTES } from '../../src/decode/result.js';
import { generateTraffic } from '../../src/demo/traffic/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { CrazeStream } from '../../src/pipeline/craze.js';
import { EnvelopeStream } from '../../src/pipeline/envelopes.js';
import type { SourceRecord, Stream, StreamBatch } from '../../src/pipeline/stream.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { CrazeStore } from '../../src/store/craze-store.js';
import { EnvelopeStore } from '../../src/store/envelope-store.js';
import { migrate } from '../../src/migrate/migrate.js';
import type { KafkaColumns } from '../../src/rows/rows.js';
import { completeLines, crazeRecordValue, JournalParser } from '../../src/sources/craze-journal.js';
import { FAULT_THREADS, testContext, type TestContext } from '../support/context.js';

const SEED = process.env.AGENTLEDGER_FUZZ_SEED ? Number(process.env.AGENTLEDGER_FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const RUNS = process.env.AGENTLEDGER_FUZZ_RUNS ? Number(process.env.AGENTLEDGER_FUZZ_RUNS) : 150;
/** Per stream, for CI's default run count (a safety net for a slow machine, not a measurement); none when runs are asked for. */
const TIME_LIMIT = process.env.AGENTLEDGER_FUZZ_RUNS ? [] : [fc.interruptAfterTimeLimit(8_000)];
if (!Number.isSafeInteger(SEED) || !Number.isSafeInteger(RUNS) || RUNS < 1) {
  throw new Error('AGENTLEDGER_FUZZ_SEED must be an integer and AGENTLEDGER_FUZZ_RUNS a positive integer');
}
const BATCH_MAX = 24;
/** The ingested_at of every row the fuzz inserts (ingest's flush sets one per insert; the pipeline leaves it unset). */
const STAMP = '2026-12-02 12:00:00';

// --- honest records to start from ------------------------------------------------

interface Honest {
  readonly key: string;
  readonly value: string;
}

function honestEnvelopes(): Honest[] {
  const traffic = generateTraffic({ loops: 30, envelopesPerLoop: [2, 10], seed: 9, payloadBytes: 256, violations: { fork: 1, mismatch: 1 } });
  return [...traffic.records].map((r) => ({ key: r.key, value: r.value.toString('utf8') }));
}

function honestCrazeRecords(): Honest[] {
  const root = fileURLToPath(new URL('../../../test/fixtures/craze/journal/', import.meta.url));
  const out: Honest[] = [];
  for (const dir of readdirSync(root).sort()) {
    for (const name of readdirSync(join(root, dir)).sort()) {
      const parser = new JournalParser();
      for (const e of completeLines(readFileSync(join(root, dir, name), 'utf8')).lines.flatMap((l) => parser.line(l))) {
        out.push({ key: parser.sessionId!, value: crazeRecordValue(parser.sessionId!, parser.meta!, e, name) });
      }
    }
  }
  return out;
}

// --- what a hostile or careless producer writes ----------------------------------

/** A JSON string of about `bytes` UTF-8 bytes of one character (multibyte, escaped and quote ones included). */
const longString = fc
  .tuple(fc.integer({ min: MAX_ID_BYTES - 8, max: MAX_ID_BYTES + 4096 }), fc.constantFrom('a', 'é', '€', '😀', '\u0000', '"', "'", '\\'))
  .map(([bytes, c]) => c.repeat(Math.max(1, Math.round(bytes / Buffer.byteLength(c)))));

/** Ids a producer might use: around the cap, or full of what breaks quoting. */
const hostileId = fc.oneof(
  longString,
  fc.constantFrom('', ' ', "'); DROP TABLE envelopes; --", 'a\\', 'a\u0000b', '\u001b[31mred', 'line\r\nbreak', '😀', 'é'.repeat(512), 'x'.repeat(MAX_ID_BYTES)),
  fc.string({ unit: 'binary', maxLength: 30 }),
);

/** Raw JSON texts to put where a value goes. */
const hostileJson: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.constantFrom(
    'null', 'true', '[]', '{}', '""', '-0', '0.5', '-1', '0', '1e308', '1e400', '-1e400', '1e-400', '1e-600000000', '0e-999999999999',
    '9007199254740993', '18446744073709551616', '-9223372036854775809', '9223372036854775807', '1E+2', '5.0', '-5e-324',
  ),
  fc.tuple(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.integer({ min: -2_000_000_000, max: 2_000_000_000 })).map(([m, e]) => `${m}e${e}`),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.constantFrom('"\\ud800"', '"x\\udc00y"', '"\\ud83d\\ude00"', '"\\u0000\\u001b[2J\\r\\n"', '"\\\\ud800"'),
  hostileId.map((s) => JSON.stringify(s)),
  fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 1, max: 50 }) }, { weight: 1, arbitrary: fc.integer({ min: 50_000, max: 150_000 }) }).map((d) => '['.repeat(d) + ']'.repeat(d)),
);

type Mutation =
  | { readonly op: 'keep' }
  | { readonly op: 'set'; readonly path: number[]; readonly raw: string }
  | { readonly op: 'add'; readonly path: number[]; readonly name: string; readonly raw: string }
  | { readonly op: 'delete'; readonly path: number[] }
  | { readonly op: 'duplicate'; readonly member: number; readonly raw: string }
  | { readonly op: 'id'; readonly which: number; readonly id: string }
  | { readonly op: 'payload'; readonly inner: Mutation }
  | { readonly op: 'truncate'; readonly at: number }
  | { readonly op: 'splice'; readonly at: number; readonly bytes: Uint8Array }
  | { readonly op: 'bytes'; readonly bytes: Uint8Array }
  | { readonly op: 'text'; readonly text: string };

const path = fc.array(fc.nat(), { maxLength: 6 });
/** Valid UTF-8 of any code points (astral ones included): text that is not JSON, or breaks it. */
const unicodeBytes = fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }).map((s) => new Uint8Array(Buffer.from(s, 'utf8')));
const memberName = fc.oneof(fc.constantFrom('LoopID', 'Seq', 'Kind', 'Hash', 'Payload', 'usd', 'usage', 'seq', 'sessionId', 'type', 'state', 'at', '__proto__'), fc.string());
const jsonMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('set' as const), path, raw: hostileJson }),
  fc.record({ op: fc.constant('add' as const), path, name: memberName, raw: hostileJson }),
  fc.record({ op: fc.constant('delete' as const), path }),
);
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ op: 'keep' as const }) },
  { weight: 6, arbitrary: jsonMutation },
  { weight: 3, arbitrary: jsonMutation.map((inner) => ({ op: 'payload' as const, inner })) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('duplicate' as const), member: fc.nat(), raw: hostileJson }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('id' as const), which: fc.nat(), id: hostileId }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('splice' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('splice' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), bytes: unicodeBytes }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('bytes' as const), bytes: fc.uint8Array({ maxLength: 300 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('text' as const), text: fc.string({ unit: 'binary', maxLength: 40 }) }) },
);

type KeyChoice = 'id' | 'null' | 'other';
const recordSpec = fc.record({
  source: fc.nat(),
  mutation,
  key: fc.constantFrom<KeyChoice>('id', 'id', 'id', 'null', 'other'),
  otherKey: fc.uint8Array({ maxLength: 80 }),
});
const batchSpec = fc.record({
  records: fc.array(recordSpec, { minLength: 1, maxLength: BATCH_MAX }),
  /** Records of the batch sent again later in it (redeliveries). */
  again: fc.array(fc.nat(), { maxLength: 4 }),
  partition: fc.nat(2),
});
type BatchSpec = typeof batchSpec extends fc.Arbitrary<infer T> ? T : never;

// --- applying a mutation -----------------------------------------------------------

const SENTINEL = '\u0000fuzz-sentinel\u0000';

/** The container and key a path of choices leads to (undefined: the root itself). */
function locate(root: unknown, choices: readonly number[]): { parent: Record<string, unknown> | unknown[]; key: string | number } | undefined {
  let at: { parent: Record<string, unknown> | unknown[]; key: string | number } | undefined;
  let node = root;
  for (const c of choices) {
    if (Array.isArray(node) && node.length > 0) at = { parent: node, key: c % node.length };
    else if (typeof node === 'object' && node !== null && Object.keys(node).length > 0) {
      const keys = Object.keys(node);
      at = { parent: node as Record<string, unknown>, key: keys[c % keys.length]! };
    } else break;
    node = (at.parent as Record<string | number, unknown>)[at.key];
  }
  return at;
}

/** JSON text of `value` with the sentinel string replaced by raw JSON text. */
const render = (value: unknown, raw: string): string => JSON.stringify(value).replace(JSON.stringify(SENTINEL), () => raw);

function mutateJson(text: string, m: Mutation, idFields: readonly string[]): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  switch (m.op) {
    case 'set': {
      const at = locate(value, m.path);
      if (!at) return m.raw;
      (at.parent as Record<string | number, unknown>)[at.key] = SENTINEL;
      return render(value, m.raw);
    }
    case 'add': {
      const at = locate(value, m.path);
      const target = at ? (at.parent as Record<string | number, unknown>)[at.key] : value;
      if (typeof target !== 'object' || target === null || Array.isArray(target)) return undefined;
      Object.defineProperty(target, m.name, { value: SENTINEL, enumerable: true, configurable: true, writable: true });
      return render(value, m.raw);
    }
    case 'delete': {
      const at = locate(value, m.path);
      if (!at) return undefined;
      if (Array.isArray(at.parent)) at.parent.splice(at.key as number, 1);
      else delete at.parent[at.key];
      return JSON.stringify(value);
    }
    case 'duplicate': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
      const keys = Object.keys(value);
      if (keys.length === 0) return undefined;
      // A member repeated with another value, before or after the original: JSON.parse keeps the last.
      const member = `${JSON.stringify(keys[m.member % keys.length])}:${m.raw}`;
      return m.member % 2 === 0 ? text.replace('{', () => `{${member},`) : text.replace(/\}\s*$/, () => `,${member}}`);
    }
    case 'id': {
      if (typeof value !== 'object' || value === null) return undefined;
      (value as Record<string, unknown>)[idFields[m.which % idFields.length]!] = m.id;
      return JSON.stringify(value);
    }
    default:
      return undefined;
  }
}

/** An envelope's payload (base64 or JSON text) mutated in place, re-encoded as it came. */
function mutatePayload(text: string, inner: Mutation): string | undefined {
  let envelope: Record<string, unknown>;
  try {
    envelope = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const payload = envelope.Payload;
  if (typeof payload !== 'string') return undefined;
  const asText = payload.startsWith('{');
  const mutated = mutateJson(asText ? payload : Buffer.from(payload, 'base64').toString('utf8'), inner, ['action_id']);
  if (mutated === undefined) return undefined;
  envelope.Payload = asText ? mutated : Buffer.from(mutated, 'utf8').toString('base64');
  return JSON.stringify(envelope);
}

function mutate(value: string, m: Mutation, idFields: readonly string[]): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  switch (m.op) {
    case 'keep':
      return bytes;
    case 'truncate':
      return bytes.subarray(0, Math.floor(bytes.length * m.at));
    case 'splice': {
      const at = Math.floor(bytes.length * m.at);
      return Buffer.concat([bytes.subarray(0, at), m.bytes, bytes.subarray(at)]);
    }
    case 'bytes':
      return Buffer.from(m.bytes);
    case 'text':
      return Buffer.from(m.text, 'utf8');
    case 'payload': {
      const text = mutatePayload(value, m.inner);
      return text === undefined ? bytes : Buffer.from(text, 'utf8');
    }
    default: {
      const text = mutateJson(value, m, idFields);
      return text === undefined ? bytes : Buffer.from(text, 'utf8');
    }
  }
}

// --- driving a stream ----------------------------------------------------------------

/** Records of one partition, in offset order, from a batch spec. */
function materialize(spec: BatchSpec, sources: readonly Honest[], topic: string, next: number[], idFields: readonly string[]): SourceRecord[] {
  const made = spec.records.map((r) => {
    const source = sources[r.source % sources.length]!;
    const key = r.key === 'id' ? Buffer.from(source.key) : r.key === 'null' ? null : Buffer.from(r.otherKey);
    return { key, value: mutate(source.value, r.mutation, idFields) };
  });
  for (const i of spec.again) made.push(made[i % made.length]!);
  return made.map(({ key, value }) => ({
    topic,
    partition: spec.partition,
    offset: String(next[spec.partition]!++),
    timestamp: '1764504000000',
    key,
    value,
  }));
}

/** One record, one result: a row per record (malformed ones with their dead letter), or a counted redelivery. */
function assertAccounted(records: readonly SourceRecord[], out: StreamBatch<KafkaColumns & { verdict: string }>): void {
  const offsets = new Set(records.map((r) => r.offset));
  const rowAt = new Map<string, string>();
  for (const row of out.rows) {
    assert.ok(offsets.has(row.kafka_offset), `a row for offset ${row.kafka_offset}, which is no input record`);
    assert.ok(!rowAt.has(row.kafka_offset), `two rows for offset ${row.kafka_offset}`);
    rowAt.set(row.kafka_offset, row.verdict);
  }
  assert.equal(out.rows.length + (out.verdicts.get('duplicate') ?? 0), records.length, 'rows + redeliveries = records');
  const dead = new Set(out.deadLetters.map((d) => d.record.offset));
  for (const d of out.deadLetters) {
    assert.ok(rowAt.has(d.record.offset), `dead letter at offset ${d.record.offset} has no row`);
    assert.notEqual(d.reason, '');
  }
  for (const [offset, verdict] of rowAt) if (verdict === 'malformed') assert.ok(dead.has(offset), `malformed row at ${offset} has no dead letter`);
}

interface Tally {
  runs: number;
  records: number;
  rows: number;
  malformed: number;
}

async function fuzzStream<Row extends KafkaColumns & { verdict: string }>(
  stream: Stream<Row>,
  sources: readonly Honest[],
  idFields: readonly string[],
): Promise<Tally> {
  const tally: Tally = { runs: 0, records: 0, rows: 0, malformed: 0 };
  const next = [0, 0, 0];
  let inFlight: Promise<unknown> = Promise.resolve();
  const property = fc.asyncProperty(batchSpec, async (spec) => {
    const run = (async () => {
      const records = materialize(spec, sources, stream.topic, next, idFields);
      const out = await stream.process(records);
      assertAccounted(records, out);
      // The flush's stamp, as ingest sets it right before its insert.
      for (const row of out.rows) row.ingested_at = STAMP;
      await stream.store.insert(out.rows);
      await stream.store.derive(out.rows);
      stream.durable();
      tally.runs++;
      tally.records += records.length;
      tally.rows += out.rows.length;
      tally.malformed += out.verdicts.get('malformed') ?? 0;
    })();
    inFlight = run.catch(() => undefined);
    await run;
  });
  await fc.assert(property, { seed: SEED, numRuns: RUNS, endOnFailure: true, plugins: TIME_LIMIT });
  // A run the time limit interrupted may still be inserting: wait, so the table counts are final.
  await inFlight;
  return tally;
}

async function count(ch: ClickHouseClient, table: string): Promise<number> {
  const [row] = await ch.query({ query: `SELECT count() AS n FROM ${table}`, format: 'JSONEachRow' }).then((r) => r.json<{ n: string }>());
  return Number(row?.n ?? 0);
}

let ctx: TestContext;
let ch: ClickHouseClient;
const log = createLogger('warn');

before(async () => {
  console.log(`fuzz seed ${SEED}, ${RUNS} batches per stream (replay: AGENTLEDGER_FUZZ_SEED=${SEED})`);
  ctx = await testContext('fuzz', FAULT_THREADS);
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  ch = createClickHouse(ctx.config.clickhouse);
});

after(async () => {
  await ch?.close();
  await ctx?.cleanup();
});

test('mutated envelope records: one result each, no exception, every insert and derive lands', async () => {
  const stream = new EnvelopeStream('fuzz.envelopes', new EnvelopeStore(ch), { ...DEFAULT_DECODE_OPTIONS, seqEncoding: 'binary' });
  const tally = await fuzzStream(stream, honestEnvelopes(), ['LoopID']);
  console.log(`envelopes: ${tally.runs} batches, ${tally.records} records, ${tally.rows} rows, ${tally.malformed} malformed`);
  assert.ok(tally.runs > 0, 'no batch ran');
  assert.equal(await count(ch, 'envelopes'), tally.rows, 'every row inserted is stored');
});

test('mutated craze records: one result each, no exception, every insert lands', async () => {
  const stream = new CrazeStream('fuzz.craze', new CrazeStore(ch));
  const tally = await fuzzStream(stream, honestCrazeRecords(), ['sessionId', 'incarnation']);
  console.log(`craze: ${tally.runs} batches, ${tally.records} records, ${tally.rows} rows, ${tally.malformed} malformed`);
  assert.ok(tally.runs > 0, 'no batch ran');
  assert.equal(await count(ch, 'craze_events'), tally.rows, 'every row inserted is stored');
});
