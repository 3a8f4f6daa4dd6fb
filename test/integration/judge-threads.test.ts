/**
 * Judging in worker threads (src/judging/threaded.ts) against judging in
 * one thread, on the real ClickHouse: the same batches of one hostile
 * corpus (every planted chain problem, redeliveries, malformed records,
 * records whose key is not their LoopID, loops spread over partitions),
 * sealed and made durable at the same points, must give the same insert
 * bytes, dead letters, verdict counts and the fields the driver reads of a
 * row (the alerts' news, the rows loop_heads takes) with 4 threads as with
 * one. Then a batch whose part fails (a thread's read-back refused for
 * ClickHouse gone away) is retried whole: the parts judged already are
 * handed back, not judged again.
 */
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { generateTraffic, malformedRecords } from '../../src/demo/traffic/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { migrate } from '../../src/migrate/migrate.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { EnvelopeStream, type EnvelopeBatchOptions } from '../../src/pipeline/envelopes.js';
import type { SourceRecord } from '../../src/pipeline/stream.js';
import { ThreadedStream, threadOf } from '../../src/judging/threaded.js';
import type { EnvelopeRow } from '../../src/rows/rows.js';
import { ENVELOPE_TABLE } from '../../src/store/columns.js';
import { encodeRows, type InsertFormat } from '../../src/store/insert-format.js';
import { EnvelopeStore, HEAD_VERDICTS } from '../../src/store/envelope-store.js';
import { testContext, type TestContext } from '../support/context.js';

const log = createLogger('error');
const OPTIONS: EnvelopeBatchOptions = { seqEncoding: 'binary', maxPayloadBytes: 4 * 1024 * 1024 };
const STAMP = '2026-12-07 12:00:00';
let ctx: TestContext;

before(async () => {
  ctx = await testContext('judge_threads');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
});
after(async () => {
  await ctx.cleanup();
});

/** The corpus as records of 3 partitions, in batches of up to 37 records of one partition each. */
function batches(): SourceRecord[][] {
  const traffic = generateTraffic({ loops: 80, envelopesPerLoop: 14, seed: 41, payloadBytes: 48, violations: { mismatch: 3, gap: 3, fork: 3, timeRegression: 3, reorder: 3, duplicate: 3 } });
  const values: { key: Buffer | null; value: Buffer }[] = [...traffic.records].map((r) => ({ key: Buffer.from(r.key), value: r.value }));
  for (const m of malformedRecords()) values.push({ key: m.key === null ? null : Buffer.from(m.key), value: m.value });
  // Keys that are not the LoopID (a producer bug the rows note), each loop's
  // the same (a loop keyed two ways may be split across threads, as across
  // the partitions of two processes: src/judging/threaded.ts), and
  // redeliveries of whole stretches.
  const wrong = new Map<string, string>();
  for (const [i, v] of values.entries()) {
    const key = v.key?.toString() ?? '';
    if (!wrong.has(key)) wrong.set(key, wrong.size % 7 === 3 ? `wrong-${wrong.size}` : key);
    values[i] = { key: v.key === null ? null : Buffer.from(wrong.get(key)!), value: v.value };
  }
  const redelivered = values.slice(100, 160);
  values.splice(400, 0, ...redelivered);
  const offsets = [0, 0, 0];
  const byPartition: SourceRecord[][] = [[], [], []];
  values.forEach(({ key, value }, i) => {
    const partition = i % 3;
    byPartition[partition]!.push({ topic: 't', partition, offset: String(offsets[partition]!++), timestamp: '0', key, value });
  });
  const out: SourceRecord[][] = [];
  for (let at = 0; at < Math.max(...byPartition.map((p) => p.length)); at += 37) for (const p of byPartition) if (at < p.length) out.push(p.slice(at, at + 37));
  return out;
}

