/**
 * The whole ingest loop (src/ingest/ingestor.ts) without services: Ingestors
 * over a fake consumer group (test/support/fake-group.ts) and one in-memory
 * envelopes table whose inserts can fail before or after their rows land.
 * The records are a Go-generated chain with planted forks and a few records
 * that are not envelopes; each loop stays in one partition. Every test
 * compares the table with a one-by-one reference: each partition's records
 * judged alone, in order, each stored before the next is judged.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseConfig, type Config } from '../../../src/config/index.js';
import { DEFAULT_DECODE_OPTIONS } from '../../../src/decode/envelope.js';
import { Ingestor } from '../../../src/ingest/ingestor.js';
import { CoordinatorLost } from '../../../src/kafka/errors.js';
import { AgentledgerError } from '../../../src/errors/errors.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { ChainState, EnvelopeStream, processEnvelopeBatch } from '../../../src/pipeline/envelopes.js';
import type { EnvelopeRow } from '../../../src/rows/rows.js';
import { FakeBroker, type FakeMember, type LogRecord } from '../../support/fake-group.js';
import { MemoryEnvelopeTable } from '../../support/memory-tables.js';

const TOPIC = 'agent.envelopes';
const DIR = fileURLToPath(new URL('../../../../test/fixtures/envelopes/', import.meta.url));
const OPTIONS = { ...DEFAULT_DECODE_OPTIONS, seqEncoding: 'binary' as const };

/** What an insert does: lands; fails before landing; lands, then its answer is lost. */
type Outcome = 'ok' | 'fails' | 'lost';

class FlakyTable extends MemoryEnvelopeTable {
  outcomes: Outcome[] = [];
  inserts = 0;
  /** While set, an insert waits for it before it lands (a slow insert, a flush in flight). */
  gate: Promise<void> | undefined;
  /** Rows the server cannot take, as "partition:offset" (their malformed rows it takes): an insert or a probe holding one is refused for its content. */
  readonly refused = new Set<string>();
  override async insert(rows: readonly EnvelopeRow[]): Promise<void> {
    this.inserts++;
    if (this.gate) await this.gate;
    this.refuse(rows);
    const outcome = this.outcomes.shift() ?? 'ok';
    if (outcome === 'fails') throw new AgentledgerError('transient', 'socket hang up');
    await super.insert(rows);
    if (outcome === 'lost') throw new AgentledgerError('transient', 'socket hang up after the part was written');
  }
  override probe(rows: readonly EnvelopeRow[]): Promise<void> {
    this.refuse(rows);
    return Promise.resolve();
  }
  private refuse(rows: readonly EnvelopeRow[]): void {
    if (rows.some((r) => r.verdict !== 'malformed' && this.refused.has(`${r.kafka_partition}:${r.kafka_offset}`))) throw new AgentledgerError('content', 'Cannot parse input');
  }
}

/** The log: tampered-fork.jsonl's envelopes, each loop in one partition, keyed by LoopID, and every 20th record not an envelope. */
function logOf(): [LogRecord[], LogRecord[]] {
  const lines = readFileSync(`${DIR}tampered-fork.jsonl`, 'utf8').split('\n').filter((l) => l.length > 0);
  const parts: [LogRecord[], LogRecord[]] = [[], []];
  const loops: string[] = [];
  lines.forEach((line, i) => {
    const loopId = (JSON.parse(line) as { LoopID: string }).LoopID;
    if (!loops.includes(loopId)) loops.push(loopId);
    const part = parts[loops.indexOf(loopId) % 2]!;
    if (i % 20 === 7) part.push({ key: Buffer.from(loopId), value: Buffer.from(`not an envelope ${i}`) });
    part.push({ key: Buffer.from(loopId), value: Buffer.from(line) });
  });
  return parts;
}
const LOG = logOf();

/**
 * Each test's time limit: a broken rule that makes a batch retry forever, or
 * wait for a lock it never gets, fails its test instead of hanging the run.
 */
const QUICK = { timeout: 30_000 };
/** The property test's (a few seconds alone, on a busy machine more). */
const SLOW = { timeout: 180_000 };

/**
 * The wait between tries: none, but a turn of the event loop, so that a
 * retry that never ends still lets the test's timeout fire (resolved
 * promises alone would starve the timers).
 */
const yieldTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Every ingestor a test started: stopped after the file, so that a test that timed out leaves no timer running. */
const started = new Set<Ingestor>();
after(() => {
  for (const ingestor of started) void ingestor.stop(false);
});

