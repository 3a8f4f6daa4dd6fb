/**
 * Hostile strings through renderSql() into a real ClickHouse and back, byte
 * for byte: as SELECT literals, as INSERT … VALUES data, as WHERE and IN
 * filters. On 18.16 these literals are the only protection against injection
 * (no query parameters). Then the typed reads (src/read/*-reads.ts) and
 * migrationStatus() against the same server.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ClickHouseClient } from '@clickhouse/client';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse, quoteIdent } from '../../src/clickhouse/client.js';
import { clickhouseErrorCode } from '../../src/clickhouse/errors.js';
import { loadMigrations } from '../../src/migrate/migrations.js';
import { migrate, migrationStatus } from '../../src/migrate/migrate.js';
import { EnvelopeStore } from '../../src/store/envelope-store.js';
import { latestViolations, verdictCounts } from '../../src/read/chain-reads.js';
import { serverVersion } from '../../src/clickhouse/server.js';
import { crazeSessions } from '../../src/read/session-reads.js';
import { renderSql } from '../../src/clickhouse/sql.js';
import { testContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
let ch: ClickHouseClient;

before(async () => {
  ctx = await testContext('sql_escaping');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, createLogger('warn'));
  ch = createClickHouse(ctx.config.clickhouse);
});
after(async () => {
  await ch?.close();
  await ctx?.cleanup();
});

const C0 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('') + '\x7f';

/** Valid Unicode text that has broken naive quoting somewhere. */
const HOSTILE: readonly string[] = [
  '',
  "'",
  "''",
  "it's",
  '\\',
  'ends with a backslash\\',
  "\\'",
  "\\\\'",
  "'); DROP TABLE hostile; --",
  "' OR '1'='1",
  "x'); INSERT INTO hostile VALUES (999, 'injected'); --",
  '\0',
  'NUL\0inside',
  '\r\n',
  'line1\nline2\n-- comment\n',
  '\t',
  C0,
  '"double" `back` ;',
  '{s:String} {id:UInt32}',
  "$&$1$$$'$`",
  '%_\\%\\_',
  '\\x27\\0\\n\\N',
  'café ✓ 日本 𝄞 🙂',
  '\u2028\u2029\ufeff\ufffd',
];

const hexOf = (s: string): string => Buffer.from(s, 'utf8').toString('hex').toUpperCase();

async function rows<T>(query: string): Promise<T[]> {
  return ch.query({ query, format: 'JSONEachRow' }).then((r) => r.json<T>());
}

test('hostile strings come back byte for byte from a SELECT literal', async () => {
  for (const value of HOSTILE) {
    const [row] = await rows<{ h: string; s: string }>(renderSql('SELECT hex({s:String}) AS h, {s:String} AS s', { s: value }));
    assert.equal(row?.h, hexOf(value), JSON.stringify(value));
    assert.ok(row?.s === value, JSON.stringify(value));
  }
});

test('INSERT … VALUES, WHERE = and IN filters: each hostile string stored once, found exactly, nothing injected', async () => {
  await ch.command({ query: 'CREATE TABLE hostile (id UInt32, s String) ENGINE = MergeTree ORDER BY id' });
  for (const [id, s] of HOSTILE.entries()) {
    await ch.command({ query: renderSql('INSERT INTO hostile VALUES ({id:UInt32}, {s:String})', { id, s }) });
  }
  const stored = await rows<{ id: number; h: string }>('SELECT id, hex(s) AS h FROM hostile ORDER BY id');
  assert.deepEqual(
    stored.map((r) => [Number(r.id), r.h]),
    HOSTILE.map((s, id) => [id, hexOf(s)]),
    'every row as written, no extra row, the table still there',
  );
  for (const [id, s] of HOSTILE.entries()) {
    const found = await rows<{ id: number }>(renderSql('SELECT id FROM hostile WHERE s = {s:String} ORDER BY id', { s }));
    assert.deepEqual(
      found.map((r) => Number(r.id)),
      [id],
      JSON.stringify(s),
    );
  }
  const inList = await rows<{ id: number }>(renderSql('SELECT id FROM hostile WHERE s IN {ss:Array(String)} ORDER BY id', { ss: HOSTILE }));
  assert.deepEqual(
    inList.map((r) => Number(r.id)),
    HOSTILE.map((_, id) => id),
  );
  const tuples = await rows<{ id: number }>(
    renderSql('SELECT id FROM hostile WHERE (id, s) IN {keys:Array(Tuple(UInt32, String))} ORDER BY id', {
      keys: HOSTILE.map((s, id) => [id, id % 2 === 0 ? s : `${s}x`]),
    }),
  );
  assert.deepEqual(
    tuples.map((r) => Number(r.id)),
    HOSTILE.map((_, id) => id).filter((id) => id % 2 === 0),
  );
  const [other] = await rows<{ n: string }>(renderSql('SELECT count() AS n FROM hostile WHERE s NOT IN {ss:Array(String)}', { ss: HOSTILE }));
  assert.equal(other?.n, '0');
  // An identifier quoted by quoteIdent names the same table.
  const [qualified] = await rows<{ n: string }>(`SELECT count() AS n FROM ${quoteIdent(ctx.config.clickhouse.database)}.${quoteIdent('hostile')}`);
  assert.equal(qualified?.n, String(HOSTILE.length));
});

