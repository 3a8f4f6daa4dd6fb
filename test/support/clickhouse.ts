/** One-off ClickHouse reads and commands in a test context's database, each on its own client. */
import { createClickHouse } from '../../src/clickhouse/client.js';
import type { TestContext } from './context.js';

export async function query<T>(ctx: TestContext, sql: string): Promise<T[]> {
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    return await ch.query({ query: sql, format: 'JSONEachRow' }).then((r) => r.json<T>());
  } finally {
    await ch.close();
  }
}

export async function command(ctx: TestContext, sql: string): Promise<void> {
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    await ch.command({ query: sql });
  } finally {
    await ch.close();
  }
}