const row = (r: EnvelopeRow): string => JSON.stringify({ ...r, ingested_at: '' });

/** The one-by-one reference: every record of `log` judged alone, stored before the next. */
async function reference(log: readonly LogRecord[][] = LOG): Promise<string[]> {
  const table = new MemoryEnvelopeTable();
  const state = new ChainState(table);
  for (const [partition, records] of log.entries()) {
    for (const [offset, r] of records.entries()) {
      const out = await processEnvelopeBatch([{ topic: TOPIC, partition, offset: String(offset), timestamp: '1764504000000', key: r.key, value: r.value }], state, OPTIONS);
      await table.insert(out.rows);
      state.flushed();
    }
  }
  return table.rows.map(row).sort();
}
const REFERENCE = await reference();

/** The table's rows; with `strict`, demands each record's row stored once (no insert landed twice). */
function stored(table: MemoryEnvelopeTable, strict: boolean): string[] {
  const byPosition = new Map<string, string>();
  for (const r of table.rows) {
    const at = `${r.kafka_partition}:${r.kafka_offset}`;
    const seen = byPosition.get(at);
    if (seen !== undefined) {
      assert.ok(!strict, `the row of ${at} stored twice`);
      assert.equal(row(r), seen, `two rows of ${at} differ: they would not collapse`);
    }
    byPosition.set(at, row(r));
  }
  return [...byPosition.values()].sort();
}

interface World {
  readonly broker: FakeBroker;
  readonly table: FlakyTable;
  readonly config: Config;
  readonly members: { member: FakeMember; ingestor: Ingestor }[];
}

function world(batch: Partial<Config['batch']> = {}): World {
  const broker = new FakeBroker();
  LOG.forEach((records, partition) => broker.produce(TOPIC, partition, records));
  const base = parseConfig({});
  // Flushed when full or forced: the timer (every half maxWaitMs) finds nothing due.
  const config: Config = { ...base, batch: { ...base.batch, maxRows: 1_000_000, maxWaitMs: 3_600_000, ...batch } };
  return { broker, table: new FlakyTable(), config, members: [] };
}

async function join(w: World, id: string, now?: () => number): Promise<{ member: FakeMember; ingestor: Ingestor }> {
  // With the coordinator watch the Kafka adapter keeps, on the test's clock.
  const member = w.broker.member(id, { silenceMs: w.config.kafka.sessionTimeoutMs, now: now ?? Date.now });
  const ingestor = new Ingestor(
    { edges: member, config: w.config, log: createLogger('error', {}, { write: () => undefined }), metrics: createMetrics(), sleep: yieldTurn, ...(now ? { now } : {}) },
    [new EnvelopeStream(TOPIC, w.table, OPTIONS)],
  );
  ingestor.onFatal = (err) => assert.fail(`fatal: ${err.message}`);
  started.add(ingestor);
  await ingestor.start();
  const m = { member, ingestor };
  w.members.push(m);
  return m;
}

/** Fetches a partition to its end in batches of `size`, as long as the member owns it. */
async function drain(member: FakeMember, partition: number, size: number): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    const { fetched, error } = await member.fetch(TOPIC, partition, size);
    if (error !== undefined) throw error instanceof Error ? error : new Error('a batch failed without an Error');
    if (fetched === 0) return;
  }
}

async function stopAll(w: World): Promise<void> {
  for (const { ingestor } of w.members) await ingestor.stop();
}

test('batches are buffered with nothing committed; the flush stores them with one insert and commits after them', QUICK, async () => {
  const w = world();
  const a = await join(w, 'a');
  w.broker.rebalance([[a.member, { [TOPIC]: [0, 1] }]]);
  await drain(a.member, 0, 7);
  await drain(a.member, 1, 7);
  assert.equal(w.table.rows.length, 0, 'buffered, not stored');
  assert.equal(w.broker.committed.size, 0, 'offsets resolved, not committed');
  assert.ok(a.ingestor.buffered > 0);
  await a.ingestor.flushIfDue(true);
  assert.equal(w.table.inserts, 1, 'one insert for the whole buffer');
  assert.deepEqual(stored(w.table, true), REFERENCE);
  assert.equal(w.broker.committed.get(`${TOPIC}:0`)?.offset, String(LOG[0].length));
  assert.equal(w.broker.committed.get(`${TOPIC}:1`)?.offset, String(LOG[1].length));
  assert.ok(w.broker.deadLetters.length > 0 && w.broker.deadLetters.every((d) => d.record.value?.toString().startsWith('not an envelope')));
  assert.equal(await a.ingestor.caughtUp(), true);
  await stopAll(w);
});

