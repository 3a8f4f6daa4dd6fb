/**
 * No record can stop ingest (issue 9). Each record that once stalled the
 * consumer for good (a lone surrogate, a 300,000-character LoopID, an
 * exponent of nine digits, a batch of 2000 long loop ids) sits between honest
 * envelopes; `ingest --idle-exit-ms` must store every honest envelope,
 * dead-letter the hostile ones with a reason, and exit 0 by itself. Then the
 * safety net behind the decoders, against the real server: a row ClickHouse
 * refuses (and a read-back query it refuses) is traced to its record, which is
 * dead-lettered with its headers while the rest lands; and a failure no retry
 * can fix (a wrong password) ends ingest with exit 1 instead of a silent stall.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Partitioners, type IHeaders, type Kafka } from 'kafkajs';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { generateTraffic } from '../../src/demo/traffic/index.js';
import { envelopeJson, linkHash } from '../../src/demo/traffic/envelope.js';
import { createLogger } from '../../src/observability/logger.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { EnvelopeStream } from '../../src/pipeline/envelopes.js';
import type { SourceRecord, StreamBatch } from '../../src/pipeline/stream.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { EnvelopeStore } from '../../src/store/envelope-store.js';
import { INSERT_FORMATS, type InsertFormat } from '../../src/store/insert-format.js';
import { migrate } from '../../src/migrate/migrate.js';
import type { EnvelopeRow } from '../../src/rows/rows.js';
import { kafkaGroup } from '../../src/kafka/group.js';
import { ingestEdges } from '../../src/ingest/edges.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { createKafka, ensureTopics, TOPIC_CONFIG } from '../../src/kafka/client.js';
import { FAULT_THREADS, testContext, type TestContext } from '../support/context.js';
import { query } from '../support/clickhouse.js';
import { Hold } from '../support/hold.js';
import { ingestWhile } from '../support/in-process-ingest.js';
import { BIN, runCli, sleep } from '../support/processes.js';

const log = createLogger('error');
const contexts: TestContext[] = [];
after(async () => {
  for (const ctx of contexts) await ctx.cleanup();
});

async function context(name: string, overrides: Record<string, string> = {}): Promise<TestContext> {
  const ctx = await testContext(name, { ...FAULT_THREADS, ...overrides });
  contexts.push(ctx);
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  return ctx;
}

const TIME = '2026-11-30T10:00:00Z';
const loopIdOf = (value: string): string => (JSON.parse(value) as { LoopID: string }).LoopID;
const ZERO = Buffer.alloc(32);

/** A loop's first envelope, hashed like the runtime does: honest unless its fields are not. */
function first(loopId: string, kind = 'IterationStarted', payloadText = '{"iteration":1}'): string {
  const payload = Buffer.from(payloadText, 'utf8');
  return envelopeJson(loopId, 1, TIME, kind, payload, linkHash(ZERO, loopId, 1, TIME, kind, payload));
}

/** The same, with strings written by JSON.stringify (Go would never write a lone surrogate; an attacker would). */
function firstRaw(loopId: string, kind: string, payloadText = '{"iteration":1}'): string {
  const payload = Buffer.from(payloadText, 'utf8');
  const hash = linkHash(ZERO, loopId, 1, TIME, kind, payload);
  return JSON.stringify({ LoopID: loopId, Seq: 1, Time: TIME, Kind: kind, Payload: payload.toString('base64'), Hash: [...hash] });
}

/**
 * Each record that stalled ingest for good before issue 9, and what its dead
 * letter's reason must name; none for the two that are exact after all: a
 * JSON number of absurd exponent is still a number, and 1e-600000000 USD is 0
 * picodollars rounded half to even, so those envelopes verify and are stored.
 */
