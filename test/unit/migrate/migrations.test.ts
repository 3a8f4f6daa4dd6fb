import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { MIGRATIONS_DIR } from '../../../src/cli/migrate.js';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { ClickHouseClient } from '@clickhouse/client';
import { addedColumn, applyStatement } from '../../../src/migrate/migrate.js';
import { loadMigrations, splitStatements } from '../../../src/migrate/migrations.js';

/** SHA-256 of each released migration file, as shipped. */
const RELEASED = {
  '0001_envelopes.sql': '380ff5418e045316697a93f6612448c7f39dbe07fa21a8200272a37be67bd046',
  '0002_chain_violations.sql': 'c1b0a89f9b1445c5b192fced7e82aea70eb2b8eeee4e08ee8f51a994683f9ccf',
  '0003_craze_events.sql': '7fd79cb74f16c5cd35c29ee423bd3f5bbaece828bf16d472705da538def8e9b6',
  '0004_craze_views.sql': 'ccdc15af0d99ac7f15bbc60077b12b74702b58ba9825824271a7d2b7af863920',
  '0005_chain_violations_view.sql': '3a077e19bf54b8fb9846ebbbb0c7bbb2e13b184534b14abbb49c5ad66ebd69f0',
  '0006_loop_heads.sql': 'ba45b3d00add328c8448d0a2160e14b05984f74a3ff3a604c6538a469dce3372',
  '0007_probe_tables.sql': '891c07fdbacc2684cff4b361f2339ad7bcd96ff3a5bcbadf04cb98b4ba953424',
} as const;

test('statements split on a semicolon that ends a line; comment lines dropped', () => {
  const sql = `-- header; with a semicolon\nCREATE TABLE a (x String DEFAULT ';') ENGINE = Log;\n\nCREATE TABLE b (y UInt8)\nENGINE = Log;\n`;
  assert.deepEqual(splitStatements(sql), [
    "CREATE TABLE a (x String DEFAULT ';') ENGINE = Log",
    'CREATE TABLE b (y UInt8)\nENGINE = Log',
  ]);
});