test('a failed insert is retried by the batch: nothing dropped, nothing stored twice, later buffers wait for it', QUICK, async () => {
  const w = world({ maxRows: 10 });
  const a = await join(w, 'a');
  w.broker.rebalance([[a.member, { [TOPIC]: [0, 1] }]]);
  w.table.outcomes = ['fails', 'ok', 'fails', 'fails', 'ok', 'fails'];
  await drain(a.member, 0, 6);
  await drain(a.member, 1, 6);
  await a.ingestor.stop();
  assert.deepEqual(stored(w.table, true), REFERENCE);
  assert.equal(w.broker.committed.get(`${TOPIC}:0`)?.offset, String(LOG[0].length));
});

test('an insert whose answer was lost is settled and found landed: its rows are not inserted again', QUICK, async () => {
  const w = world({ maxRows: 10 });
  const a = await join(w, 'a');
  w.broker.rebalance([[a.member, { [TOPIC]: [0, 1] }]]);
  w.table.outcomes = ['lost', 'ok', 'lost', 'lost'];
  await drain(a.member, 0, 6);
  await drain(a.member, 1, 6);
  await a.ingestor.stop();
  assert.ok(a.member.settled.length >= 3, 'each lost query settled before asking whether it landed');
  assert.deepEqual(stored(w.table, true), REFERENCE);
});

test('a redelivery before the flush (the partition read again from the start) is not judged twice', QUICK, async () => {
  const w = world();
  const a = await join(w, 'a');
  w.broker.rebalance([[a.member, { [TOPIC]: [0] }]]);
  await drain(a.member, 0, 9);
  a.member.seek(TOPIC, 0, '0');
  await drain(a.member, 0, 5);
  await a.ingestor.flushIfDue(true);
  const want = REFERENCE.filter((r) => (JSON.parse(r) as EnvelopeRow).kafka_partition === 0);
  assert.deepEqual(stored(w.table, true), want);
  assert.equal(w.broker.deadLetters.length, LOG[0].filter((r) => r.value?.toString().startsWith('not')).length, 'each dead letter sent once');
  await stopAll(w);
});

test('rows stored but never committed (a crash between insert and commit): the next owner reads them back, judges nothing again, and commits up to them', QUICK, async () => {
  const w = world();
  const a = await join(w, 'a');
  w.broker.rebalance([[a.member, { [TOPIC]: [0] }]]);
  await drain(a.member, 0, 9);
  await a.ingestor.flushIfDue(true);
  const inserts = w.table.inserts;
  // The commit is lost: the group resumes from the start of the partition, every batch below what is stored.
  w.broker.committed.delete(`${TOPIC}:0`);
  const b = await join(w, 'b');
  w.broker.rebalance([
    [a.member, {}],
    [b.member, { [TOPIC]: [0] }],
  ]);
  await drain(b.member, 0, 9);
  await b.ingestor.flushIfDue(true);
  assert.equal(w.table.inserts, inserts, 'nothing judged or inserted again');
  assert.equal(w.broker.committed.get(`${TOPIC}:0`)?.offset, String(LOG[0].length), 'the commit caught up with the stored rows');
  assert.deepEqual(stored(w.table, true), REFERENCE.filter((r) => (JSON.parse(r) as EnvelopeRow).kafka_partition === 0));
  await stopAll(w);
});

test('a zombie (expelled without knowing): its fence is refused, its buffer dropped, it writes nothing until it joins again', QUICK, async () => {
  const w = world();
  const a = await join(w, 'a');
  const b = await join(w, 'b');
  w.broker.rebalance([
    [a.member, { [TOPIC]: [0, 1] }],
    [b.member, {}],
  ]);
  await drain(a.member, 0, 8);
  w.broker.expel(a.member);
  w.broker.rebalance([[b.member, { [TOPIC]: [0, 1] }]]);
  const sent = w.broker.deadLetters.length;
  await assert.rejects(a.ingestor.flushIfDue(true), /UNKNOWN_MEMBER_ID/);
  assert.equal(w.table.inserts, 0, 'the zombie inserted nothing');
  assert.equal(w.broker.deadLetters.length, sent, 'nor sent its dead letters');
  assert.equal(a.ingestor.buffered, 0, 'its buffer is dropped');
  // The timer does not flush a fenced member; a batch in hand is refused again at its fence.
  await a.ingestor.flushIfDue(false, true);
  const late = await a.member.fetch(TOPIC, 1, 8);
  await a.ingestor.flushIfDue(true).catch(() => undefined);
  assert.ok(late.fetched > 0);
  assert.equal(w.table.inserts, 0);
  await drain(b.member, 0, 8);
  await drain(b.member, 1, 8);
  await b.ingestor.flushIfDue(true);
  // It joins again, with one partition: it reads back what b stored, and judges the rest.
  w.broker.rebalance([
    [a.member, { [TOPIC]: [0] }],
    [b.member, { [TOPIC]: [1] }],
  ]);
  await drain(a.member, 0, 8);
  await a.ingestor.flushIfDue(true);
  assert.deepEqual(stored(w.table, true), REFERENCE);
  await stopAll(w);
});