let format: InsertFormat = 'RowBinary';
const body = (rows: readonly EnvelopeRow[]): Buffer => Buffer.concat(encodeRows(format, ENVELOPE_TABLE, rows.map((r) => Object.assign(r, { ingested_at: STAMP }))));
const news = (rows: readonly EnvelopeRow[]): string[] => rows.map((r) => JSON.stringify([r.loop_id, r.seq, r.kind_class, r.verdict, r.kafka_partition, r.kafka_offset]));

/** Per loop, the head-moving row with the highest seq (what a flush's derive writes to loop_heads). */
function heads(rows: readonly EnvelopeRow[]): string[] {
  const best = new Map<string, EnvelopeRow>();
  for (const r of rows) {
    if (!HEAD_VERDICTS.has(r.verdict)) continue;
    const b = best.get(r.loop_id);
    if (!b || r.seq > b.seq) best.set(r.loop_id, r);
  }
  return [...best.values()].map((r) => JSON.stringify([r.loop_id, r.seq, r.hash, r.computed_hash, r.time_text, r.verdict, r.kafka_offset])).sort();
}

for (const f of ['RowBinary', 'TabSeparated'] as const)
test(`4 threads judge a hostile corpus exactly as one thread, rows encoded as ${f}: insert bytes, dead letters, verdicts, news and heads`, async () => {
  format = f;
  const ch = createClickHouse(ctx.config.clickhouse);
  await ch.command({ query: 'TRUNCATE TABLE envelopes' });
  await ch.command({ query: 'TRUNCATE TABLE loop_heads' });
  const one = new EnvelopeStream('t', new EnvelopeStore(ch, undefined, format), OPTIONS, 25);
  const four = new ThreadedStream(new EnvelopeStream('t', new EnvelopeStore(ch, undefined, format), OPTIONS), {
    format,
    threads: 4,
    spec: { stream: 'envelopes', topic: 't', options: OPTIONS, cacheEntries: 7 },
    clickhouse: ctx.config.clickhouse,
    isolate: { metrics: createMetrics(), log },
  });
  try {
    const all = batches();
    let open: { one: EnvelopeRow[]; four: EnvelopeRow[] } = { one: [], four: [] };
    let flight: { n: number; rows: EnvelopeRow[] } | undefined;
    let verdicts = 0;
    const both = async (records: readonly SourceRecord[], what: string): Promise<void> => {
      const a = await one.process(records);
      const b = await four.process(records);
      assert.deepEqual(body(b.rows), body(a.rows), `${what}: insert bytes`);
      assert.deepEqual(news(b.rows), news(a.rows), `${what}: the fields the driver reads`);
      assert.deepEqual(
        b.deadLetters.map((d) => [d.record.offset, d.reason]),
        a.deadLetters.map((d) => [d.record.offset, d.reason]),
      );
      assert.deepEqual(new Map([...b.verdicts].sort()), new Map([...a.verdicts].sort()), `${what}: verdicts`);
      verdicts += [...a.verdicts.keys()].filter((v) => v !== 'ok').length;
      open.one.push(...a.rows);
      open.four.push(...b.rows);
    };
    for (const [i, batch] of all.entries()) {
      // The first flushes carry no record for threads 2 and 3: they start late, at the buffer number the others are at.
      const records = i < 12 ? batch.filter((r) => threadOf(r, 4) < 2) : batch;
      await both(records, `batch ${i}`);
      // A flight lands while the next buffer is judged (the overlap): its
      // rows stored (the one thread's: the same bytes) with their
      // loop_heads, both told; then the batch just judged comes again (a
      // redelivery of rows pending in the open buffer: dropped, both).
      if (flight !== undefined) {
        await one.store.insert(flight.rows);
        await one.store.derive(flight.rows);
        one.durable(flight.n);
        four.durable(flight.n);
        flight = undefined;
        await both(records, `batch ${i} again`);
      }
      // A flush every 5 batches: sealed.
      if (i % 5 === 4) {
        const n = one.seal();
        assert.equal(four.seal(), n);
        assert.deepEqual(heads(open.four), heads(open.one));
        flight = { n, rows: open.one };
        open = { one: [], four: [] };
      }
    }
    assert.ok(verdicts > 10, 'the corpus has violations, duplicates and malformed records');
  } finally {
    await four.close();
    await ch.close();
  }
});