function hostileRecords(): { name: string; value: string; reason?: RegExp }[] {
  return [
    { name: 'lone surrogate in LoopID', value: firstRaw('loop\ud800x', 'IterationStarted'), reason: /surrogate/i },
    { name: 'lone surrogate in Kind', value: firstRaw('loop-kind', 'Iteration\udc00Started'), reason: /surrogate/i },
    { name: '300,000-character LoopID', value: first(`long-${'x'.repeat(300_000)}`), reason: /LoopID/ },
    { name: 'usd 1e-600000000', value: first('loop-usd-1', 'BudgetCharged', '{"action_type":"model","usd":1e-600000000}') },
    { name: 'usd 0e-999999999999', value: first('loop-usd-2', 'BudgetCharged', '{"action_type":"model","usd":0e-999999999999}') },
  ];
}

/** 2000 honest loops whose 140-character ids fill one batch's read-back queries past max_query_size (256 KiB). */
function longIdLoops(): string[] {
  return Array.from({ length: 2000 }, (_, i) => first(`long-id-${String(i).padStart(4, '0')}-${'y'.repeat(127)}`));
}

interface DeadLetterSeen {
  readonly value: string;
  readonly headers: Record<string, string>;
}

async function readDeadLetters(kafka: Kafka, topic: string, group: string, expected: number): Promise<DeadLetterSeen[]> {
  const consumer = kafka.consumer({ groupId: group, maxBytes: 64 * 1024 * 1024 });
  const seen: DeadLetterSeen[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: ({ message }) => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(v);
        seen.push({ value: message.value?.toString('utf8') ?? '', headers });
        return Promise.resolve();
      },
    });
    // More than expected would show as a failed count below: wait a little past it.
    for (let i = 0; i < 300 && seen.length < expected; i++) await sleep(100);
    await sleep(500);
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

test('hostile records are dead-lettered, honest ones stored, and ingest exits 0 by itself; verify reports the same corpus', { timeout: 300_000 }, async () => {
  const ctx = await context('poison_cli');
  const kafka = createKafka(ctx.config.kafka, log);
  const { envelopes: topic, deadLetter } = ctx.config.kafka.topics;
  await ensureTopics(kafka, [
    { topic, numPartitions: 2, configEntries: TOPIC_CONFIG },
    { topic: deadLetter, numPartitions: 1, configEntries: TOPIC_CONFIG },
  ]);
  const traffic = generateTraffic({ loops: 20, envelopesPerLoop: 10, seed: 17, payloadBytes: 200 });
  const honest = [...traffic.records].map((r) => r.value.toString('utf8'));
  const long = longIdLoops();
  const hostile = hostileRecords();
  const refused = hostile.filter((h) => h.reason !== undefined);

  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const half = Math.floor(honest.length / 2);
  await producer.send({ topic, acks: -1, messages: honest.slice(0, half).map((value) => ({ key: loopIdOf(value), value })) });
  // Every hostile record on partition 0, the long ids in one send (one batch) on partition 1.
  await producer.send({ topic, acks: -1, messages: hostile.map((h) => ({ key: 'hostile', value: h.value, partition: 0 })) });
  await producer.send({ topic, acks: -1, messages: long.map((value) => ({ key: loopIdOf(value), value, partition: 1 })) });
  await producer.send({ topic, acks: -1, messages: honest.slice(half).map((value) => ({ key: loopIdOf(value), value })) });
  await producer.disconnect();

  const run = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], ctx.env);
  assert.equal(await run.exited, 0, run.stderr());

  const verdicts = await query<{ verdict: string; n: string }>(ctx, 'SELECT verdict, count() AS n FROM envelopes FINAL GROUP BY verdict ORDER BY verdict');
  assert.deepEqual(
    verdicts.map((v) => [v.verdict, Number(v.n)]),
    [
      ['malformed', refused.length],
      ['ok', traffic.expected.envelopes + long.length + hostile.length - refused.length],
    ],
  );

  const letters = await readDeadLetters(kafka, deadLetter, `${ctx.config.kafka.groupId}.dlq`, refused.length);
  assert.equal(letters.length, refused.length, 'one dead letter per refused record');
  for (const h of refused) {
    const letter = letters.find((l) => l.value === h.value);
    assert.ok(letter, `${h.name}: dead-lettered byte for byte`);
    assert.match(letter.headers['x-agentledger-reason'] ?? '', h.reason!, `${h.name}: reason`);
  }

  // The same corpus, offline: every hostile line reported as malformed, the rest verified, no crash.
  const dir = await mkdtemp(join(tmpdir(), 'agentledger-poison-'));
  const file = join(dir, 'corpus.jsonl');
  await writeFile(file, [...honest.slice(0, half), ...hostile.map((h) => h.value), ...long, ...honest.slice(half)].join('\n') + '\n');
  const verify = spawnSync(process.execPath, [BIN, 'verify', file, '--json'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(verify.status, 1, verify.stderr);
  const report = JSON.parse(verify.stdout) as { ok: number; violations: { verdict: string }[] };
  assert.equal(report.ok, traffic.expected.envelopes + long.length + hostile.length - refused.length);
  assert.deepEqual(
    report.violations.map((v) => v.verdict),
    refused.map(() => 'malformed'),
  );
});

