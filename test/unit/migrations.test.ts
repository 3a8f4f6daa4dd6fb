import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { loadMigrations, splitStatements } from '../../src/sink/clickhouse/migrate.js';

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
      assert.match(
        s,
        /^(CREATE (TABLE|MATERIALIZED VIEW|VIEW|DATABASE) IF NOT EXISTS|DROP TABLE IF EXISTS|ALTER TABLE \S+ (ADD|DROP|MODIFY) COLUMN IF|INSERT INTO loop_heads\s+SELECT)/i,
        `${m.name}: ${s.slice(0, 60)}`,
      );
      // Features missing from ClickHouse 18.16 (DESIGN.md §5).
      assert.doesNotMatch(s, /DateTime64|\bMap\(|Int128|JSONExtract|toStartOfInterval|\bTTL\b|LowCardinality|\{[a-z_]+:[A-Za-z]/, `${m.name} uses a feature ClickHouse 18.16 lacks`);
    }
  }
});

test('the migrated schema has no materialized view: nothing exact is derived from a raw insert (DESIGN.md §4)', async () => {
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