test('300,000 characters: stored exactly through INSERT … VALUES; as a SELECT literal refused whole, not truncated', async () => {
  await ch.command({ query: 'CREATE TABLE long_values (id UInt32, s String) ENGINE = MergeTree ORDER BY id' });
  const value = ("'\\\0\n" + '🙂').repeat(50_000);
  assert.equal(value.length, 300_000);
  await ch.command({ query: renderSql('INSERT INTO long_values VALUES ({id:UInt32}, {s:String})', { id: 1, s: value }) });
  const [row] = await rows<{ s: string; n: string }>('SELECT s, length(s) AS n FROM long_values WHERE id = 1');
  assert.equal(row?.n, String(Buffer.byteLength(value, 'utf8')));
  assert.ok(row?.s === value, 'the long value reads back exactly');
  // The SQL text of a query (max_query_size, 262144 bytes) is bounded; the
  // data after VALUES is not. ClickHouse refuses a longer query as a syntax
  // error (Code 62, "Max query size exceeded") instead of running a prefix.
  await assert.rejects(
    rows(renderSql('SELECT length({s:String}) AS n', { s: value })),
    (err: unknown) => clickhouseErrorCode(err) === 62,
  );
});

test('what a literal cannot carry: a lone surrogate arrives as U+FFFD', async () => {
  for (const value of ['\ud800', 'a\udfffb', '\udc00\ud800']) {
    const [row] = await rows<{ h: string }>(renderSql('SELECT hex({s:String}) AS h', { s: value }));
    assert.equal(row?.h, hexOf(value.replace(/[\ud800-\udfff]/g, '\ufffd')), JSON.stringify(value));
  }
});

