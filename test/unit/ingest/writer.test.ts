/**
 * The write of a flight (src/ingest/writer.ts) without services: a fake
 * stream whose table is an array and whose inserts can fail before or after
 * their rows land, ports that record what was sent and settled. Each test is
 * one rule of the write; the last one runs random sequences of failures and
 * demands the rows of the buffer stored exactly once, derived once, and
 * made durable after them. The fence and the commit around the write are
 * the machine's (test/unit/ingest/machine.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentledgerError } from '../../../src/errors/errors.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { emptyPending, type Pending } from '../../../src/ingest/pending.js';
import { Writer, type WritePorts } from '../../../src/ingest/writer.js';
import type { StorePort } from '../../../src/pipeline/ports.js';
import type { DeadLetter, SourceRecord, Stream, StreamBatch } from '../../../src/pipeline/stream.js';
import type { KafkaColumns } from '../../../src/rows/rows.js';

const TOPIC = 't';

interface Row extends KafkaColumns {
  value: string;
}

/** What an insert does: lands and answers; fails before landing; lands, then its answer is lost; is refused for a row (nothing lands). */
type Outcome = 'ok' | 'fails' | 'lost' | 'landed-error';

const transient = (): Error => new AgentledgerError('transient', 'socket hang up');

/** A content refusal, as ClickHouse answers a row it cannot parse. */
const refusal = (): Error => new AgentledgerError('content', 'Cannot parse input');

/** A fake stream that is its own store (Stream.store): its table is an array. */
class FakeStream implements Stream<Row>, StorePort<Row> {
  readonly name = 'fake';
  readonly topic = TOPIC;
  readonly store: StorePort<Row> = this;
  readonly table: Row[] = [];
  readonly inserts: { rows: number; queryId: string | undefined }[] = [];
  readonly derived: Row[][] = [];
  readonly durableCalls: (number | undefined)[] = [];
  readonly events: string[];
  /** The outcome of each insert in turn ('ok' once they run out). */
  outcomes: Outcome[] = [];
  /** Values the server refuses (the insert and a probe holding one fail with a content error). */
  poison = new Set<string>();

  constructor(events: string[]) {
    this.events = events;
  }

  progress(_topic: string, partition: number): Promise<bigint> {
    let next = 0n;
    for (const r of this.table) if (r.kafka_partition === partition && BigInt(r.kafka_offset) + 1n > next) next = BigInt(r.kafka_offset) + 1n;
    return Promise.resolve(next);
  }
  process(): Promise<StreamBatch<Row>> {
    throw new Error('not used by the writer');
  }
  insert(rows: readonly Row[], queryId?: string): Promise<void> {
    this.inserts.push({ rows: rows.length, queryId });
    this.events.push('insert');
    if (rows.some((r) => this.poison.has(r.value))) return Promise.reject(refusal());
    const outcome = this.outcomes.shift() ?? 'ok';
    if (outcome === 'fails') return Promise.reject(transient());
    this.table.push(...rows.map((r) => ({ ...r })));
    if (outcome === 'lost') return Promise.reject(transient());
    if (outcome === 'landed-error') return Promise.reject(new AgentledgerError('fatal', 'a view on the table threw'));
    return Promise.resolve();
  }
  probe(rows: readonly Row[]): Promise<void> {
    return rows.some((r) => this.poison.has(r.value)) ? Promise.reject(refusal()) : Promise.resolve();
  }
  quarantine(record: SourceRecord, reason: string): { row: Row; deadLetter: DeadLetter } {
    return {
      row: { kafka_topic: record.topic, kafka_partition: record.partition, kafka_offset: record.offset, ingested_at: '', value: 'malformed' },
      deadLetter: { record, reason },
    };
  }
  derive(rows: readonly Row[]): Promise<void> {
    this.events.push('derive');
    this.derived.push([...rows]);
    return Promise.resolve();
  }
  rederive(): Promise<void> {
    return Promise.resolve();
  }
  derivedLost(): Promise<boolean> {
    return Promise.resolve(false);
  }
  seal(): number {
    return 0;
  }
  durable(upTo?: number): void {
    this.events.push('durable');
    this.durableCalls.push(upTo);
  }
  reset(): void {}
}

class FakePorts implements WritePorts {
  readonly sent: DeadLetter[][] = [];
  readonly settled: string[] = [];

  constructor(private readonly events: string[]) {}

