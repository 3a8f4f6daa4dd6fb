/**
 * The two insert formats (src/store/insert-format.ts) against the real
 * server: the same hostile rows inserted through the stores once as
 * TabSeparated and once as RowBinary read back byte for byte the same, and
 * as the RowBinary encoder writes them (the server's own RowBinary output of
 * rows it parsed from text is the reference: nothing of the encoder is in
 * it). Every string the TabSeparated path escapes, 4-byte UTF-8, lone
 * surrogates, lengths at the LEB128 boundaries, 64-bit integers at both
 * ends, DateTime at both ends of its range; envelopes, craze_events,
 * loop_heads (derive) and the probe tables. Then the declared column types
 * against the migrated tables (specDrift), a value RowBinary cannot carry
 * (a ContentError before anything is sent, as the server refuses it in
 * TabSeparated), and the query id a RowBinary insert runs under.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ClickHouseClient } from '@clickhouse/client';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { ContentError } from '../../src/errors/errors.js';
import { migrate } from '../../src/migrate/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import type { EnvelopeRow } from '../../src/rows/rows.js';
import { CRAZE_TABLE, ENVELOPE_TABLE, LOOP_HEAD_TABLE } from '../../src/store/columns.js';
import { CrazeStore } from '../../src/store/craze-store.js';
import { EnvelopeStore } from '../../src/store/envelope-store.js';
import { encodeRows, INSERT_FORMATS, insertRows, type InsertFormat } from '../../src/store/insert-format.js';
import { specDrift, type DescribedColumn, type TableSpec } from '../../src/store/table-spec.js';
import { testContext, type TestContext } from '../support/context.js';
import { byOffset, crazeRows, envelopeRows } from '../support/hostile-rows.js';

let ctx: TestContext;
let ch: ClickHouseClient;

before(async () => {
  ctx = await testContext('rowbinary');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, createLogger('warn'));
  ch = createClickHouse(ctx.config.clickhouse);
});
after(async () => {
  await ch?.close();
  await ctx?.cleanup();
});

/** The spec without kafka_topic: the one column that tells the two inserts apart. */
function withoutTopic<Row>(spec: TableSpec<Row>): TableSpec<Row> {
  const keep = spec.columns.map((c, i) => [c, spec.types[i]!] as const).filter(([c]) => c !== 'kafka_topic');
  return { columns: keep.map(([c]) => c) as unknown as TableSpec<Row>['columns'], types: keep.map(([, t]) => t) };
}

