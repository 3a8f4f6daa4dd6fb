/**
 * `agentledger migrate` against the real ClickHouse: each file exactly once,
 * also when run twice and from two processes at the same time.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createClickHouse } from '../../src/sink/clickhouse/client.js';
import { loadMigrations, migrate } from '../../src/sink/clickhouse/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import { testContext, type TestContext } from '../support/context.js';

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