/** A TCP front of ClickHouse that can refuse every connection (a server gone), and let them through again. */
async function switchable(port: number): Promise<{ url: string; down: () => void; up: () => void; close: () => Promise<void> }> {
  let refusing = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    if (refusing) return void client.destroy();
    const upstream = connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => void (client.destroy(), upstream.destroy()));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    down: () => {
      refusing = true;
      for (const s of sockets) s.destroy();
    },
    up: () => void (refusing = false),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

test('a batch one of whose parts fails is retried whole: the part judged already is handed back, not judged again', async () => {
  const ch = createClickHouse(ctx.config.clickhouse);
  const one = new EnvelopeStream('t', new EnvelopeStore(ch), OPTIONS);
  const front = switchable(Number(new URL(ctx.config.clickhouse.url).port));
  const proxy = await front;
  const threads = 2;
  format = 'RowBinary';
  const two = new ThreadedStream(new EnvelopeStream('t', new EnvelopeStore(ch), OPTIONS), {
    format,
    threads,
    spec: { stream: 'envelopes', topic: 't', options: OPTIONS, cacheEntries: 100 },
    clickhouse: { ...ctx.config.clickhouse, url: proxy.url },
    isolate: { metrics: createMetrics(), log },
  });
  try {
    // Loops by the thread their key goes to: A's and B's first envelopes judged while ClickHouse answers.
    const traffic = generateTraffic({ loops: 40, envelopesPerLoop: 8, seed: 5, payloadBytes: 16 });
    const byLoop = new Map<string, Buffer[]>();
    for (const r of traffic.records) byLoop.set(r.key, [...(byLoop.get(r.key) ?? []), r.value]);
    let offset = 0;
    const record = (key: string, value: Buffer): SourceRecord => ({ topic: 't', partition: 0, offset: String(offset++), timestamp: '0', key: Buffer.from(key), value });
    const thread = (key: string): number => threadOf(record(key, Buffer.alloc(0)), threads);
    const loops = [...byLoop.keys()];
    const a = loops.find((k) => thread(k) === 0)!;
    const [b, c] = loops.filter((k) => thread(k) === 1);
    assert.ok(a !== undefined && b !== undefined && c !== undefined);
    const first = [...byLoop.get(a)!.slice(0, 4).map((v) => record(a, v)), ...byLoop.get(b)!.slice(0, 4).map((v) => record(b, v))];
    assert.deepEqual(body(((await two.process(first))).rows), body(((await one.process(first))).rows));
    // The next batch: A's thread needs no read (its head is pending), C's does, and ClickHouse is gone.
    const second = [...byLoop.get(a)!.slice(4).map((v) => record(a, v)), ...byLoop.get(c)!.map((v) => record(c, v))];
    proxy.down();
    await assert.rejects(two.process(second), (err: Error) => err.name !== 'FatalError');
    await assert.rejects(two.process(second), (err: Error) => err.name !== 'FatalError');
    proxy.up();
    const expected = (await one.process(second));
    const got = (await two.process(second));
    // Judged twice, A's envelopes would come back as redeliveries of themselves, dropped.
    assert.deepEqual(got.verdicts, expected.verdicts);
    assert.deepEqual(body(got.rows), body(expected.rows));
    assert.equal(got.rows.filter((r) => r.loop_id === a).length, 4);
    // Records other than the batch kept for: refused as fatal, never judged on a state that moved.
    proxy.down();
    // A's part (a record that is not JSON: no read) is judged, C's redelivery needs a read and fails.
    await assert.rejects(two.process([record(a, Buffer.from('not json')), record(b, byLoop.get(c)![0]!)]), (err: Error) => err.name !== 'FatalError');
    await assert.rejects(two.process([record(a, Buffer.from('other'))]), { name: 'FatalError' });
  } finally {
    await two.close();
    await proxy.close();
    await ch.close();
  }
});