  sendDeadLetters(letters: readonly DeadLetter[]): Promise<void> {
    this.events.push('dead letters');
    this.sent.push([...letters]);
    return Promise.resolve();
  }
  settle(queryId: string): Promise<void> {
    this.settled.push(queryId);
    return Promise.resolve();
  }
}

interface World {
  readonly events: string[];
  readonly stream: FakeStream;
  readonly ports: FakePorts;
  readonly writer: Writer;
  readonly durableRows: (readonly KafkaColumns[])[];
  /** The write clock (ms): tests move it between tries. */
  readonly clock: { ms: number };
}

function world(): World {
  const events: string[] = [];
  const stream = new FakeStream(events);
  const ports = new FakePorts(events);
  const durableRows: (readonly KafkaColumns[])[] = [];
  const clock = { ms: Date.UTC(2026, 11, 2, 4, 0, 0) };
  const writer = new Writer({
    now: () => clock.ms,
    ports,
    metrics: createMetrics(),
    log: createLogger('error', {}, { write: () => undefined }),
    onDurable: (rows) => durableRows.push(rows),
  });
  return { events, stream, ports, writer, durableRows, clock };
}

const record = (partition: number, offset: number, value: string): SourceRecord => ({
  topic: TOPIC,
  partition,
  offset: String(offset),
  timestamp: '0',
  key: null,
  value: Buffer.from(value),
});

/** A sealed buffer of `n` records over two partitions (offsets from `from`), one row each, and dead letters. */
function buffer(stream: FakeStream, n: number, options: { from?: number; deadLetters?: number; values?: (i: number) => string } = {}): Pending {
  const p = emptyPending();
  const from = options.from ?? 0;
  const rows: Row[] = [];
  const records: SourceRecord[] = [];
  for (let i = 0; i < n; i++) {
    const partition = i % 2;
    const offset = from + Math.floor(i / 2);
    const value = options.values?.(i) ?? `v${partition}-${offset}`;
    records.push(record(partition, offset, value));
    rows.push({ kafka_topic: TOPIC, kafka_partition: partition, kafka_offset: String(offset), ingested_at: '', value });
  }
  p.rows.set(stream, rows);
  p.records.set(stream, records);
  p.sealed.set(stream, 7);
  for (let i = 0; i < (options.deadLetters ?? 0); i++) p.deadLetters.push({ record: record(0, 1000 + i, 'bad'), reason: 'not JSON' });
  return p;
}

/** Writes `p` as ingest's retry loop does: again after every transient failure, at most `tries` times. */
async function writeRetrying(writer: Writer, p: Pending, tries = 10): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      await writer.write(p);
      return attempt;
    } catch (err) {
      if (attempt >= tries || !(err instanceof AgentledgerError) || err.kind !== 'transient') throw err;
    }
  }
}

const stored = (s: FakeStream): string[] => s.table.map((r) => `${r.kafka_partition}:${r.kafka_offset}:${r.value}`).sort();

test('the order: dead letters, one insert per table, derived writes, durable; every row stamped alike', async () => {
  const w = world();
  const p = buffer(w.stream, 6, { deadLetters: 2 });
  const written = await w.writer.write(p);
  assert.deepEqual(w.events, ['dead letters', 'insert', 'derive', 'durable']);
  assert.equal(w.stream.inserts.length, 1, 'one insert for all six rows');
  assert.equal(w.stream.inserts[0]!.rows, 6);
  assert.deepEqual(w.stream.durableCalls, [7], 'the sealed buffer number is made durable');
  assert.equal(w.durableRows.length, 1);
  assert.equal(written.stampSeconds, p.stampSeconds, 'the stamp the commit is dated with');
  assert.equal(written.refused, false);
  const stamps = new Set(w.stream.table.map((r) => r.ingested_at));
  assert.equal(stamps.size, 1, 'one ingested_at for the whole insert');
});

test('dead letters are sent once: a write whose insert failed after them does not send them again', async () => {
  const w = world();
  w.stream.outcomes = ['fails', 'fails'];
  const p = buffer(w.stream, 4, { deadLetters: 3 });
  assert.equal(await writeRetrying(w.writer, p), 3);
  assert.equal(w.ports.sent.length, 1);
  assert.equal(w.ports.sent[0]!.length, 3);
  assert.equal(stored(w.stream).length, 4);
});

