/**
 * `agentledger migrate` against the real ClickHouse: each file exactly once,
 * also when run twice and from two processes at the same time.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { NO_FACTS } from '../../src/account/loop-facts.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { clickhouseErrorCode } from '../../src/clickhouse/errors.js';
import { addedColumn, migrate } from '../../src/migrate/migrate.js';
import { loadMigrations } from '../../src/migrate/migrations.js';
import { createLogger } from '../../src/observability/logger.js';
import { testContext, type TestContext } from '../support/context.js';
import { migrationsUpTo } from '../support/migrations.js';

const BIN = fileURLToPath(new URL('../support/cli-entry.js', import.meta.url));
let ctx: TestContext;

before(async () => {
  ctx = await testContext('migrate');
});
after(async () => {
  await ctx.cleanup();
});

function runMigrate(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'migrate'], { env: { PATH: process.env['PATH'], ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('two processes at once, then a third run: every migration applied exactly once', async () => {
  const [a, b] = await Promise.all([runMigrate(ctx.env), runMigrate(ctx.env)]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, 0, b.stderr);
  const third = await runMigrate(ctx.env);
  assert.equal(third.code, 0, third.stderr);
  const total = (await loadMigrations(MIGRATIONS_DIR)).length;
  assert.match(third.stdout, new RegExp(`0 applied, ${total} already applied`));

  const ch = createClickHouse(ctx.config.clickhouse);
  const rows = await ch
    .query({ query: 'SELECT version, count() AS n FROM schema_migrations GROUP BY version ORDER BY version', format: 'JSONEachRow' })
    .then((r) => r.json<{ version: number; n: string }>());
  await ch.close();
  assert.equal(rows.length, total);
  for (const r of rows) assert.equal(Number(r.n), 1, `migration ${r.version} recorded once`);
  // Between them the two concurrent runs applied each file once.
  const appliedByRuns = [a.stdout, b.stdout].map((s) => Number(/(\d+) applied/.exec(s)?.[1] ?? NaN));
  assert.equal(appliedByRuns[0]! + appliedByRuns[1]!, total);
});

test('a released migration that was edited is refused', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mig-'));
  await cp(MIGRATIONS_DIR, dir, { recursive: true });
  const log = createLogger('error');
  await migrate(ctx.config.clickhouse, dir, log);
  await writeFile(join(dir, '0001_envelopes.sql'), '-- edited\nCREATE TABLE IF NOT EXISTS envelopes (x UInt8) ENGINE = Log;\n');
  await assert.rejects(migrate(ctx.config.clickhouse, dir, log), /edited after it was applied/);
});

test('a run killed half-way through 0008 (some columns added, the file not recorded) is finished by the next run', async () => {
  // A database of its own: this file's other tests migrate ctx's to the end.
  const settings = { ...ctx.config.clickhouse, database: `${ctx.config.clickhouse.database}_half` };
  const log = createLogger('error');
  const upTo7 = await migrationsUpTo(7);
  const upTo8 = await migrationsUpTo(8);
  const ch = createClickHouse(settings);
  try {
    await migrate(settings, upTo7, log);
    const facts = (await loadMigrations(upTo8)).find((m) => m.version === 8)!;
    // The killed run: every column added to envelopes, and three to its probe twin.
    const cut = facts.statements.findIndex((s) => s.includes('envelopes_probe')) + 3;
    for (const statement of facts.statements.slice(0, cut)) await ch.command({ query: statement });
    // ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: running an added
    // column's statement again is refused, with a code the migrator knows.
    const again = await ch.command({ query: facts.statements[0]! }).then(
      () => undefined,
      (err: unknown) => clickhouseErrorCode(err),
    );
    assert.ok(again === 15 || again === 44, `re-adding a column was refused with code ${again}`);

    const result = await migrate(settings, upTo8, log);
    assert.deepEqual(result.applied.map((m) => m.version), [8]);
    const recorded = await ch
      .query({ query: 'SELECT version FROM schema_migrations WHERE version = 8', format: 'JSONEachRow' })
      .then((r) => r.json<{ version: number }>());
    assert.equal(recorded.length, 1);

    // Every column of 0008 is there once, with its type, on both tables and in
    // the same order (system.columns lists a table's columns in order; 18.16
    // has no `position` to sort by).
    const columns = async (table: string) =>
      ch
        .query({ query: `SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = '${table}'`, format: 'JSONEachRow' })
        .then((r) => r.json<{ name: string; type: string }>())
        .then((rows) => rows.map((c) => `${c.name} ${c.type}`));
    const envelopes = await columns('envelopes');
    const wanted = facts.statements.map(addedColumn).filter((a) => a?.table === 'envelopes').map((a) => `${a!.column} ${a!.type}`);
    assert.deepEqual(envelopes.slice(-wanted.length), wanted);
    assert.deepEqual(await columns('envelopes_probe'), envelopes);

    // A row with facts at the edges of their types reads back exactly (Int64 as strings through JSONEachRow).
    const row = {
      loop_id: 'l', seq: 1, time: '2026-11-30 10:00:00', time_text: '2026-11-30T10:00:00Z', kind: 'ModelCalled', kind_class: 'ModelCalled',
      hash: '', computed_hash: '', payload: '{}', verdict: 'ok', detail: '', evidence: '',
      ...NO_FACTS, cost_pico: '9223372036854775807', budget_pico: '-9223372036854775808', fork_at_seq: '18446744073709551615', tool_is_error: 1 as const,
      kafka_topic: 't', kafka_partition: 0, kafka_offset: '0', ingested_at: '2026-11-30 12:00:00',
    };
    // As a writer of 0008's layout inserted it (the insert of today names 0022's slots).
    for (const table of ['envelopes_probe', 'envelopes']) await ch.insert({ table, values: [row], format: 'JSONEachRow' });
    const back = await ch
      .query({ query: 'SELECT cost_pico, budget_pico, fork_at_seq, tool_is_error, cost_usd_text FROM envelopes', format: 'JSONEachRow' })
      .then((r) => r.json<Record<string, unknown>>());
    assert.deepEqual(back, [{ cost_pico: '9223372036854775807', budget_pico: '-9223372036854775808', fork_at_seq: '18446744073709551615', tool_is_error: 1, cost_usd_text: '' }]);
  } finally {
    await ch.command({ query: `DROP DATABASE IF EXISTS ${settings.database}` }).catch(() => undefined);
    await ch.close();
    await rm(upTo7, { recursive: true, force: true });
    await rm(upTo8, { recursive: true, force: true });
  }
});

test('a run whose statement outlasts the stale time keeps its lock: a second run waits for it instead of taking it', async () => {
  // A database of its own, and a migration that runs ~6 s against a lock that goes stale after 2 s unless renewed.
  const settings = { ...ctx.config.clickhouse, database: `${ctx.config.clickhouse.database}_lock` };
  const dir = await mkdtemp(join(tmpdir(), 'mig-'));
  await writeFile(join(dir, '0001_slow.sql'), 'CREATE TABLE IF NOT EXISTS slow (x UInt8) ENGINE = Log;\nSELECT sleep(3);\nSELECT sleep(3);\n');
  const log = createLogger('error');
  const lock = { staleMs: 2_000, renewMs: 300, waitMs: 60_000 };
  const ch = createClickHouse(settings, 'system');
  try {
    const first = migrate(settings, dir, log, { lock });
    // The second run starts once the first holds the lock.
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const [held] = await ch
        .query({ query: `SELECT count() AS n FROM system.tables WHERE database = '${settings.database}' AND name = 'schema_migrations_lock'`, format: 'JSONEachRow' })
        .then((r) => r.json<{ n: string }>());
      if (held?.n === '1') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const second = migrate(settings, dir, log, { lock });
    const [a, b] = await Promise.all([first, second]);
    assert.deepEqual([a.applied.map((m) => m.version), b.applied.map((m) => m.version)], [[1], []], 'the first run applied 0001, the second found it applied');
    const [recorded] = await ch
      .query({ query: `SELECT count() AS n FROM ${settings.database}.schema_migrations WHERE version = 1`, format: 'JSONEachRow' })
      .then((r) => r.json<{ n: string }>());
    assert.equal(recorded?.n, '1');
  } finally {
    await ch.command({ query: `DROP DATABASE IF EXISTS ${settings.database}` });
    await ch.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('AGENTLEDGER_CLICKHOUSE_CLUSTER naming a cluster the server does not list stops migrate with one line, before anything is created', async () => {
  const settings = { ...ctx.config.clickhouse, cluster: 'agentledger_no_such_cluster', database: `${ctx.config.clickhouse.database}_nocluster` };
  await assert.rejects(
    migrate(settings, MIGRATIONS_DIR, createLogger('error')),
    /^Error: AGENTLEDGER_CLICKHOUSE_CLUSTER=agentledger_no_such_cluster: the ClickHouse server has no such cluster in system\.clusters/,
  );
  const ch = createClickHouse(ctx.config.clickhouse, 'system');
  try {
    const rows = await ch
      .query({ query: `SELECT count() AS n FROM system.databases WHERE name = '${settings.database}'`, format: 'JSONEachRow' })
      .then((r) => r.json<{ n: string }>());
    assert.equal(Number(rows[0]?.n), 0, 'no database created');
  } finally {
    await ch.close();
  }
});