/** The rows of `table` from one topic, as the server writes them in RowBinary, in Kafka offset order. */
async function readBack<Row>(table: string, spec: TableSpec<Row>, topic: string, order: string): Promise<Buffer> {
  const result = await ch.exec({ query: `SELECT ${spec.columns.join(', ')} FROM ${table} WHERE kafka_topic = '${topic}' ORDER BY ${order} FORMAT RowBinary` });
  const parts: Buffer[] = [];
  for await (const chunk of result.stream) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

test('the declared column types are the migrated tables\' (no drift): envelopes, craze_events, loop_heads and the probes', async () => {
  const described = await (
    await ch.query({ query: `SELECT table, name, type, default_kind FROM system.columns WHERE database = currentDatabase()`, format: 'JSONEachRow' })
  ).json<DescribedColumn & { table: string }>();
  const of = (table: string): DescribedColumn[] => described.filter((c) => c.table === table);
  const drift = [
    ...specDrift('envelopes', of('envelopes'), ENVELOPE_TABLE),
    ...specDrift('envelopes_probe', of('envelopes_probe'), ENVELOPE_TABLE),
    ...specDrift('craze_events', of('craze_events'), CRAZE_TABLE),
    ...specDrift('craze_events_probe', of('craze_events_probe'), CRAZE_TABLE),
    ...specDrift('loop_heads', of('loop_heads'), LOOP_HEAD_TABLE),
  ];
  assert.deepEqual(drift, []);
  assert.ok(of('envelopes').length > ENVELOPE_TABLE.columns.length, 'the fact ALIAS columns are there and left out');
});

test('envelopes and loop_heads: hostile rows read back byte for byte the same through both formats, and as the encoder writes them', async () => {
  for (const format of INSERT_FORMATS) {
    const store = new EnvelopeStore(ch, undefined, format);
    const rows = envelopeRows(format);
    await store.probe(rows);
    await store.insert(rows, `rowbinary-test-${format}-${ctx.id}`);
    await store.derive(rows);
  }
  const spec = withoutTopic(ENVELOPE_TABLE);
  const want = Buffer.concat(encodeRows('RowBinary', spec, byOffset(envelopeRows('any'))));
  const order = 'kafka_offset';
  const tsv = await readBack('envelopes', spec, 'TabSeparated', order);
  const rb = await readBack('envelopes', spec, 'RowBinary', order);
  assert.equal(tsv.length, want.length);
  assert.ok(tsv.equals(want), 'the TabSeparated rows read back as the encoder writes them');
  assert.ok(rb.equals(tsv), 'the RowBinary rows read back as the TabSeparated ones');

  const heads = withoutTopic(LOOP_HEAD_TABLE);
  const headsTsv = await readBack('loop_heads', heads, 'TabSeparated', 'kafka_offset');
  const headsRb = await readBack('loop_heads', heads, 'RowBinary', 'kafka_offset');
  assert.ok(headsTsv.length > 0);
  assert.ok(headsTsv.equals(Buffer.concat(encodeRows('RowBinary', heads, byOffset(envelopeRows('any'))))), 'every loop is its own head');
  assert.ok(headsRb.equals(headsTsv));

  // And as text, for a reader's eye: the 64-bit ends exact.
  const text = await (
    await ch.query({ query: `SELECT kafka_topic, n2, kafka_offset FROM envelopes WHERE kafka_offset IN (1000, 1001, 18446744073709551615) ORDER BY kafka_topic, kafka_offset`, format: 'JSONEachRow' })
  ).json<{ kafka_topic: string; n2: string; kafka_offset: string }>();
  assert.deepEqual(
    text.map((r) => [r.kafka_topic, r.n2, r.kafka_offset]),
    [
      ['RowBinary', '9223372036854775807', '1000'],
      ['RowBinary', '-9223372036854775808', '1001'],
      ['RowBinary', '-1', '18446744073709551615'],
      ['TabSeparated', '9223372036854775807', '1000'],
      ['TabSeparated', '-9223372036854775808', '1001'],
      ['TabSeparated', '-1', '18446744073709551615'],
    ],
  );
});

test('craze_events: hostile rows read back byte for byte the same through both formats, and as the encoder writes them', async () => {
  for (const format of INSERT_FORMATS) {
    const store = new CrazeStore(ch, undefined, format);
    await store.probe(crazeRows(format));
    await store.insert(crazeRows(format));
  }
  const spec = withoutTopic(CRAZE_TABLE);
  const tsv = await readBack('craze_events', spec, 'TabSeparated', 'kafka_offset');
  const rb = await readBack('craze_events', spec, 'RowBinary', 'kafka_offset');
  assert.ok(tsv.equals(Buffer.concat(encodeRows('RowBinary', spec, crazeRows('any')))));
  assert.ok(rb.equals(tsv));
});

test('a value RowBinary cannot carry is a ContentError before anything is sent, as the server refuses it in TabSeparated', async () => {
  const bad = (format: InsertFormat): EnvelopeRow[] => {
    const rows = envelopeRows(`refused-${format}`).slice(0, 3);
    rows[1]!.n1 = '1 is not a number';
    return rows;
  };
  const tsvStore = new EnvelopeStore(ch, undefined, 'TabSeparated');
  await assert.rejects(tsvStore.probe(bad('TabSeparated')), (err: unknown) => err instanceof ContentError && /Code: (6|27|72)\b/.test(err.message));
  const rbStore = new EnvelopeStore(ch, undefined, 'RowBinary');
  await assert.rejects(rbStore.probe(bad('RowBinary')), (err: unknown) => err instanceof ContentError && /RowBinary: column n1 is not an integer/.test(err.message));
  await assert.rejects(rbStore.insert(bad('RowBinary')), ContentError);
  const [stored] = await (await ch.query({ query: `SELECT count() AS n FROM envelopes WHERE kafka_topic = 'refused-RowBinary'`, format: 'JSONEachRow' })).json<{ n: string }>();
  assert.equal(Number(stored!.n), 0);
  // An out-of-range 64-bit value: 18.16's TabSeparated parser stores another value without a word; RowBinary refuses it.
  const over = envelopeRows('over').slice(0, 1);
  over[0]!.kafka_offset = '18446744073709551616';
  await assert.rejects(rbStore.probe(over), /out of UInt64's range/);
  await tsvStore.insert(over);
  const [wrapped] = await (await ch.query({ query: `SELECT toString(kafka_offset) AS o FROM envelopes WHERE kafka_topic = 'over'`, format: 'JSONEachRow' })).json<{ o: string }>();
  assert.ok(wrapped !== undefined && wrapped.o !== '18446744073709551616', `TabSeparated stored ${wrapped?.o ?? 'nothing'}`);
});

test('a RowBinary insert runs under the query id it is given (the writer finds and settles a lost insert by it)', async () => {
  // A view that sleeps on every block keeps the insert running while system.processes is read.
  await ch.command({ query: 'CREATE MATERIALIZED VIEW slow_probe ENGINE = Null AS SELECT loop_id, sleep(2) AS slept FROM envelopes_probe' });
  try {
    const queryId = `rowbinary-query-id-${ctx.id}`;
    const reader = createClickHouse(ctx.config.clickhouse);
    try {
      const named = insertRows(ch, 'envelopes_probe', ENVELOPE_TABLE, envelopeRows('slow').slice(0, 2), 'RowBinary', queryId);
      let running: { query_id: string; query: string }[] = [];
      for (let i = 0; i < 40 && running.length === 0; i++) {
        running = await (await reader.query({ query: `SELECT query_id, query FROM system.processes WHERE query_id = '${queryId}'`, format: 'JSONEachRow' })).json<{ query_id: string; query: string }>();
        if (running.length === 0) await new Promise((r) => setTimeout(r, 50));
      }
      await named;
      assert.equal(running.length, 1, 'the insert ran under its query id');
      assert.match(running[0]!.query, /^INSERT INTO envelopes_probe \(loop_id, seq, .*, ingested_at\) FORMAT RowBinary/);
    } finally {
      await reader.close();
    }
  } finally {
    await ch.command({ query: 'DROP TABLE slow_probe' });
  }
});
