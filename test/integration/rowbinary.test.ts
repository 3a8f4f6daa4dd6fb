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
import { NO_SLOTS } from '../../src/rows/envelope-facts.js';
import type { CrazeRow, EnvelopeRow } from '../../src/rows/rows.js';
import { CRAZE_TABLE, ENVELOPE_TABLE, LOOP_HEAD_TABLE } from '../../src/store/columns.js';
import { CrazeStore } from '../../src/store/craze-store.js';
import { EnvelopeStore } from '../../src/store/envelope-store.js';
import { encodeRows, INSERT_FORMATS, insertRows, type InsertFormat } from '../../src/store/insert-format.js';
import { specDrift, type DescribedColumn, type TableSpec } from '../../src/store/table-spec.js';
import { testContext, type TestContext } from '../support/context.js';

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

const C0 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('') + '\x7f';

/** Strings that have broken a writer somewhere, and lengths at the LEB128 boundaries. */
const HOSTILE: readonly string[] = [
  '',
  '\0',
  'NUL\0inside',
  '\t',
  'tab\tinside',
  '\n',
  '\r\n',
  '\\',
  'ends with a backslash\\',
  '\\t is not a tab',
  C0,
  "'); DROP TABLE envelopes; --",
  'é ü 漢字',
  '🙂 four-byte 𝄞',
  'lone \ud800 high',
  'lone \udc00 low',
  '\udfff',
  `${'q'.repeat(15)}🙂`,
  'a'.repeat(127),
  'a'.repeat(128),
  'é'.repeat(64),
  'x'.repeat(16383),
  'x'.repeat(16384),
  `${'€'.repeat(5462)}\t\n\\`,
  `{"payload":"${'p'.repeat(70_000)}"}`,
];

const at = (i: number): string => HOSTILE[i % HOSTILE.length]!;

/** Envelope rows carrying the hostile strings in every String column, and integers and times at their ends. */
function envelopeRows(topic: string): EnvelopeRow[] {
  const ends = ['0', '9223372036854775807', '-9223372036854775808', '-1', '9007199254740993'];
  const times = ['1970-01-01 00:00:00', '2105-12-31 23:59:59', '2026-11-30 10:00:00', '2038-01-19 03:14:08'];
  return HOSTILE.map((s, i) => ({
    loop_id: `loop-${i}-${s.slice(0, 40)}`,
    seq: i === 0 ? Number.MAX_SAFE_INTEGER : i,
    time: times[i % times.length]!,
    time_text: at(i + 1),
    kind: at(i + 2),
    kind_class: at(i + 3),
    hash: at(i + 4),
    computed_hash: at(i + 5),
    payload: s,
    verdict: i % 2 === 0 ? 'ok' : 'gap',
    detail: at(i + 6),
    evidence: at(i + 7),
    ...NO_SLOTS,
    s1: at(i + 8),
    s6: at(i + 9),
    n1: ends[i % ends.length]!,
    n2: ends[(i + 1) % ends.length]!,
    n3: ends[(i + 2) % ends.length]!,
    n4: String(-i),
    kafka_topic: topic,
    kafka_partition: i === 1 ? 4294967295 : i,
    kafka_offset: i === 2 ? '18446744073709551615' : String(1000 + i),
    ingested_at: times[(i + 1) % times.length]!,
  }));
}

function crazeRows(topic: string): CrazeRow[] {
  return HOSTILE.map((s, i) => ({
    session_id: `session-${i}-${s.slice(0, 40)}`,
    incarnation: at(i + 1),
    seq: i + 1,
    event_type: at(i + 2),
    at: i % 2 === 0 ? '2105-12-31 23:59:59' : '1970-01-01 00:00:00',
    at_text: at(i + 3),
    agent: at(i + 4),
    replayed: (i % 2) as 0 | 1,
    event: s,
    verdict: 'ok',
    detail: at(i + 5),
    cwd: at(i + 6),
    provider: at(i + 7),
    craze_version: at(i + 8),
    model: at(i + 9),
    report: 1,
    cost_pico: i % 2 === 0 ? '9223372036854775807' : '-9223372036854775808',
    input_tokens: String(i),
    output_tokens: '0',
    reasoning_tokens: '-1',
    cache_read_tokens: '4294967296',
    cache_creation_tokens: '9007199254740993',
    unpriced: 0,
    turn_id: at(i + 10),
    turn_outcome: at(i + 11),
    turn_synthetic: 1,
    err_class: at(i + 12),
    subagent_id: at(i + 13),
    subagent_attempt: at(i + 14),
    subagent_change: at(i + 15),
    subagent_status: at(i + 16),
    tool_name: at(i + 17),
    tool_kind: at(i + 18),
    tool_status: at(i + 19),
    tool_exit_code: -i,
    ask_kind: at(i + 20),
    ask_outcome: at(i + 21),
    ask_by: at(i + 22),
    compaction_phase: at(i + 23),
    compaction_reason: at(i + 24),
    tokens_before: Number.MAX_SAFE_INTEGER,
    tokens_after: Number.MIN_SAFE_INTEGER,
    error_class: s,
    error_code: 0,
    account_state: at(i + 1),
    kafka_topic: topic,
    kafka_partition: i,
    kafka_offset: String(i),
    ingested_at: '2026-12-07 12:00:00',
  }));
}

/** The spec without kafka_topic: the one column that tells the two inserts apart. */
function withoutTopic<Row>(spec: TableSpec<Row>): TableSpec<Row> {
  const keep = spec.columns.map((c, i) => [c, spec.types[i]!] as const).filter(([c]) => c !== 'kafka_topic');
  return { columns: keep.map(([c]) => c) as unknown as TableSpec<Row>['columns'], types: keep.map(([, t]) => t) };
}

/** Rows in the order the read-backs ask for (one offset is UInt64's largest). */
const byOffset = <Row extends { kafka_offset: string }>(rows: Row[]): Row[] => rows.sort((a, b) => (BigInt(a.kafka_offset) < BigInt(b.kafka_offset) ? -1 : 1));

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
  // An out-of-range 64-bit value: TabSeparated on 18.16 would store something else; RowBinary refuses it.
  const over = envelopeRows('over').slice(0, 1);
  over[0]!.kafka_offset = '18446744073709551616';
  await assert.rejects(rbStore.probe(over), /out of UInt64's range/);
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