/**
 * The envelope pipeline with two holes planted in it, standing for a decoder
 * gap nobody has found yet: rows of Kind "Hole" get an n1 slot (depth's) that is not a
 * number (the real server refuses the insert's TabSeparated text; in RowBinary,
 * which the server cannot refuse for its values, agentledger's encoder refuses it
 * with the same kind of error before sending: src/store/rowbinary.ts), and a batch holding a
 * record of Kind "QueryHole" sends the server a query it refuses (Code 62),
 * as an over-long read-back once did.
 */
class HoledStream extends EnvelopeStream {
  constructor(
    topic: string,
    store: EnvelopeStore,
    private readonly ch: ReturnType<typeof createClickHouse>,
  ) {
    super(topic, store, { seqEncoding: 'binary', maxPayloadBytes: 1024 * 1024 });
  }

  override async process(records: readonly SourceRecord[]): Promise<StreamBatch<EnvelopeRow>> {
    if (records.some((r) => r.value?.includes('"Kind":"QueryHole"'))) await this.ch.query({ query: 'SELECT (' });
    const batch = await super.process(records);
    for (const row of batch.rows) if (row.kind === 'Hole') row.n1 = '1 is not a number';
    return batch;
  }
}

/** A loop's honest chain of `n` envelopes, Kind per seq from `kinds` (default IterationStarted). */
function chain(loopId: string, n: number, kinds: Record<number, string> = {}): string[] {
  const out: string[] = [];
  let prev: Buffer = ZERO;
  for (let seq = 1; seq <= n; seq++) {
    const kind = kinds[seq] ?? 'IterationStarted';
    const payload = Buffer.from(`{"iteration":${seq}}`, 'utf8');
    const time = `2026-11-30T10:00:${String(seq).padStart(2, '0')}Z`;
    const hash = linkHash(prev, loopId, seq, time, kind, payload);
    out.push(envelopeJson(loopId, seq, time, kind, payload, hash));
    prev = hash;
  }
  return out;
}

/** What a Hole row's malformed detail says, per insert format: the server's refusal, or the encoder's. */
const HOLE_REFUSAL: Readonly<Record<InsertFormat, RegExp>> = {
  TabSeparated: /refused by ClickHouse: .*Code: (6|27|72)\b/,
  RowBinary: /refused by ClickHouse: RowBinary: column n1 is not an integer: "1 is not a number"/,
};

