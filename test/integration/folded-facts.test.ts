/**
 * Migration 0022 (the facts folded into ten slots) against the real 18.16,
 * over rows written before and after it: readers of old and new rows agree.
 *
 * One corpus (generated loop trees with forks, a tampered call, a second
 * version, redeliveries, the whale model past 2^64 picodollars) goes through
 * the envelope pipeline once. Database `before` is migrated to 0021 and gets
 * the first half of the rows as a writer of that layout wrote them (every
 * fact by name, in one big insert and many small ones: several parts, two
 * partitions), then 0022, then the second half through today's store (the
 * slots). Database
 * `fresh` gets every row through today's store. Every fact of every row, and
 * `loops`, `spend`, `report` and the rollups read from both, are the same,
 * and the loops equal the generator's own totals.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { DEFAULT_DECODE_OPTIONS } from '../../src/decode/envelope.js';
import { generateSpendTraffic } from '../../src/demo/traffic/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { ChainState, processEnvelopeBatch } from '../../src/pipeline/envelopes.js';
import type { SourceRecord } from '../../src/pipeline/stream.js';
import { ENVELOPE_FACTS, FACT_NAMES, factSql, SLOT_NAMES, unfoldSlots, type FactName } from '../../src/rows/envelope-facts.js';
import type { EnvelopeRow } from '../../src/rows/rows.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { clickhouseErrorCode } from '../../src/clickhouse/errors.js';
import { EnvelopeStore } from '../../src/store/envelope-store.js';
import { ENVELOPE_COLUMNS } from '../../src/store/columns.js';
import { loadMigrations } from '../../src/migrate/migrations.js';
import { migrate } from '../../src/migrate/migrate.js';
import { insertTsv, type Columns } from '../../src/store/tsv.js';
import { query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { migrationsUpTo } from '../support/migrations.js';
import { MemoryEnvelopeTable } from '../support/memory-tables.js';
import { BIN, runCli } from '../support/processes.js';

const log = createLogger('error');
const traffic = generateSpendTraffic({ seed: 2207, roots: 6 });
let old: TestContext;
let fresh: TestContext;
let rows: EnvelopeRow[];

/** A row as a writer of 0008's layout inserted it: the slots as the facts they hold, by name. */
function oldLayout(row: EnvelopeRow): Record<string, unknown> {
  const { s1, s2, s3, s4, s5, s6, n1, n2, n3, n4, ...rest } = row;
  return { ...rest, ...unfoldSlots(row.kind_class, { s1, s2, s3, s4, s5, s6, n1, n2, n3, n4 }) };
}

before(async () => {
  old = await testContext('fold_old');
  fresh = await testContext('fold_fresh');
  const records: SourceRecord[] = traffic.records.map((r, i) => ({
    topic: 'fold', partition: 0, offset: String(i), timestamp: '1764590400000', key: Buffer.from(r.key), value: r.value,
  }));
  const batch = await processEnvelopeBatch(records, new ChainState(new MemoryEnvelopeTable()), { ...DEFAULT_DECODE_OPTIONS, seqEncoding: 'binary' });
  // Two flushes' stamps: the first half a month earlier (another partition).
  rows = batch.rows.map((r, i) => ({ ...r, ingested_at: i < batch.rows.length / 2 ? '2026-11-20 12:00:00' : '2026-12-01 12:00:00' }));
  const half = Math.floor(rows.length / 2);

  const upTo21 = await migrationsUpTo(21);
  const ch = createClickHouse(old.config.clickhouse);
  try {
    await migrate(old.config.clickhouse, upTo21, log);
    const oldRows = rows.slice(0, half).map(oldLayout);
    // Most of the first half in one insert, the rest in many small ones, so
    // 0022 finds several parts in two partitions.
    await ch.insert({ table: 'envelopes', values: oldRows.slice(0, half - 20), format: 'JSONEachRow' });
    for (const r of oldRows.slice(half - 20)) await ch.insert({ table: 'envelopes', values: [r], format: 'JSONEachRow' });
    await migrate(old.config.clickhouse, MIGRATIONS_DIR, log);
    await new EnvelopeStore(ch).insert(rows.slice(half));
  } finally {
    await ch.close();
    await rm(upTo21, { recursive: true, force: true });
  }
  await migrate(fresh.config.clickhouse, MIGRATIONS_DIR, log);
  const ch2 = createClickHouse(fresh.config.clickhouse);
  try {
    await new EnvelopeStore(ch2).insert(rows);
  } finally {
    await ch2.close();
  }
});
after(async () => {
  await old?.cleanup();
  await fresh?.cleanup();
});