test('crazeSessions: hostile session ids, --since and --limit filtered in ClickHouse, costliest first, zeros without turns', async () => {
  const event = (session_id: string, at: string, cost: bigint, extra: Record<string, unknown> = {}, offset = 0): Record<string, unknown> => ({
    session_id,
    incarnation: 'i1',
    seq: 1 + offset,
    at,
    verdict: 'ok',
    report: cost > 0n ? 1 : 0,
    cost_pico: cost.toString(),
    kafka_topic: 'sql-escaping',
    kafka_partition: 0,
    kafka_offset: offset,
    ingested_at: at,
    ...extra,
  });
  const ids = ["o'brien", 'back\\slash', 'new\nline', "'); DROP TABLE craze_events; --"];
  await ch.insert({
    table: 'craze_events',
    format: 'JSONEachRow',
    values: [
      event(ids[0]!, '2025-03-01 00:00:00', 9_000_000_000_000_000_000n, {}, 0),
      event(ids[0]!, '2025-03-02 00:00:00', 9_000_000_000_000_000_000n, { incarnation: 'i2', model: 'm1' }, 1),
      event(ids[0]!, '2025-03-02 00:00:01', 0n, { turn_id: 't1', turn_outcome: 'done' }, 2),
      event(ids[1]!, '2025-03-03 00:00:00', 5n, { subagent_id: 'a', subagent_change: 'spawned' }, 3),
      event(ids[2]!, '2025-03-04 00:00:00', 0n, {}, 4),
      event(ids[3]!, '2025-03-05 00:00:00', 0n, {}, 5),
    ],
  });
  const all = await crazeSessions(ch);
  // Costliest first; equal cost by session id, byte order ("'" < "n").
  assert.deepEqual(
    all.map((s) => s.sessionId),
    [ids[0], ids[1], ids[3], ids[2]],
  );
  const top = all[0]!;
  assert.equal(top.costPicoUsd, '18000000000000000000', 'exact beyond 2^64');
  assert.deepEqual([top.incarnations, top.turnsDone, top.models, top.firstSeen, top.lastSeen], [2, 1, ['m1'], '2025-03-01 00:00:00', '2025-03-02 00:00:01']);
  assert.deepEqual([all[1]!.subagentsAbandoned, all[1]!.turnsDone, all[1]!.costPicoUsd], [1, 0, '5']);

  const since = await crazeSessions(ch, { since: new Date('2025-03-02T00:00:01Z') });
  assert.deepEqual(
    since.map((s) => s.sessionId),
    [ids[0], ids[1], ids[3], ids[2]],
    'last seen at the bound is kept',
  );
  const later = await crazeSessions(ch, { since: new Date('2025-03-02T00:00:02Z') });
  assert.deepEqual(
    later.map((s) => s.sessionId),
    [ids[1], ids[3], ids[2]],
  );
  assert.deepEqual(
    (await crazeSessions(ch, { since: new Date('2025-03-03T00:00:00Z'), limit: 2 })).map((s) => s.sessionId),
    [ids[1], ids[3]],
  );
  assert.deepEqual(await crazeSessions(ch, { limit: 0 }), []);
  assert.deepEqual(await crazeSessions(ch, { since: new Date('2100-01-01T00:00:00Z') }), []);
  assert.equal((await crazeSessions(ch, { since: new Date('1960-01-01T00:00:00Z') })).length, 4);
});

test('the report reads and serverVersion answer on an empty database', async () => {
  assert.deepEqual(await verdictCounts(ch), []);
  assert.deepEqual(await latestViolations(ch, 20), []);
  assert.match(await serverVersion(ch), /^\d+\.\d+/);
});

test('migrationStatus: all applied here; everything pending in a database that does not exist', async () => {
  const total = (await loadMigrations(MIGRATIONS_DIR)).length;
  const admin = createClickHouse(ctx.config.clickhouse, 'default');
  try {
    const here = await migrationStatus(admin, ctx.config.clickhouse.database, MIGRATIONS_DIR);
    assert.deepEqual(here.applied, Array.from({ length: total }, (_, i) => i + 1));
    assert.deepEqual(here.pending, []);
    const missing = await migrationStatus(admin, `${ctx.config.clickhouse.database}_missing`, MIGRATIONS_DIR);
    assert.deepEqual(missing.applied, []);
    assert.equal(missing.pending.length, total);
    await assert.rejects(migrationStatus(admin, 'no-such`db', MIGRATIONS_DIR), /not a plain identifier/);
  } finally {
    await admin.close();
  }
});

test('heads and versions of 2,000 loops with 140-character ids read back in queries under max_query_size', { timeout: 60_000 }, async () => {
  const ctx2 = await testContext('inlist');
  try {
    await migrate(ctx2.config.clickhouse, MIGRATIONS_DIR, createLogger('warn'));
    const ch = createClickHouse(ctx2.config.clickhouse);
    try {
      const ids = Array.from({ length: 2000 }, (_, i) => `loop-${"é'\\".repeat(20)}-${String(i).padStart(70, '0')}`);
      const store = new EnvelopeStore(ch);
      assert.equal((await store.heads(ids)).size, 0);
      assert.deepEqual(await store.versions(ids.map((id, i) => [id, i + 1] as const)), []);
    } finally {
      await ch.close();
    }
  } finally {
    await ctx2.cleanup();
  }
});