test('an insert whose answer was lost: the retry settles that query, finds the rows landed, and does not insert them again', async () => {
  const w = world();
  w.stream.outcomes = ['lost'];
  const p = buffer(w.stream, 6);
  assert.equal(await writeRetrying(w.writer, p), 2);
  assert.equal(w.stream.inserts.length, 1, 'no second insert');
  assert.deepEqual(w.ports.settled, [w.stream.inserts[0]!.queryId], 'the lost query settled before asking whether it landed');
  assert.equal(w.stream.table.length, 6, 'stored once');
  assert.equal(w.events.filter((e) => e === 'durable').length, 1, 'made durable once');
});

test('an error answer for rows that landed (a view threw after the part was written): found landed, not repeated, write goes on', async () => {
  const w = world();
  w.stream.outcomes = ['landed-error'];
  const p = buffer(w.stream, 4);
  await w.writer.write(p);
  assert.equal(w.stream.inserts.length, 1);
  assert.equal(w.stream.table.length, 4);
  assert.deepEqual(w.ports.settled, [w.stream.inserts[0]!.queryId]);
  assert.ok(w.events.includes('durable'));
});

test('an insert that failed before landing is tried again with the same stamp; nothing durable before the rows are stored', async () => {
  const w = world();
  w.stream.outcomes = ['fails'];
  const p = buffer(w.stream, 4);
  await assert.rejects(w.writer.write(p), /socket hang up/);
  const stamp = p.stamp;
  assert.ok(!w.events.includes('durable'), 'nothing durable after a failed insert');
  assert.ok(!w.events.includes('derive'));
  w.clock.ms += 65_000;
  await w.writer.write(p);
  assert.equal(p.stamp, stamp, 'a retried insert lands in the partition of the first');
  assert.equal(w.stream.inserts.length, 2);
  assert.equal(w.stream.table.length, 4);
  assert.ok(w.stream.table.every((r) => r.ingested_at === stamp));
});

test('rows the server refuses: found by probing, their records dead-lettered and stored as malformed, the rest stored, the stream rebuilt', async () => {
  const w = world();
  w.stream.poison = new Set(['v1-2']);
  const p = buffer(w.stream, 8);
  const written = await w.writer.write(p);
  assert.deepEqual(
    w.ports.sent.flat().map((d) => `${d.record.partition}:${d.record.offset}`),
    ['1:2'],
    'the refused record dead-lettered, alone',
  );
  assert.equal(w.stream.table.length, 8, 'every record has its row');
  assert.equal(w.stream.table.find((r) => r.kafka_partition === 1 && r.kafka_offset === '2')?.value, 'malformed');
  assert.ok(p.rebuild.has(w.stream), 'the stream state went past the refused row: read back after the flight');
  assert.equal(written.refused, true, 'and the machine is told so');
});

test('a content refusal no single row causes is not the data: thrown as it came', async () => {
  const w = world();
  w.stream.insert = () => Promise.reject(refusal());
  await assert.rejects(w.writer.write(buffer(w.stream, 4)), /Cannot parse input/);
  assert.deepEqual(w.ports.sent, []);
});

test('random failures across retries: every row stored exactly once, derived once, made durable once after it (500 sequences)', async () => {
  let seed = 20261202;
  const next = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const choices: Outcome[] = ['ok', 'fails', 'lost', 'landed-error'];
  for (let run = 0; run < 500; run++) {
    const w = world();
    w.stream.outcomes = Array.from({ length: Math.floor(next() * 5) }, () => choices[Math.floor(next() * choices.length)]!);
    const n = 1 + Math.floor(next() * 12);
    if (next() < 0.3) w.stream.poison = new Set([`v${Math.floor(next() * 2)}-${Math.floor((next() * n) / 2)}`]);
    const deadLetters = Math.floor(next() * 3);
    const p = buffer(w.stream, n, { deadLetters });
    const expected = p.rows.get(w.stream as Stream)!.map((r) => `${r.kafka_partition}:${r.kafka_offset}`).sort();
    await writeRetrying(w.writer, p, 20);
    const keys = w.stream.table.map((r) => `${r.kafka_partition}:${r.kafka_offset}`).sort();
    assert.deepEqual(keys, expected, `run ${run}: each record's row stored once (${w.stream.outcomes.join(',')})`);
    assert.equal(w.stream.derived.length, 1, `run ${run}: derived once`);
    assert.equal(w.events.filter((e) => e === 'durable').length, 1, `run ${run}: made durable once`);
    assert.ok(w.events.lastIndexOf('insert') < w.events.indexOf('durable'), `run ${run}: durable after the last insert`);
    assert.equal(w.ports.sent.flat().filter((d) => d.reason === 'not JSON').length, deadLetters, `run ${run}: dead letters sent once`);
  }
});
