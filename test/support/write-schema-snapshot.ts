/**
 * `npm run docs:schema`: writes schema/snapshot.sql from the migrations,
 * applied to a throwaway database of the test services (the local stack,
 * started if it is down), which is dropped afterwards.
 */
import { writeFile } from 'node:fs/promises';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { migrate } from '../../src/migrate/migrate.js';
import { renderSnapshot, SNAPSHOT_PATH } from '../../src/migrate/schema-snapshot.js';
import { testContext } from './context.js';

const ctx = await testContext('schema_snapshot');
try {
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, createLogger('warn'));
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    await writeFile(SNAPSHOT_PATH, await renderSnapshot(ch, ctx.config.clickhouse.database));
  } finally {
    await ch.close();
  }
  console.log(`${SNAPSHOT_PATH}: written from the migrations in ${MIGRATIONS_DIR}`);
} finally {
  await ctx.cleanup();
  await ctx.services.stop();
}
