/**
 * The exactly-once rules of ingest (src/ingest/machine.ts), one test per
 * rule, on the machine alone: events in, commands out, no I/O. The whole
 * loop over a fake consumer group, with random event orders against the
 * one-by-one reference, is test/unit/ingest/ingestor.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Position } from '../../../src/kafka/contract.js';
import { buffered, initialState, owning, step, type Command, type Event, type IngestState, type MachineLimits } from '../../../src/ingest/machine.js';

const T = 'topic';
const LIMITS: MachineLimits = { maxRows: 100, maxBytes: 1_000_000, maxWaitMs: 1_000, overlap: true };

/** A machine driven by events, keeping every command it gave. */
class Driven {
  state: IngestState = initialState();
  readonly log: Command[] = [];
  constructor(readonly limits: MachineLimits = LIMITS) {}
  send(event: Event): readonly Command[] {
    const { state, commands } = step(this.state, event, this.limits);
    this.state = state;
    this.log.push(...commands);
    return commands;
  }
  /** The one command of `type` among `commands`. */
  static only<K extends Command['type']>(commands: readonly Command[], type: K): Extract<Command, { type: K }> {
    const found = commands.filter((c) => c.type === type);
    assert.equal(found.length, 1, `one ${type} in ${JSON.stringify(commands, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
    return found[0] as Extract<Command, { type: K }>;
  }
  /** A batch of `partition` up to `lastOffset`, read back at `stored` on its first batch, judged into `count` rows. */
  batch(partition: number, lastOffset: number, count: number, { stored = 0, now = 0, metadata }: { stored?: number; now?: number; metadata?: string } = {}): readonly Command[] {
    const tp = `${T}:${partition}`;
    let commands = this.send({ type: 'batch', topic: T, partition, filtered: false });
    const readBack = commands.find((c) => c.type === 'readBack');
    if (readBack) commands = this.send({ type: 'readBack', session: readBack.session, tp, position: { topic: T, partition, offset: String(stored), ...(metadata ? { metadata } : {}) } });
    const judge = Driven.only(commands, 'judge');
    return this.send({ type: 'judged', session: judge.session, tp, from: judge.from, lastOffset: String(lastOffset), count, bytes: count * 10, filtered: false, now });
  }
  /** The flight of `buffer` through: fence held, rows written (stamped `stampSeconds`), commit acknowledged. */
  land(buffer: number, { refused = false, stampSeconds = 1 }: { refused?: boolean; stampSeconds?: number } = {}): readonly Command[] {
    this.send({ type: 'fenceHeld', buffer });
    this.send({ type: 'written', buffer, stampSeconds, refused });
    return this.send({ type: 'committed', buffer });
  }
  flush(force = false, now = 0, fromTimer = false): readonly Command[] {
    return this.send({ type: 'flushCheck', force, fromTimer, now });
  }
}

const assigned = (...partitions: number[]): Event => ({ type: 'assigned', partitions: partitions.map((partition) => ({ topic: T, partition })) });
const offsets = (positions: readonly Position[]): [number, string][] => positions.map((p) => [p.partition, p.offset]);

test('the first batch of a session reads its partition back and judges from the durable progress; records below it are not judged again', () => {
  const m = new Driven();
  m.send(assigned(0));
  const first = m.send({ type: 'batch', topic: T, partition: 0, filtered: false });
  const readBack = Driven.only(first, 'readBack');
  assert.ok(!first.some((c) => c.type === 'judge'), 'nothing judged before the read-back');
  const judge = Driven.only(m.send({ type: 'readBack', session: readBack.session, tp: `${T}:0`, position: { topic: T, partition: 0, offset: '7' } }), 'judge');
  assert.equal(judge.from, 7n, 'offsets below 7 are stored already');
  m.send({ type: 'judged', session: judge.session, tp: `${T}:0`, from: 7n, lastOffset: '9', count: 3, bytes: 30, filtered: false, now: 0 });
  const again = Driven.only(m.send({ type: 'batch', topic: T, partition: 0, filtered: false }), 'judge');
  assert.equal(again.from, 10n, 'the next batch goes on from there, without reading back again');
});

test('a redelivery wholly below the progress does not move it back: its position is the progress', () => {
  const m = new Driven();
  m.send(assigned(0));
  m.batch(0, 9, 10);
  m.batch(0, 4, 0);
  assert.equal(m.state.sessions.get(`${T}:0`)?.next, 10n, 'still 10');
  assert.deepEqual(offsets([...m.state.open.positions.values()]), [[0, '10']]);
});

test('a due buffer is sealed and fenced first: its rows are written only once the fence held, with the durable positions of its partitions', () => {
  const m = new Driven();
  m.send(assigned(0, 1));
  m.batch(0, 4, 5, { stored: 0 });
  m.batch(1, 9, 10, { stored: 3, metadata: '1764504000' });
  const commands = m.flush(true);
  const seal = Driven.only(commands, 'seal');
  const fence = Driven.only(commands, 'fence');
  assert.equal(fence.buffer, seal.buffer);
  assert.ok(!commands.some((c) => c.type === 'write' || c.type === 'commit'), 'nothing written before the fence');
  assert.deepEqual(offsets(fence.positions), [
    [0, '0'],
    [1, '3'],
  ]);
  assert.equal(fence.positions[1]?.metadata, '1764504000', 'the fence commits again what is durable, metadata and all');
  Driven.only(m.send({ type: 'fenceHeld', buffer: fence.buffer }), 'write');
});

test('offsets are committed only after the rows are durable, dated by the flush stamp, and become what the next fence commits', () => {
  const m = new Driven();
  m.send(assigned(0));
  m.batch(0, 4, 5);
  const fence = Driven.only(m.flush(true), 'fence');
  const afterFence = m.send({ type: 'fenceHeld', buffer: fence.buffer });
  assert.ok(!afterFence.some((c) => c.type === 'commit'), 'no commit before the write');
  const commit = Driven.only(m.send({ type: 'written', buffer: fence.buffer, stampSeconds: 1764504123, refused: false }), 'commit');
  assert.deepEqual(commit.positions, [{ topic: T, partition: 0, offset: '5', metadata: '1764504123' }]);
  const landed = Driven.only(m.send({ type: 'committed', buffer: fence.buffer }), 'landed');
  assert.equal(landed.committed, true);
  assert.equal(m.state.flight, undefined);
  m.batch(0, 9, 5);
  const next = Driven.only(m.flush(true), 'fence');
  assert.deepEqual(next.positions, commit.positions, 'the next fence commits the last commit again');
});

test('a refused fence drops everything held: no write, no commit, the partitions read back, no timer flush until the next assignment', () => {
  const m = new Driven();
  m.send(assigned(0));
  m.batch(0, 4, 5);
  const fence = Driven.only(m.flush(false, 5_000), 'fence');
  m.batch(0, 9, 5);
  const drop = Driven.only(m.send({ type: 'fenceRefused', buffer: fence.buffer }), 'drop');
  assert.equal(drop.buffers.length, 2, 'the open buffer and the flight');
  assert.ok(drop.buffers.includes(fence.buffer));
  assert.equal(m.state.flight, undefined);
  assert.equal(buffered(m.state), 0);
  assert.equal(m.state.sessions.size, 0, 'every partition reads back on its next batch');
  assert.deepEqual(m.send({ type: 'fenceHeld', buffer: fence.buffer }), [], 'a late answer for the dropped flight writes nothing');
  m.batch(0, 14, 5);
  assert.deepEqual(m.flush(false, 10_000, true), [], 'the timer does not flush a fenced member');
  m.send(assigned(0));
  assert.equal(m.state.fenced, false, 'a new assignment ends it');
});

test('one flight at a time: a buffer due while one is in flight waits for it; a failed one is fenced and written again before any later buffer', () => {
  const m = new Driven();
  m.send(assigned(0));
  m.batch(0, 4, 5);
  const first = Driven.only(m.flush(true), 'fence');
  m.batch(0, 9, 5);
  const waiting = m.flush(true);
  assert.deepEqual(
    waiting.map((c) => c.type),
    ['await'],
    'the next buffer is not sealed while the first is in flight',
  );
  m.send({ type: 'fenceHeld', buffer: first.buffer });
  m.send({ type: 'flushFailed', buffer: first.buffer, atFence: false });
  const retry = m.flush(true);
  assert.equal(Driven.only(retry, 'fence').buffer, first.buffer, 'the failed flight again, fence first');
  assert.ok(!retry.some((c) => c.type === 'seal'), 'no later buffer sealed before it');
  m.land(first.buffer);
  const second = Driven.only(m.flush(true), 'fence');
  assert.notEqual(second.buffer, first.buffer, 'then the next one');
});

test('a buffer dropped while it is written (a rebalance) commits nothing: its partitions are another member’s, and so is their commit', () => {
  const m = new Driven();
  m.send(assigned(0));
  m.batch(0, 4, 5);
  const fence = Driven.only(m.flush(true), 'fence');
  m.send({ type: 'fenceHeld', buffer: fence.buffer });
  m.send({ type: 'revoking' });
  Driven.only(m.send(assigned(1)), 'drop');
  assert.deepEqual(m.send({ type: 'written', buffer: fence.buffer, stampSeconds: 1, refused: false }), [], 'no commit');
  assert.deepEqual(m.send({ type: 'committed', buffer: fence.buffer }), []);
});

test('a batch judged in a session thrown away meanwhile is not buffered', () => {
  const m = new Driven();
  m.send(assigned(0));
  const readBack = Driven.only(m.send({ type: 'batch', topic: T, partition: 0, filtered: false }), 'readBack');
  const judge = Driven.only(m.send({ type: 'readBack', session: readBack.session, tp: `${T}:0`, position: { topic: T, partition: 0, offset: '0' } }), 'judge');
  m.send(assigned(0));
  // The new session reads back the same progress: only the session tells the two apart.
  const fresh = Driven.only(m.send({ type: 'batch', topic: T, partition: 0, filtered: false }), 'readBack');
  m.send({ type: 'readBack', session: fresh.session, tp: `${T}:0`, position: { topic: T, partition: 0, offset: '0' } });
  assert.deepEqual(m.send({ type: 'judged', session: judge.session, tp: `${T}:0`, from: 0n, lastOffset: '4', count: 5, bytes: 50, filtered: false, now: 0 }), []);
  assert.equal(m.state.open.positions.size, 0);
  assert.deepEqual(m.send({ type: 'readBack', session: readBack.session, tp: `${T}:0`, position: { topic: T, partition: 0, offset: '0' } }), [], 'nor is a late read-back taken');
});

test('rows the server refused in the flight: the buffer judged meanwhile is dropped and its partitions sought back once the flight is over; with nothing judged, the streams only forget', () => {
  const m = new Driven();
  m.send(assigned(0, 1));
  m.batch(0, 4, 5);
  const fence = Driven.only(m.flush(true), 'fence');
  m.send({ type: 'fenceHeld', buffer: fence.buffer });
  m.batch(0, 9, 5);
  m.batch(1, 2, 3);
  m.send({ type: 'written', buffer: fence.buffer, stampSeconds: 1, refused: true });
  m.send({ type: 'committed', buffer: fence.buffer });
  assert.equal(m.state.flight?.step, 'over', 'kept until the next check, under the driver’s lock');
  const rewind = Driven.only(m.flush(false, 0), 'rewind');
  assert.deepEqual(offsets(rewind.positions), [
    [0, '5'],
    [1, '0'],
  ]);
  assert.equal(rewind.flight, fence.buffer);
  assert.equal(m.state.open.positions.size, 0, 'the buffer judged on that state is dropped');
  assert.equal(m.state.sessions.get(`${T}:0`)?.next, 5n, 'to be judged again from where it started');
  assert.equal(m.state.sessions.get(`${T}:1`)?.next, 0n);

  const n = new Driven();
  n.send(assigned(0));
  n.batch(0, 4, 5);
  const f = Driven.only(n.flush(true), 'fence');
  n.land(f.buffer, { refused: true });
  assert.equal(Driven.only(n.flush(false, 0), 'rebuild').flight, f.buffer);
});

test('a revocation stops the timer’s flushes; an assignment drops what was held and makes a session per partition', () => {
  const m = new Driven();
  m.send(assigned(0));
  assert.ok(owning(m.state));
  m.batch(0, 4, 5);
  m.send({ type: 'revoking' });
  assert.ok(!owning(m.state));
  assert.deepEqual(m.flush(false, 60_000, true), [], 'the timer could race the next owner');
  const drop = Driven.only(m.send(assigned(0, 2)), 'drop');
  assert.equal(drop.buffers.length, 1);
  assert.deepEqual([...m.state.sessions.keys()].sort(), [`${T}:0`, `${T}:2`]);
  assert.ok([...m.state.sessions.values()].every((s) => s.next === undefined), 'each reads back on its first batch');
  const lost = Driven.only(m.send({ type: 'lost' }), 'drop');
  assert.ok(lost.buffers.length >= 1);
  assert.ok(!owning(m.state), 'leaving to join again: not owning until assigned');
});

test('a commit refused after the rows are durable is no failure: the flight is over, the member fenced, the durable positions moved on', () => {
  const m = new Driven();
  m.send(assigned(0));
  m.batch(0, 4, 5);
  const fence = Driven.only(m.flush(true), 'fence');
  m.send({ type: 'fenceHeld', buffer: fence.buffer });
  m.send({ type: 'written', buffer: fence.buffer, stampSeconds: 9, refused: false });
  const landed = Driven.only(m.send({ type: 'commitFailed', buffer: fence.buffer }), 'landed');
  assert.equal(landed.committed, false);
  assert.equal(m.state.flight, undefined);
  assert.equal(m.state.fenced, true);
  assert.equal(m.state.sessions.get(`${T}:0`)?.durable?.offset, '5');
});

test('a flush is due when the buffer is full in rows or bytes, old enough, or forced; without overlap the caller waits for it', () => {
  const rows = new Driven({ ...LIMITS, maxRows: 5 });
  rows.send(assigned(0));
  rows.batch(0, 3, 4);
  assert.deepEqual(rows.flush(), [], 'not full, not old');
  rows.batch(0, 4, 1);
  Driven.only(rows.flush(), 'seal');

  const bytes = new Driven({ ...LIMITS, maxBytes: 50 });
  bytes.send(assigned(0));
  bytes.batch(0, 4, 5);
  Driven.only(bytes.flush(), 'seal');

  const time = new Driven();
  time.send(assigned(0));
  time.batch(0, 0, 1, { now: 10_000 });
  assert.deepEqual(time.flush(false, 10_999), []);
  Driven.only(time.flush(false, 11_000), 'seal');
  assert.ok(!time.log.some((c) => c.type === 'await'), 'with overlap the caller goes on judging');

  const serial = new Driven({ ...LIMITS, overlap: false });
  serial.send(assigned(0));
  serial.batch(0, 0, 1);
  Driven.only(serial.flush(false, 5_000), 'await');
  assert.deepEqual(new Driven().flush(true), [], 'nothing buffered: nothing to flush, forced or not');
});

test('a fetch the client filtered out moves its partition’s position forward only, and only for a partition of the assignment', () => {
  const m = new Driven();
  m.send(assigned(0));
  m.batch(0, 4, 5);
  const filtered = (partition: number, lastOffset: string): readonly Command[] => {
    const commands = m.send({ type: 'batch', topic: T, partition, filtered: true });
    const judge = commands.find((c) => c.type === 'judge');
    if (!judge) return commands;
    return m.send({ type: 'judged', session: judge.session, tp: `${T}:${partition}`, from: judge.from, lastOffset, count: 0, bytes: 0, filtered: true, now: 0 });
  };
  filtered(0, '2');
  assert.equal(m.state.open.positions.get(`${T}:0`)?.offset, '5', 'not moved back');
  const fence = Driven.only(m.flush(true), 'fence');
  m.land(fence.buffer);
  filtered(0, '3');
  assert.equal(m.state.open.positions.size, 0, 'records filtered below the progress make no buffer (and no commit)');
  filtered(0, '11');
  assert.equal(m.state.open.positions.get(`${T}:0`)?.offset, '12', 'moved past the filtered records');
  assert.deepEqual(filtered(3, '11'), [], 'a partition not assigned is not taken');
  assert.ok(!m.state.sessions.has(`${T}:3`));
});

test('a stopping member judges no more batches; its final flush is forced', () => {
  const m = new Driven();
  m.send(assigned(0));
  m.batch(0, 4, 5);
  m.send({ type: 'stop' });
  assert.deepEqual(m.send({ type: 'batch', topic: T, partition: 0, filtered: false }), []);
  Driven.only(m.flush(true), 'fence');
});
