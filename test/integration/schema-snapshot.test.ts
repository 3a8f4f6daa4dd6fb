/**
 * schema/snapshot.sql is what the migrations build: applied to a fresh
 * database, they give exactly the file's statements.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { migrate } from '../../src/migrate/migrate.js';
import { serverVersion } from '../../src/clickhouse/server.js';
import { renderSnapshot, SNAPSHOT_PATH } from '../../src/migrate/schema-snapshot.js';
import { testContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
before(async () => {
  ctx = await testContext('schema_snapshot');
});
after(async () => {
  await ctx.cleanup();
});

test('schema/snapshot.sql is the schema every migration builds, statement for statement', async () => {
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, createLogger('warn'));
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    const built = await renderSnapshot(ch, ctx.config.clickhouse.database);
    const file = await readFile(SNAPSHOT_PATH, 'utf8');
    assert.ok(built.split(';\n').length > 40, 'every table and view (more than 40 statements)');
    // The file holds 18.16's wording; a current server (the containers) words
    // some statements differently, so there only the objects are compared.
    if ((await serverVersion(ch)).startsWith('18.16.')) {
      assert.ok(file === built, 'schema/snapshot.sql differs from what the migrations build: run npm run docs:schema');
    } else {
      const objects = (text: string): string[] => [...text.matchAll(/^CREATE (?:TABLE|VIEW) (\S+)/gm)].map((m) => m[1]!);
      assert.deepEqual(objects(built), objects(file), 'schema/snapshot.sql names other tables and views than the migrations build: run npm run docs:schema');
    }
  } finally {
    await ch.close();
  }
});