for (const format of INSERT_FORMATS)
test(`a row or a query ClickHouse refuses is traced to its record: dead-lettered with its headers, the rest stored (${format})`, { timeout: 180_000 }, async () => {
  const ctx = await context(`poison_hole_${format}`, { AGENTLEDGER_BATCH_MAX_WAIT_MS: '200' });
  const kafka = createKafka(ctx.config.kafka, log);
  const { envelopes: topic, deadLetter } = ctx.config.kafka.topics;
  await ensureTopics(kafka, [
    { topic, numPartitions: 1, configEntries: TOPIC_CONFIG },
    { topic: deadLetter, numPartitions: 1, configEntries: TOPIC_CONFIG },
  ]);
  const a = chain('loop-a', 5, { 3: 'Hole' });
  const b = chain('loop-b', 3, { 2: 'QueryHole' });
  const c = chain('loop-c', 4);
  const headers = (i: number): IHeaders => ({ 'trace-id': `trace-${i}` });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const values = [...a, ...b, ...c];
  await producer.send({ topic, acks: -1, messages: values.map((value, i) => ({ key: loopIdOf(value), value, headers: headers(i) })) });
  await producer.disconnect();

  const clickhouse = createClickHouse(ctx.config.clickhouse);
  const metrics = createMetrics();
  const ingestor = new Ingestor({ edges: ingestEdges(kafkaGroup(kafka, ctx.config), clickhouse), config: ctx.config, log, metrics }, [new HoledStream(topic, new EnvelopeStore(clickhouse, undefined, format), clickhouse)]);
  let fatal: Error | undefined;
  ingestor.onFatal = (err) => (fatal = err);
  await ingestor.start();
  try {
    for (let i = 0; i < 600 && !(await ingestor.caughtUp()); i++) await sleep(100);
  } finally {
    assert.equal(await ingestor.stop(), true);
    await clickhouse.close();
  }
  assert.equal(fatal, undefined, 'nothing fatal');

  const rows = await query<{ loop_id: string; seq: number; verdict: string; detail: string }>(
    ctx,
    'SELECT loop_id, seq, verdict, detail FROM envelopes FINAL ORDER BY kafka_offset',
  );
  assert.deepEqual(
    rows.map((r) => `${r.loop_id}/${r.seq}/${r.verdict}`),
    [
      'loop-a/1/ok',
      'loop-a/2/ok',
      // The refused row: stored as its record's malformed row (loop id from the key, seq unknown).
      'loop-a/0/malformed',
      'loop-a/4/ok',
      'loop-a/5/ok',
      'loop-b/1/ok',
      'loop-b/0/malformed',
      // Judged after its predecessor was set aside: a gap, as any member judging these records would say.
      'loop-b/3/gap',
      'loop-c/1/ok',
      'loop-c/2/ok',
      'loop-c/3/ok',
      'loop-c/4/ok',
    ],
  );
  const malformed = rows.filter((r) => r.verdict === 'malformed');
  assert.match(malformed[0]!.detail, HOLE_REFUSAL[format]);
  assert.match(malformed[1]!.detail, /refused by ClickHouse: .*Code: 62/);

  const letters = await readDeadLetters(kafka, deadLetter, `${ctx.config.kafka.groupId}.dlq`, 2);
  assert.deepEqual(
    letters.map((l) => [l.value, l.headers['trace-id'], l.headers['x-source-offset']]).sort((x, y) => Number(x[2]) - Number(y[2])),
    [
      [a[2], 'trace-2', '2'],
      [b[1], 'trace-6', '6'],
    ],
  );
  for (const l of letters) assert.match(l.headers['x-agentledger-reason'] ?? '', /^refused by ClickHouse: /);
  const refused = await metrics.registry.getSingleMetricAsString('agentledger_refused_records_total');
  assert.match(refused, /agentledger_refused_records_total\{topic="[^"]+"\} 2/);
});

/**
 * An EnvelopeStore whose first insert with a Hole row waits until the
 * ingestor has judged a later batch (test/support/hold.ts): the batches judged while a
 * flush is in flight, on a state that took the refused row as stored.
 */
class SlowStore extends EnvelopeStore {
  readonly hold = new Hold();
  private held = false;

  override async insert(rows: readonly EnvelopeRow[], queryId?: string): Promise<void> {
    if (!this.held && rows.some((r) => r.kind === 'Hole')) {
      this.held = true;
      await this.hold.untilJudged();
    }
    return super.insert(rows, queryId);
  }
}

/** HoledStream that tells its SlowStore when it judges a batch. */
class SlowHoledStream extends HoledStream {
  declare readonly store: SlowStore;

  constructor(topic: string, store: SlowStore, ch: ReturnType<typeof createClickHouse>) {
    super(topic, store, ch);
  }

  override async process(records: readonly SourceRecord[]): Promise<StreamBatch<EnvelopeRow>> {
    this.store.hold.judging();
    return super.process(records);
  }
}

for (const format of INSERT_FORMATS)
test(`rows refused while the next batches were judged: those batches are judged again on the state read back, every record stored once (${format})`, { timeout: 180_000 }, async () => {
  const ctx = await context(`poison_overlap_${format}`, { AGENTLEDGER_BATCH_MAX_WAIT_MS: '200' });
  const kafka = createKafka(ctx.config.kafka, log);
  const { envelopes: topic, deadLetter } = ctx.config.kafka.topics;
  await ensureTopics(kafka, [
    { topic, numPartitions: 1, configEntries: TOPIC_CONFIG },
    { topic: deadLetter, numPartitions: 1, configEntries: TOPIC_CONFIG },
  ]);
  const a = chain('loop-a', 6, { 3: 'Hole' });
  const c = chain('loop-c', 3);
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const send = (values: string[]) => producer.send({ topic, acks: -1, messages: values.map((value) => ({ key: loopIdOf(value), value })) });
  await send(a.slice(0, 3));

  const clickhouse = createClickHouse(ctx.config.clickhouse);
  const stream = new SlowHoledStream(topic, new SlowStore(clickhouse, undefined, format), clickhouse);
  // The rest arrives once the first flush (with the Hole) is held in flight.
  const { fatal } = await ingestWhile({ kafka, clickhouse, config: ctx.config, log }, stream, async () => {
    await stream.store.hold.held();
    await send([...a.slice(3), ...c]);
    await producer.disconnect();
  }).finally(() => clickhouse.close());
  assert.equal(fatal, undefined, 'nothing fatal');
  assert.ok(stream.store.hold.judgedDuringHold, 'the next batch was judged while the first flush was in flight');

  // Every row once (no FINAL: a batch dropped and judged again must not have been stored twice).
  const rows = await query<{ loop_id: string; seq: number; verdict: string }>(ctx, 'SELECT loop_id, seq, verdict FROM envelopes ORDER BY kafka_offset');
  assert.deepEqual(
    rows.map((r) => `${r.loop_id}/${r.seq}/${r.verdict}`),
    [
      'loop-a/1/ok',
      'loop-a/2/ok',
      'loop-a/0/malformed',
      // Judged again once the Hole was set aside: what any member judging these records says.
      'loop-a/4/gap',
      'loop-a/5/ok',
      'loop-a/6/ok',
      'loop-c/1/ok',
      'loop-c/2/ok',
      'loop-c/3/ok',
    ],
  );
});

test('a failure no retry can fix (a wrong ClickHouse password) ends ingest with exit 1, not a silent stall', { timeout: 120_000 }, async () => {
  const ctx = await context('poison_fatal');
  const kafka = createKafka(ctx.config.kafka, log);
  const topic = ctx.config.kafka.topics.envelopes;
  await ensureTopics(kafka, [{ topic, numPartitions: 1, configEntries: TOPIC_CONFIG }]);
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: chain('loop-f', 2).map((value) => ({ key: 'loop-f', value })) });
  await producer.disconnect();

  const run = runCli(['ingest', '--no-migrate'], { ...ctx.env, AGENTLEDGER_CLICKHOUSE_PASSWORD: 'not-the-password', AGENTLEDGER_LOG_LEVEL: 'info' });
  const code = await run.exited;
  assert.equal(code, 1, run.stderr());
  assert.match(run.stderr(), /retrying cannot fix/);
  assert.match(run.stderr(), /password|authenticat/i);
  assert.doesNotMatch(run.stderr(), /retrying","attempt":2/, 'not retried');
});
