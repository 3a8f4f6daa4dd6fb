/** One-off ClickHouse reads and commands in a test context's database, each on its own client. */
import { createClickHouse } from '../../src/sink/clickhouse/client.js';
export async function query(ctx, sql) {
    const ch = createClickHouse(ctx.config.clickhouse);
    try {
        return await ch.query({ query: sql, format: 'JSONEachRow' }).then((r) => r.json());
    }
    finally {
        await ch.close();
    }
}
export async function command(ctx, sql) {
    const ch = createClickHouse(ctx.config.clickhouse);
    try {
        await ch.command({ query: sql });
    }
    finally {
        await ch.close();
    }
}
//# sourceMappingURL=clickhouse.js.map