/** Waits (real time, the watch's timer) until `fact` holds, failing after `ms`. */
async function eventually(what: string, ms: number, fact: () => boolean): Promise<void> {
  const end = Date.now() + ms;
  while (!fact()) {
    if (Date.now() > end) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('the coordinator gone between batches (kafkajs keeps it cached, no batch comes): after a session timeout the member joins again, its buffer dropped, every record stored once', QUICK, async () => {
  // The timer flushes what is buffered after 100 ms; nothing else runs once the fetches stop.
  const w = world({ maxWaitMs: 100 });
  let clock = 1_000_000;
  const a = await join(w, 'a', () => clock);
  w.broker.rebalance([[a.member, { [TOPIC]: [0, 1] }]]);
  await drain(a.member, 0, 9);
  await eventually('the first buffer flushed by the timer', 5_000, () => a.ingestor.buffered === 0);
  const inserts = w.table.inserts;
  a.member.coordinatorDown = true;
  await drain(a.member, 1, 9);
  // The timer's flush fails at its fence (no answer): the member is fenced, nothing more is tried.
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.ok(a.ingestor.buffered > 0, 'the second partition waits in the buffer');
  assert.equal(w.table.inserts, inserts, 'nothing inserted past a failed fence');
  clock += w.config.kafka.sessionTimeoutMs - 1;
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  assert.equal(a.member.rejoins, 0, 'not before the session timeout is over');
  clock += 1;
  await eventually('the member leaves and joins again', 5_000, () => a.member.rejoins === 1);
  assert.equal(a.ingestor.buffered, 0, 'its buffer is dropped: the partitions are the group\'s now');
  // The new run finds a coordinator that answers; the group hands the partitions back.
  a.member.coordinatorDown = false;
  w.broker.rebalance([[a.member, { [TOPIC]: [0, 1] }]]);
  await drain(a.member, 0, 9);
  await drain(a.member, 1, 9);
  await a.ingestor.flushIfDue(true);
  assert.deepEqual(stored(w.table, true), REFERENCE);
  assert.equal(w.broker.committed.get(`${TOPIC}:1`)?.offset, String(LOG[1].length));
  assert.equal(a.member.rejoins, 1, 'once');
  await stopAll(w);
});

test('a batch that gives up on a silent coordinator leaves the join to kafkajs: the coordinator watch does not leave and run the consumer on top of it', QUICK, async () => {
  // The group's watch ticks every 50 ms.
  const w = world({ maxWaitMs: 100 });
  let clock = 1_000_000;
  const a = await join(w, 'a', () => clock);
  w.broker.rebalance([[a.member, { [TOPIC]: [0, 1] }]]);
  a.member.coordinatorDown = true;
  a.member.heartbeatsLost = true;
  // The batch's first heartbeat fails after a session timeout (no answer, as a dead broker's).
  let first = true;
  a.member.beforeHeartbeat = () => {
    if (first) clock += w.config.kafka.sessionTimeoutMs + 1;
    first = false;
  };
  const { error } = await a.member.fetch(TOPIC, 0, 9);
  assert.ok(error instanceof CoordinatorLost, `the batch gave up: ${String(error)}`);
  // The timer's flush of what the batch buffered fails at its fence (no answer): the watch counts its silence from there.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.ok(a.ingestor.buffered > 0, 'the batch\'s records wait in the buffer, unflushed');
  // kafkajs now joins again by itself. The watch's silence runs out meanwhile: it must leave the join to kafkajs.
  clock += w.config.kafka.sessionTimeoutMs + 1;
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  assert.equal(a.member.rejoins, 0, 'no second leave-and-join while kafkajs joins');
  // kafkajs's join lands at a coordinator that answers: the member owns its partitions again and stores everything once.
  a.member.coordinatorDown = false;
  a.member.heartbeatsLost = false;
  w.broker.rebalance([[a.member, { [TOPIC]: [0, 1] }]]);
  await drain(a.member, 0, 9);
  await drain(a.member, 1, 9);
  await a.ingestor.flushIfDue(true);
  assert.deepEqual(stored(w.table, true), REFERENCE);
  assert.equal(a.member.rejoins, 0);
  await stopAll(w);
});

test('a rebalance moves a partition to another member and back: the buffer and every cache are dropped, the state read back', QUICK, async () => {
  const w = world();
  const a = await join(w, 'a');
  const b = await join(w, 'b');
  w.broker.rebalance([
    [a.member, { [TOPIC]: [0, 1] }],
    [b.member, {}],
  ]);
  await a.member.fetch(TOPIC, 0, 20);
  await a.member.fetch(TOPIC, 1, 20);
  w.broker.rebalance([
    [a.member, { [TOPIC]: [1] }],
    [b.member, { [TOPIC]: [0] }],
  ]);
  assert.equal(a.ingestor.buffered, 0, 'the buffer belonged to the last generation');
  await b.member.fetch(TOPIC, 0, 40);
  await b.ingestor.flushIfDue(true);
  w.broker.rebalance([
    [a.member, { [TOPIC]: [0, 1] }],
    [b.member, {}],
  ]);
  await drain(a.member, 0, 20);
  await drain(a.member, 1, 20);
  await a.ingestor.flushIfDue(true);
  assert.deepEqual(stored(w.table, true), REFERENCE);
  await stopAll(w);
});

test('a rebalance while a flush is in flight: the old generation commits nothing; its late rows collapse with the new owner’s', QUICK, async () => {
  const w = world();
  const a = await join(w, 'a');
  const b = await join(w, 'b');
  w.broker.rebalance([
    [a.member, { [TOPIC]: [0] }],
    [b.member, {}],
  ]);
  await a.member.fetch(TOPIC, 0, 30);
  let open: () => void = () => undefined;
  w.table.gate = new Promise((r) => (open = r));
  const flight = a.ingestor.flushIfDue(true);
  await new Promise((r) => setImmediate(r));
  w.broker.rebalance([
    [a.member, {}],
    [b.member, { [TOPIC]: [0] }],
  ]);
  w.table.gate = undefined;
  await drain(b.member, 0, 30);
  await b.ingestor.flushIfDue(true);
  open();
  await flight;
  assert.equal(a.member.commits.filter((c) => c.some((p) => p.metadata !== undefined)).length, 0, 'the old generation committed nothing');
  const want = REFERENCE.filter((r) => (JSON.parse(r) as EnvelopeRow).kafka_partition === 0);
  assert.deepEqual(stored(w.table, false), want);
  await stopAll(w);
});

test('random sequences of batches, flushes, failed and lost inserts, rebalances, zombies and redeliveries: the rows of the one-by-one reference (150 sequences)', SLOW, async () => {
  let seed = 20261202;
  const next = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  for (let run = 0; run < 150; run++) {
    const w = world({ maxRows: 5 + Math.floor(next() * 40), overlap: next() < 0.5 });
    const a = await join(w, 'a');
    const b = await join(w, 'b');
    const members = [a, b];
    const deal = (): void => {
      const owner = [pick(members), pick(members)];
      w.broker.rebalance(members.map((m) => [m.member, { [TOPIC]: [0, 1].filter((p) => owner[p] === m) }] as const));
    };
    deal();
    const events: string[] = [];
    for (let step = 0; step < 30; step++) {
      const m = pick(members);
      const e = pick(['fetch', 'fetch', 'fetch', 'flush', 'fails', 'lost', 'rebalance', 'zombie', 'redeliver']);
      events.push(`${m.member.id}:${e}`);
      if (e === 'fetch') {
        const { error } = await m.member.fetch(TOPIC, pick([0, 1]), 1 + Math.floor(next() * 12));
        // A membership error ends the batch; kafkajs rejoins the group (a rebalance, here at the next deal).
        if (error !== undefined) assert.match(error instanceof Error ? error.message : 'not an Error', /UNKNOWN_MEMBER_ID|ILLEGAL_GENERATION/, `run ${run}`);
      } else if (e === 'flush') await m.ingestor.flushIfDue(true).catch(() => undefined);
      else if (e === 'fails' || e === 'lost') w.table.outcomes.push(e);
      else if (e === 'rebalance') deal();
      else if (e === 'zombie') {
        w.broker.expel(m.member);
        const other = members.find((x) => x !== m)!;
        w.broker.rebalance([[other.member, { [TOPIC]: [0, 1] }]]);
      } else {
        const partition = pick([0, 1]);
        if (m.member.positions.has(`${TOPIC}:${partition}`)) m.member.seek(TOPIC, partition, '0');
      }
    }
    // The end: one member takes everything and catches up.
    w.broker.rebalance([
      [a.member, { [TOPIC]: [0, 1] }],
      [b.member, {}],
    ]);
    await drain(a.member, 0, 50);
    await drain(a.member, 1, 50);
    assert.equal(await a.ingestor.stop(), true, `run ${run}: the final flush`);
    await b.ingestor.stop(false);
    assert.deepEqual(stored(w.table, true), REFERENCE, `run ${run}: ${events.join(' ')}`);
    assert.equal(await a.ingestor.caughtUp(), true, `run ${run}: everything committed`);
  }
});

test('rows the server refuses in the flush in flight: the batches judged meanwhile (on a state that took them as stored) are judged again', QUICK, async () => {
  const w = world({ maxRows: 10, overlap: true });
  const a = await join(w, 'a');
  w.broker.rebalance([[a.member, { [TOPIC]: [0] }]]);
  // Offset 6 is seq 4 of a loop whose seq 5 is at offset 10: the server cannot take its row.
  w.table.refused.add('0:6');
  let open: () => void = () => undefined;
  w.table.gate = new Promise((r) => (open = r));
  await a.member.fetch(TOPIC, 0, 10);
  assert.equal(w.table.inserts, 1, 'the first buffer is in flight');
  // Judged while it is in flight, with seq 4 pending as if it were stored.
  await a.member.fetch(TOPIC, 0, 5);
  assert.equal(w.table.rows.length, 0, 'still in flight');
  w.table.gate = undefined;
  open();
  await a.ingestor.flushIfDue(true);
  await drain(a.member, 0, 5);
  await a.ingestor.flushIfDue(true);
  // As if the refused record were not an envelope: it moves no chain.
  const want = (await reference([LOG[0].map((r, i) => (i === 6 ? { ...r, value: Buffer.from('refused') } : r)), []])).filter((r) => (JSON.parse(r) as EnvelopeRow).kafka_offset !== '6');
  const rows = stored(w.table, true);
  assert.deepEqual(
    rows.filter((r) => (JSON.parse(r) as EnvelopeRow).kafka_offset !== '6'),
    want,
  );
  const refused = rows.map((r) => JSON.parse(r) as EnvelopeRow).find((r) => r.kafka_offset === '6');
  assert.equal(refused?.verdict, 'malformed');
  assert.match(refused?.detail ?? '', /^refused by ClickHouse/);
  await stopAll(w);
});

test('at most one flush in flight: a buffer due while the previous one is in flight waits for it, and a failed one is written again before the next', QUICK, async () => {
  const w = world({ maxRows: 10, overlap: true });
  const a = await join(w, 'a');
  w.broker.rebalance([[a.member, { [TOPIC]: [0] }]]);
  let open: () => void = () => undefined;
  w.table.gate = new Promise((r) => (open = r));
  w.table.outcomes = ['fails'];
  await a.member.fetch(TOPIC, 0, 10);
  // Due as well, while the first is held in flight.
  const second = a.member.fetch(TOPIC, 0, 10);
  for (let i = 0; i < 50; i++) await yieldTurn();
  assert.equal(w.table.inserts, 1, 'the second buffer is not written while the first is in flight');
  w.table.gate = undefined;
  open();
  assert.equal((await second).error, undefined);
  await drain(a.member, 0, 10);
  await a.ingestor.flushIfDue(true);
  assert.deepEqual(
    stored(w.table, true),
    REFERENCE.filter((r) => (JSON.parse(r) as EnvelopeRow).kafka_partition === 0),
  );
  const committed = a.member.commits.flat().filter((c) => c.metadata !== undefined).map((c) => Number(c.offset));
  assert.deepEqual(committed, [...committed].sort((x, y) => x - y), 'offsets committed in order');
  assert.equal(w.broker.committed.get(`${TOPIC}:0`)?.offset, String(LOG[0].length));
  await stopAll(w);
});