function cli(ctx: TestContext, args: string[]): unknown {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: { PATH: process.env['PATH'] ?? '', ...ctx.env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as unknown;
}

const everyFact = `SELECT loop_id, seq, kafka_offset, verdict, ${FACT_NAMES.join(', ')} FROM envelopes ORDER BY kafka_offset, verdict`;

test('every fact of every row reads the same from the migrated rows as from rows written today, and as the pipeline made it', async () => {
  const a = await query<Record<string, unknown>>(old, everyFact);
  const b = await query<Record<string, unknown>>(fresh, everyFact);
  assert.equal(a.length, rows.length);
  assert.deepEqual(a, b);
  // And as the pipeline's facts, through JSON as JSONEachRow reads them (Int64 as text).
  const byOffset = new Map(a.map((r) => [`${String(r['kafka_offset'])}/${String(r['verdict'])}`, r]));
  let carried = 0;
  for (const row of rows) {
    const got = byOffset.get(`${row.kafka_offset}/${row.verdict}`)!;
    const want = unfoldSlots(row.kind_class, row);
    for (const fact of FACT_NAMES) assert.equal(String(got[fact]), String(want[fact]), `${row.loop_id}/${row.seq} ${fact}`);
    if (want.cost_pico !== '0') carried++;
  }
  assert.ok(carried > 20, `${carried} priced model calls`);
});

test('the migrated table stores the slots in every part and the facts in none; its probe twin takes the same rows', async () => {
  const columns = await query<{ name: string; default_type: string }>(old, 'DESCRIBE TABLE envelopes');
  assert.deepEqual(columns.filter((c) => c.default_type === 'ALIAS').map((c) => c.name), FACT_NAMES);
  const parts = await query<{ name: string; slots: string; facts: string }>(
    old,
    `SELECT name, countIf(column IN (${SLOT_NAMES.map((s) => `'${s}'`).join(', ')})) AS slots, countIf(column IN (${FACT_NAMES.map((f) => `'${f}'`).join(', ')})) AS facts
     FROM system.parts_columns WHERE database = currentDatabase() AND table = 'envelopes' AND active GROUP BY name`,
  );
  assert.ok(parts.length >= 2);
  for (const p of parts) assert.deepEqual([Number(p.slots), Number(p.facts)], [SLOT_NAMES.length, 0], p.name);
  assert.deepEqual(await query(old, 'DESCRIBE TABLE envelopes_probe'), columns);
  const ch = createClickHouse(old.config.clickhouse);
  try {
    await new EnvelopeStore(ch).probe(rows.slice(0, 5));
  } finally {
    await ch.close();
  }
});

test('a writer of the layout before 0022 is refused, with nothing stored', async () => {
  const ch = createClickHouse(old.config.clickhouse);
  try {
    const [before] = await query<{ n: string }>(old, 'SELECT count() AS n FROM envelopes');
    // As that writer inserted: TabSeparated, the facts named.
    const row = oldLayout({ ...rows[0]!, kafka_offset: '999999' });
    const names = Object.keys(row);
    const body = names.map((n) => String(row[n])).join('\t') + '\n';
    const code = await ch.insert({ table: 'envelopes', values: Readable.from([body], { objectMode: false }), format: 'TabSeparated', columns: names as [string, ...string[]] }).then(
      () => 'accepted',
      (err: unknown) => clickhouseErrorCode(err) ?? String(err),
    );
    assert.equal(code, 16, 'No such column');
    const [afterInsert] = await query<{ n: string }>(old, 'SELECT count() AS n FROM envelopes');
    assert.equal(afterInsert?.n, before?.n);
  } finally {
    await ch.close();
  }
});

test('loops, spend and report read the same from both databases, and the loops are the generator\'s own', () => {
  for (const args of [['loops', '--json'], ['spend', '--json'], ['spend', '--json', '--by', 'model'], ['spend', '--json', '--by', 'root'], ['report', '--json']]) {
    assert.deepEqual(cli(old, args), cli(fresh, args), args.join(' '));
  }
  const keys = ['loopId', 'parentLoopId', 'rootLoopId', 'depth', 'name', 'outcome', 'modelCalls', 'modelCostPicoUsd', 'budgetPicoUsd', 'unverifiedModelCostPicoUsd', 'subtreeModelCostPicoUsd', 'forkedFrom', 'forkedAtSeq'] as const;
  const pick = (o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(keys.map((k) => [k, o[k]]));
  assert.deepEqual(
    (cli(old, ['loops', '--json']) as Record<string, unknown>[]).map(pick),
    traffic.expected.loops.map((l) => pick(l as unknown as Record<string, unknown>)),
  );
});

test('the rollups rebuilt over the migrated rows equal those over rows written today', async () => {
  for (const ctx of [old, fresh]) {
    const run = runCli(['rollups', 'rebuild'], ctx.env);
    assert.equal(await run.exited, 0, run.stderr());
  }
  for (const args of [['spend', '--json', '--rollups'], ['spend', '--json', '--rollups', '--by', 'model'], ['spend', '--json', '--rollups', '--by', 'root']]) {
    const a = cli(old, args);
    assert.deepEqual(a, cli(fresh, args), args.join(' '));
    assert.notDeepEqual(a, [], args.join(' '));
  }
});

/** The columns a writer of the layout before 0022 named: the facts by name where the slots are now. */
const OLD_COLUMNS = [...ENVELOPE_COLUMNS.filter((c) => !(SLOT_NAMES as readonly string[]).includes(c)), ...FACT_NAMES] as Columns<Record<string, unknown>>;

test('0022 killed after any of its statements is finished by the next run; an old writer inserting before its first ALTER gets its slots computed', async () => {
  const upTo21 = await migrationsUpTo(21);
  const statements = (await loadMigrations(MIGRATIONS_DIR)).find((m) => m.version === 22)!.statements;
  const adds = statements.filter((s) => s.startsWith('ALTER TABLE envelopes ADD COLUMN')).length;
  assert.equal(adds, SLOT_NAMES.length);
  // Killed after the first slot, after every slot, and after each statement from there on.
  const kills = [1, ...Array.from({ length: statements.length - adds }, (_, i) => adds + i)];
  const early = rows.slice(0, 300);
  const late = rows.slice(300, 400);
  try {
    for (const k of kills) {
      const ctx = await testContext(`fold_kill_${k}`);
      const ch = createClickHouse(ctx.config.clickhouse);
      try {
        await migrate(ctx.config.clickhouse, upTo21, log);
        // Two inserts: two parts for the OPTIMIZE to merge.
        await insertTsv(ch, 'envelopes', early.slice(0, 200).map(oldLayout), OLD_COLUMNS);
        await insertTsv(ch, 'envelopes', early.slice(200).map(oldLayout), OLD_COLUMNS);
        for (const statement of statements.slice(0, k)) await ch.command({ query: statement });
        const beforeFirstAlter = statements[k]?.startsWith('OPTIMIZE') || statements[k]?.startsWith('SELECT') || k === 1;
        // A writer of the old layout still running while the slots are DEFAULT expressions over the facts.
        if (beforeFirstAlter) await insertTsv(ch, 'envelopes', late.map(oldLayout), OLD_COLUMNS);
        await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
        if (!beforeFirstAlter) await new EnvelopeStore(ch).insert(late);

        const got = await query<Record<string, unknown>>(ctx, everyFact);
        assert.equal(got.length, early.length + late.length, `killed after statement ${k}`);
        const byOffset = new Map(got.map((r) => [`${String(r['kafka_offset'])}/${String(r['verdict'])}`, r]));
        for (const row of [...early, ...late]) {
          const stored = byOffset.get(`${row.kafka_offset}/${row.verdict}`);
          assert.ok(stored, `killed after statement ${k}: ${row.loop_id}/${row.seq} stored`);
          const want = unfoldSlots(row.kind_class, row);
          for (const fact of FACT_NAMES) assert.equal(String(stored[fact]), String(want[fact]), `killed after statement ${k}: ${row.loop_id}/${row.seq} ${fact}`);
        }
        const [applied] = await query<{ n: string }>(ctx, 'SELECT count() AS n FROM schema_migrations WHERE version = 22');
        assert.equal(applied?.n, '1', `killed after statement ${k}: 0022 recorded once`);
        const columns = await query<{ name: string; default_type: string }>(ctx, 'DESCRIBE TABLE envelopes');
        assert.deepEqual(columns.filter((c) => c.default_type === 'ALIAS').map((c) => c.name), FACT_NAMES, `killed after statement ${k}`);
      } finally {
        await ch.close();
        await ctx.cleanup();
      }
    }
  } finally {
    await rm(upTo21, { recursive: true, force: true });
  }
});

test('the rollback in docs/operations.md: the facts ordinary columns again, an old version migrates, writes and probes, every fact reads the same', async () => {
  const ctx = await testContext('fold_rollback');
  const ch = createClickHouse(ctx.config.clickhouse);
  const upTo21 = await migrationsUpTo(21);
  try {
    await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
    await new EnvelopeStore(ch).insert(rows.slice(0, 300));
    const zero = (fact: FactName): string => (ENVELOPE_FACTS[fact] === 'String' ? "''" : `to${ENVELOPE_FACTS[fact]}(0)`);
    // The steps as written there, in order.
    await ch.command({ query: `ALTER TABLE envelopes ${FACT_NAMES.map((f) => `MODIFY COLUMN ${f} ${ENVELOPE_FACTS[f]} DEFAULT ${factSql(f)}`).join(', ')}` });
    await ch.command({ query: 'OPTIMIZE TABLE envelopes FINAL' });
    await ch.command({ query: `ALTER TABLE envelopes ${FACT_NAMES.map((f) => `MODIFY COLUMN ${f} ${ENVELOPE_FACTS[f]} DEFAULT ${zero(f)}`).join(', ')}` });
    await ch.command({ query: 'DROP TABLE envelopes_probe' });
    await ch.command({ query: 'CREATE TABLE envelopes_probe AS envelopes ENGINE = Null' });
    await ch.command({ query: 'ALTER TABLE schema_migrations DELETE WHERE version = 22' });

    // The old version: nothing to apply, and its writer's inserts and probes are taken.
    assert.deepEqual((await migrate(ctx.config.clickhouse, upTo21, log)).applied, []);
    const late = rows.slice(300, 400).map(oldLayout);
    await insertTsv(ch, 'envelopes_probe', late, OLD_COLUMNS);
    await insertTsv(ch, 'envelopes', late, OLD_COLUMNS);

    const parts = await query<{ facts: string }>(
      ctx,
      `SELECT countIf(column IN (${FACT_NAMES.map((f) => `'${f}'`).join(', ')})) AS facts FROM system.parts_columns
       WHERE database = currentDatabase() AND table = 'envelopes' AND active GROUP BY name`,
    );
    assert.ok(parts.length >= 2);
    for (const p of parts) assert.equal(Number(p.facts), FACT_NAMES.length, 'every part stores the facts again');
    const got = await query<Record<string, unknown>>(ctx, everyFact);
    assert.equal(got.length, Math.min(rows.length, 400));
    const byOffset = new Map(got.map((r) => [`${String(r['kafka_offset'])}/${String(r['verdict'])}`, r]));
    for (const row of rows.slice(0, 400)) {
      const want = unfoldSlots(row.kind_class, row);
      const stored = byOffset.get(`${row.kafka_offset}/${row.verdict}`)!;
      for (const fact of FACT_NAMES) assert.equal(String(stored[fact]), String(want[fact]), `${row.loop_id}/${row.seq} ${fact}`);
    }
  } finally {
    await ch.close();
    await ctx.cleanup();
    await rm(upTo21, { recursive: true, force: true });
  }
});