test('the shipped migrations are numbered without holes and every statement is idempotent', async () => {
  const migrations = await loadMigrations(MIGRATIONS_DIR);
  assert.ok(migrations.length >= 1);
  migrations.forEach((m, i) => assert.equal(m.version, i + 1));
  for (const m of migrations) {
    for (const s of m.statements) {
      // A run killed half-way through a file is finished by the next run only if
      // re-running a statement is harmless.
      // An ADD COLUMN is idempotent through the migrator (applyStatement):
      // only as a single column, which addedColumn() recognises.
      // An ALTER of MODIFY COLUMN commands only sets each column to a given
      // definition: run again, it changes nothing.
      if (/^ALTER TABLE \S+\s+MODIFY COLUMN /i.test(s)) {
        assert.doesNotMatch(s, /\b(ADD|DROP|CLEAR|RENAME)\s+COLUMN\b|\bDELETE\b|\bUPDATE\b/i, `${m.name}: ${s.slice(0, 80)} mixes MODIFY with another command`);
        continue;
      }
      if (/^ALTER TABLE \S+ ADD COLUMN /i.test(s)) {
        assert.ok(addedColumn(s), `${m.name}: ${s.slice(0, 80)} adds more than one column, or is not recognised`);
        assert.match(s, /\sDEFAULT\s/, `${m.name}: ${s.slice(0, 80)}: rows stored before it need a default`);
        continue;
      }
      assert.match(
        s,
        /^(CREATE (TABLE|MATERIALIZED VIEW|VIEW|DATABASE) IF NOT EXISTS|DROP TABLE IF EXISTS|ALTER TABLE \S+ (ADD|DROP|MODIFY) COLUMN IF|INSERT INTO loop_heads\s+SELECT|OPTIMIZE TABLE \w+ FINAL$|SELECT throwIf\()/i,
        `${m.name}: ${s.slice(0, 60)}`,
      );
      // Features missing from ClickHouse 18.16 (docs/input-contracts.md §5).
      assert.doesNotMatch(s, /DateTime64|\bMap\(|Int128|JSONExtract|toStartOfInterval|\bTTL\b|LowCardinality|\{[a-z_]+:[A-Za-z]/, `${m.name} uses a feature ClickHouse 18.16 lacks`);
    }
  }
});

test('the migrated schema has no materialized view: nothing exact is derived from a raw insert (docs/input-contracts.md §4)', async () => {
  const live = new Set<string>();
  for (const m of await loadMigrations(MIGRATIONS_DIR)) {
    for (const s of m.statements) {
      const created = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+)/i.exec(s);
      if (created) live.add(created[1]!);
      const dropped = /^DROP TABLE IF EXISTS (\w+)/i.exec(s);
      if (dropped) live.delete(dropped[1]!);
    }
  }
  assert.deepEqual([...live], []);
});

test('a misnumbered folder is refused', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mig-'));
  await writeFile(join(dir, '0001_a.sql'), 'CREATE TABLE IF NOT EXISTS a (x UInt8) ENGINE = Log;\n');
  await writeFile(join(dir, '0003_c.sql'), 'CREATE TABLE IF NOT EXISTS c (x UInt8) ENGINE = Log;\n');
  await assert.rejects(loadMigrations(dir), /without holes/);
  await writeFile(join(dir, 'bad name.sql'), '');
  await assert.rejects(loadMigrations(dir), /NNNN_name\.sql/);
  // Mended, the same folder loads: the refusals came from the hole and the name,
  // not from a loader that refuses every folder.
  await rm(join(dir, 'bad name.sql'));
  await writeFile(join(dir, '0002_b.sql'), '-- b\nCREATE TABLE IF NOT EXISTS b (x UInt8)\nENGINE = Log;\n');
  const loaded = await loadMigrations(dir);
  assert.deepEqual(
    loaded.map(({ version, name, statements }) => ({ version, name, statements })),
    [
      { version: 1, name: 'a', statements: ['CREATE TABLE IF NOT EXISTS a (x UInt8) ENGINE = Log'] },
      { version: 2, name: 'b', statements: ['CREATE TABLE IF NOT EXISTS b (x UInt8)\nENGINE = Log'] },
      { version: 3, name: 'c', statements: ['CREATE TABLE IF NOT EXISTS c (x UInt8) ENGINE = Log'] },
    ],
  );
  await rm(dir, { recursive: true, force: true });
});

test('an ADD COLUMN statement is recognised with its table, column and type; other statements are not', () => {
  assert.deepEqual(addedColumn("ALTER TABLE envelopes ADD COLUMN cost_usd_text String DEFAULT ''"), { table: 'envelopes', column: 'cost_usd_text', type: 'String' });
  assert.deepEqual(addedColumn('alter table t add column at DateTime(\'UTC\')'), { table: 't', column: 'at', type: "DateTime('UTC')" });
  assert.deepEqual(addedColumn('ALTER TABLE t\n  ADD COLUMN n Int64 DEFAULT 0'), { table: 't', column: 'n', type: 'Int64' });
  // A DEFAULT whose commas are a function's arguments or inside quotes is one column (0022's slots).
  assert.deepEqual(addedColumn("ALTER TABLE envelopes ADD COLUMN s1 String DEFAULT multiIf(kind_class = 'A', a, kind_class IN ('B', 'C'), b, ',')"), { table: 'envelopes', column: 's1', type: 'String' });
  for (const s of [
    'ALTER TABLE t ADD COLUMN a Int64 DEFAULT 0, ADD COLUMN b Int64 DEFAULT 0',
    "ALTER TABLE t ADD COLUMN a String DEFAULT multiIf(k = 'x', b, ''), MODIFY COLUMN c String ALIAS a",
    "ALTER TABLE t ADD COLUMN a String DEFAULT concat('(', b), ADD COLUMN d UInt8",
    "ALTER TABLE t ADD COLUMN a String DEFAULT 'it\\'s, (', ADD COLUMN d UInt8",
    'ALTER TABLE t ADD COLUMN IF NOT EXISTS a Int64',
    'ALTER TABLE t DROP COLUMN a',
    'CREATE TABLE IF NOT EXISTS t (a Int64) ENGINE = Log',
  ]) {
    assert.equal(addedColumn(s), undefined, s);
  }
});

/** A client whose every command fails with `code`, and whose system.columns holds `columns` (table.name -> type). */
function refusingClient(code: number, columns: Record<string, string>): { ch: ClickHouseClient; queries: string[] } {
  const queries: string[] = [];
  const ch = {
    command: () => Promise.reject(Object.assign(new Error(`Code: ${code}. DB::Exception: refused`), { code: String(code) })),
    query: ({ query }: { query: string }) => {
      queries.push(query);
      const m = /table = '(\w+)' AND name = '(\w+)'/.exec(query);
      const type = m ? columns[`${m[1]}.${m[2]}`] : undefined;
      return Promise.resolve({ json: () => Promise.resolve(type === undefined ? [] : [{ type }]) });
    },
  };
  return { ch: ch as unknown as ClickHouseClient, queries };
}

test('an ADD COLUMN refused because its column is there with its type is done (a run killed half-way through its file); nothing else is', async () => {
  const add = 'ALTER TABLE envelopes ADD COLUMN cost_pico Int64 DEFAULT 0';
  // 44 ILLEGAL_COLUMN (ClickHouse 18.16) or 15 DUPLICATE_COLUMN (current), the column there: done.
  for (const code of [15, 44]) await applyStatement(refusingClient(code, { 'envelopes.cost_pico': 'Int64' }).ch, add);
  // The code but no such column: the refusal was something else.
  await assert.rejects(applyStatement(refusingClient(15, { 'envelopes.other': 'Int64' }).ch, add), /Code: 15/);
  // The column there with another type: not what the migration adds.
  await assert.rejects(applyStatement(refusingClient(15, { 'envelopes.cost_pico': 'String' }).ch, add), /envelopes\.cost_pico exists as String, but the migration adds it as Int64/);
  // Another code (a syntax error, a lost connection): refused as it came, without asking.
  const other = refusingClient(62, { 'envelopes.cost_pico': 'Int64' });
  await assert.rejects(applyStatement(other.ch, add), /Code: 62/);
  assert.deepEqual(other.queries, []);
  // A statement that is not a single ADD COLUMN is never excused.
  await assert.rejects(applyStatement(refusingClient(15, { 'envelopes.cost_pico': 'Int64' }).ch, 'ALTER TABLE envelopes ADD COLUMN IF NOT EXISTS cost_pico Int64'), /Code: 15/);
});

test('envelopes_probe gets every column envelopes gets, in the same order (it must take the same rows)', async () => {
  // The probe is made AS envelopes (0007, again in 0022 after its DROP), then
  // gets every column added to envelopes; a MODIFY of envelopes is followed by
  // making the probe again.
  const envelopes: string[] = [];
  let probe: string[] = [];
  let modifiedSinceProbe = false;
  for (const m of await loadMigrations(MIGRATIONS_DIR)) {
    for (const s of m.statements) {
      const added = addedColumn(s);
      if (added?.table === 'envelopes') envelopes.push(`${added.column} ${added.type}`);
      else if (added?.table === 'envelopes_probe') probe.push(`${added.column} ${added.type}`);
      else if (/^ALTER TABLE envelopes\s+MODIFY COLUMN/i.test(s)) modifiedSinceProbe = true;
      else if (/^CREATE TABLE IF NOT EXISTS envelopes_probe AS envelopes ENGINE = Null$/.test(s)) {
        probe = [...envelopes];
        modifiedSinceProbe = false;
      }
    }
  }
  assert.ok(envelopes.includes('cost_pico Int64') && envelopes.includes('n4 Int64'));
  assert.deepEqual(probe, envelopes);
  assert.equal(modifiedSinceProbe, false, 'envelopes was modified after envelopes_probe was last made from it');
});

test('released migrations are byte-identical (migrate refuses an edited one by its checksum)', async () => {
  for (const [file, sha] of Object.entries(RELEASED)) {
    const text = await readFile(join(MIGRATIONS_DIR, file));
    assert.equal(createHash('sha256').update(text).digest('hex'), sha, `${file} was edited: add a new migration instead`);
  }
});
