/**
 * Every shipped migration rendered both ways (src/migrate/cluster-ddl.ts):
 * without a cluster, the statements themselves; with one, the cluster form
 * docs/architecture.md "One schema, two engines" describes. Whether the
 * rendered text runs is test/integration/cluster-migrate.test.ts's (18.16).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MIGRATIONS_DIR } from '../../../src/cli/migrate.js';
import { atServer, bookkeepingTable, globalIn, renderMigrations, shardKey } from '../../../src/migrate/cluster-ddl.js';
import { mutationSql, type ClusterTarget } from '../../../src/clickhouse/cluster.js';
import { addedColumn } from '../../../src/migrate/migrate.js';
import { loadMigrations, type Migration } from '../../../src/migrate/migrations.js';
import { querySql } from '../../../src/rollups/queries.js';
import { renderSql } from '../../../src/clickhouse/sql.js';

const TARGET: ClusterTarget = { cluster: 'agentledger', database: 'ledger_db' };

async function rendered(): Promise<{ version: number; sql: string; where: string }[]> {
  const migrations = await loadMigrations(MIGRATIONS_DIR);
  return renderMigrations(migrations, TARGET).flatMap((r) => r.statements.map((s) => ({ version: r.migration.version, ...s })));
}

test('without a cluster every migration renders to its own statements, in order', async () => {
  const migrations = await loadMigrations(MIGRATIONS_DIR);
  const out = renderMigrations(migrations, undefined);
  assert.equal(out.length, migrations.length);
  out.forEach((r, i) => {
    assert.equal(r.migration, migrations[i]);
    assert.deepEqual(
      r.statements.map((s) => s.sql),
      migrations[i]!.statements,
    );
    assert.ok(r.statements.every((s) => s.where === 'here'));
  });
});

test('without a cluster the bookkeeping tables are the ones migrate always created', () => {
  assert.equal(
    bookkeepingTable('schema_migrations', 'version UInt32, name String, checksum String, applied_at DateTime', 'version', undefined, true),
    'CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String, checksum String, applied_at DateTime) ENGINE = MergeTree ORDER BY version',
  );
  assert.equal(
    bookkeepingTable('schema_migrations_lock', 'owner String, taken_at DateTime', '', undefined, false),
    'CREATE TABLE schema_migrations_lock (owner String, taken_at DateTime) ENGINE = Log',
  );
});

test('on a cluster the bookkeeping tables are replicated on every server under one path without {shard}', () => {
  assert.equal(
    bookkeepingTable('schema_migrations', 'version UInt32', 'version', TARGET, true),
    "CREATE TABLE IF NOT EXISTS ledger_db.schema_migrations ON CLUSTER agentledger (version UInt32) ENGINE = ReplicatedMergeTree('/clickhouse/tables/all/ledger_db/schema_migrations', '{replica}') ORDER BY version",
  );
  assert.match(bookkeepingTable('schema_migrations_lock', 'owner String', '', TARGET, false), /^CREATE TABLE ledger_db\.schema_migrations_lock ON CLUSTER agentledger .* ORDER BY tuple\(\)$/);
});

test('on a cluster no statement is left with a plain MergeTree engine, and every DDL is ON CLUSTER on a qualified name', async () => {
  const all = await rendered();
  assert.ok(all.length > 0);
  for (const { version, sql } of all) {
    assert.doesNotMatch(sql, /ENGINE\s*=\s*(?!Replicated)\w*MergeTree/i, `${version}: ${sql.slice(0, 80)}`);
    if (/^(CREATE|ALTER|DROP|OPTIMIZE)\b/i.test(sql)) {
      assert.match(
        sql,
        /^(CREATE (TABLE|VIEW|MATERIALIZED VIEW) IF NOT EXISTS|ALTER TABLE|DROP TABLE IF EXISTS|OPTIMIZE TABLE) ledger_db\.\w+ ON CLUSTER agentledger\b/,
        `${version}: ${sql.slice(0, 100)}`,
      );
    }
  }
});

test('on a cluster each MergeTree table becomes a replicated _local table followed by its Distributed table, engine arguments kept', async () => {
  const all = await rendered();
  const migrations = await loadMigrations(MIGRATIONS_DIR);
  const merge = migrations.flatMap((m) => m.statements).filter((s) => /ENGINE\s*=\s*\w*MergeTree/i.test(s));
  const locals = all.filter((s) => /^CREATE TABLE IF NOT EXISTS ledger_db\.\w+_local ON CLUSTER/.test(s.sql));
  assert.equal(locals.length, merge.length);
  for (const original of merge) {
    const [, name, variant, args] = /^CREATE TABLE IF NOT EXISTS (\w+)[\s\S]*ENGINE\s*=\s*(\w*)MergeTree(?:\(([^()]*)\))?/i.exec(original)!;
    const i = all.findIndex((s) => s.sql.startsWith(`CREATE TABLE IF NOT EXISTS ledger_db.${name}_local ON CLUSTER agentledger `));
    assert.ok(i >= 0, `${name}_local is created`);
    const path = `'/clickhouse/tables/{shard}/ledger_db/${name}_local', '{replica}'`;
    assert.ok(all[i]!.sql.includes(`ENGINE = Replicated${variant}MergeTree(${args ? `${path}, ${args}` : path})`), all[i]!.sql);
    const key = shardKey(original.slice(original.search(/ENGINE/)));
    assert.equal(
      all[i + 1]?.sql,
      `CREATE TABLE IF NOT EXISTS ledger_db.${name} ON CLUSTER agentledger AS ledger_db.${name}_local\nENGINE = Distributed(agentledger, ledger_db, ${name}_local, ${key})`,
    );
  }
});

test('the shard keys are the first ORDER BY column of each table (envelopes: loop_id)', async () => {
  const all = await rendered();
  const keys: Record<string, string> = {};
  for (const s of all) {
    const m = /Distributed\(agentledger, ledger_db, (\w+)_local, cityHash64\((\w+)\)\)$/.exec(s.sql);
    if (m?.[1] !== undefined && m[2] !== undefined) keys[m[1]] = m[2];
  }
  assert.equal(keys['envelopes'], 'loop_id');
  assert.equal(keys['craze_events'], 'session_id');
  assert.equal(keys['loop_heads'], 'loop_id');
  assert.equal(keys['chain_flags'], 'loop_id');
  assert.equal(keys['loop_child_reports'], 'child_loop_id');
  assert.equal(keys['spend_rollup_hour'], 'hour');
  assert.equal(shardKey('PARTITION BY toYYYYMM(x)\nORDER BY (a, b)'), 'cityHash64(a)');
  assert.equal(shardKey('ORDER BY mark'), 'cityHash64(mark)');
  assert.throws(() => shardKey('PARTITION BY x'), /without ORDER BY/);
});

test('on a cluster a materialized view writes to the local target and reads the local source', async () => {
  const mvs = (await rendered()).filter((s) => /^CREATE MATERIALIZED VIEW/.test(s.sql));
  assert.ok(mvs.length >= 1);
  for (const { sql } of mvs) {
    assert.match(sql, / TO ledger_db\.\w+_local AS\b/);
    assert.match(sql, /\bFROM ledger_db\.\w+_local\b/);
  }
});

test('on a cluster a view reads the Distributed names, and every IN subquery is GLOBAL', async () => {
  const views = (await rendered()).filter((s) => /^CREATE VIEW/.test(s.sql));
  assert.ok(views.length > 20);
  for (const { sql } of views) {
    assert.doesNotMatch(sql, /\w+_local\b/);
    assert.doesNotMatch(sql, /(?<!GLOBAL\s+)(?<!GLOBAL\s+NOT\s+)\b(NOT\s+)?IN\s*\(\s*SELECT/i, sql);
  }
  assert.equal(globalIn("x IN ('a', 'b') AND y NOT IN (SELECT 1) AND z IN(SELECT 2)"), "x IN ('a', 'b') AND y GLOBAL NOT IN (SELECT 1) AND z GLOBAL IN (SELECT 2)");
  assert.equal(globalIn('a GLOBAL IN (SELECT 1)'), 'a GLOBAL IN (SELECT 1)');
});

test('on a cluster an ALTER alters the replicated local table; the Distributed table and the Null twin are made again after each run of ALTERs', async () => {
  const all = await rendered();
  const migrations = await loadMigrations(MIGRATIONS_DIR);
  const originals = migrations.flatMap((m) => m.statements).filter((s) => /^ALTER TABLE envelopes\s/.test(s));
  const locals = all.filter((s) => s.sql.startsWith('ALTER TABLE ledger_db.envelopes_local ON CLUSTER agentledger '));
  assert.equal(locals.length, originals.length);
  for (const s of locals) if (/ ADD COLUMN /.test(s.sql)) assert.equal(addedColumn(s.sql)?.table, 'envelopes_local', 'migrate still takes an existing column as done');
  // 18.16 refuses ALTER … ON CLUSTER of an unreplicated table (code 371): none is left.
  assert.ok(!all.some((s) => /^ALTER TABLE ledger_db\.(envelopes|envelopes_probe) ON CLUSTER/.test(s.sql)));
  const remakeOf = (name: string, version: number): number =>
    all.filter((s) => s.version === version && s.sql === `DROP TABLE IF EXISTS ledger_db.${name} ON CLUSTER agentledger`).length;
  // 0008: the ADD COLUMNs of envelopes, then the same of its probe: each made again once, after its run.
  const added = migrations[7]!.statements.filter((s) => s.startsWith('ALTER TABLE envelopes ')).length;
  assert.ok(added > 30);
  assert.equal(remakeOf('envelopes', 8), 1);
  assert.equal(remakeOf('envelopes_probe', 8), 1);
  const v8 = all.filter((s) => s.version === 8).map((s) => s.sql);
  assert.equal(v8.length, added + 4);
  assert.match(v8[added]!, /^DROP TABLE IF EXISTS ledger_db\.envelopes ON CLUSTER/);
  assert.equal(v8[added + 1], 'CREATE TABLE IF NOT EXISTS ledger_db.envelopes ON CLUSTER agentledger AS ledger_db.envelopes_local\nENGINE = Distributed(agentledger, ledger_db, envelopes_local, cityHash64(loop_id))');
  assert.equal(v8[added + 3], 'CREATE TABLE IF NOT EXISTS ledger_db.envelopes_probe ON CLUSTER agentledger AS ledger_db.envelopes_local ENGINE = Null');
  // 0022: after the ten ADD COLUMNs (before OPTIMIZE), and after the two MODIFYs.
  assert.equal(remakeOf('envelopes', 22), 2);
  assert.ok(!all.some((s) => s.sql.includes('envelopes_probe_local')));
  // 0005: chain_violations was a table; the Distributed one goes, then the replicated one.
  const drops = all.filter((s) => s.version === 5).map((s) => s.sql);
  assert.deepEqual(drops.slice(0, 3), [
    'DROP TABLE IF EXISTS ledger_db.chain_violations_mv ON CLUSTER agentledger',
    'DROP TABLE IF EXISTS ledger_db.chain_violations ON CLUSTER agentledger',
    'DROP TABLE IF EXISTS ledger_db.chain_violations_local ON CLUSTER agentledger',
  ]);
  // 0019: chain_violations is a view by then: one DROP.
  assert.deepEqual(
    all.filter((s) => s.version === 19 && s.sql.startsWith('DROP')).map((s) => s.sql),
    ['DROP TABLE IF EXISTS ledger_db.chain_violations ON CLUSTER agentledger'],
  );
});

test('on a cluster the Null probe tables copy the local table, and 0022 optimizes and checks the local table on every server', async () => {
  const all = await rendered();
  assert.ok(all.some((s) => s.sql === 'CREATE TABLE IF NOT EXISTS ledger_db.envelopes_probe ON CLUSTER agentledger AS ledger_db.envelopes_local ENGINE = Null'));
  const v22 = all.filter((s) => s.version === 22);
  const optimize = v22.findIndex((s) => s.sql === 'OPTIMIZE TABLE ledger_db.envelopes_local ON CLUSTER agentledger FINAL');
  assert.ok(optimize >= 0);
  // Its code 49 reply is taken for done only because the check on every server comes next.
  assert.equal(v22[optimize + 1]?.where, 'every-server');
  const lone: Migration = { version: 1, name: 'x', checksum: '', statements: ['CREATE TABLE IF NOT EXISTS a (x UInt8) ENGINE = MergeTree ORDER BY x', 'OPTIMIZE TABLE a FINAL'] };
  assert.equal(renderMigrations([lone], TARGET)[0]!.statements.at(-1)?.checkedAfter, undefined, 'an OPTIMIZE with no check after it fails on any error');
  const full = renderMigrations(await loadMigrations(MIGRATIONS_DIR), TARGET)[21]!.statements;
  assert.deepEqual(full.find((s) => s.sql.startsWith('OPTIMIZE'))?.checkedAfter, [49]);
  const checks = all.filter((s) => s.where === 'every-server');
  assert.equal(checks.length, 1);
  assert.equal(checks[0]!.version, 22);
  assert.doesNotMatch(checks[0]!.sql, /table = 'envelopes'/);
  assert.equal(checks[0]!.sql.match(/table = 'envelopes_local'/g)?.length, 2);
  const remote = atServer(checks[0]!.sql, { host: '10.0.0.2', port: 9000 }, 'ledger_db', { user: 'm', password: "p'w" });
  assert.doesNotMatch(remote, /currentDatabase\(\)|\bFROM system\./);
  assert.match(remote, /FROM remote\('10\.0\.0\.2:9000', system, parts, 'm', 'p\\'w'\)/);
  assert.match(remote, /FROM remote\('10\.0\.0\.2:9000', system, parts_columns, 'm', 'p\\'w'\)/);
  assert.match(remote, /database = 'ledger_db'/);
});

test('a statement with no cluster form stops the rendering, naming its migration and statement', () => {
  const bad: Migration = { version: 7, name: 'odd', checksum: '', statements: ['CREATE TABLE IF NOT EXISTS a (x UInt8) ENGINE = MergeTree ORDER BY x', 'RENAME TABLE a TO b'] };
  assert.throws(() => renderMigrations([bad], TARGET), /cluster DDL, 0007_odd statement 2: no cluster form for: RENAME TABLE a TO b/);
  assert.deepEqual(renderMigrations([bad], undefined)[0]!.statements.map((s) => s.sql), bad.statements);
  assert.throws(() => renderMigrations([bad], { cluster: 'a-b', database: 'x' }), /cluster name "a-b" is not a plain identifier/);
});

test("the worker's mutations: on a cluster each of its table's local halves, ON CLUSTER, the rest of the text unchanged; on one server untouched", () => {
  const t = { cluster: 'c1', database: 'db' };
  for (const [name, params, table] of [
    ['rollup_compact_rows', { rollup_table: 'spend_rollup_hour', hours: [1], tops: [2] }, 'spend_rollup_hour'],
    ['chain_flags_prune', { loop_ids: ['a'], tops: [3] }, 'chain_flags'],
    ['rollup_claims_prune', { before: 1, top_version: 2 }, 'rollup_claims'],
    ['rollup_sweeps_prune', { before: 1, top_version: 2, top_through: 3 }, 'rollup_sweeps'],
    ['alert_sweeps_prune', { before: 1, top_through: 3 }, 'alert_sweeps'],
  ] as const) {
    const sql = renderSql(querySql(name), params);
    assert.equal(mutationSql(sql, undefined), sql, name);
    const on = mutationSql(sql, t);
    assert.match(on, new RegExp(`ALTER TABLE db\\.${table}_local ON CLUSTER c1 DELETE WHERE`), name);
    assert.equal(on.slice(on.indexOf(' DELETE WHERE')), sql.slice(sql.indexOf(' DELETE WHERE')), `${name}: the condition is kept`);
  }
  assert.throws(() => mutationSql('SELECT 1', t), /expected one ALTER TABLE/);
  assert.throws(() => mutationSql('ALTER TABLE a DELETE WHERE 1; ALTER TABLE b DELETE WHERE 1', t), /found 2/);
});
