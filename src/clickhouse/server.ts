/**
 * What the server is: its version and whether this user may write, for
 * `doctor` and `serve`; and whether a query still runs on it (settleQuery).
 * The typed reads of what is stored are with the features that ask them, one
 * file per concern: src/read/{chain,session,spend}-reads.ts,
 * src/rollups/loop-reads.ts and src/serve/page-reads.ts. In all of them the
 * SQL is in the feature's `queries/NAME.sql` (this module's in
 * src/clickhouse/queries/); values reach it only through renderSql(), never
 * by string concatenation.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { queriesIn, renderSql } from './sql.js';

const { querySql, queryRows } = queriesIn(new URL('../../../src/clickhouse/queries/', import.meta.url));

/** The server's version text, e.g. `18.16.1` or `25.8.2.1`. */
export async function serverVersion(ch: ClickHouseClient): Promise<string> {
  const [row] = await queryRows<{ version: string }>(ch, 'server_version');
  if (row === undefined) throw new Error('SELECT version() returned no row');
  return row.version;
}

/** The user's readonly setting: 0 may write, 1 or 2 may not (session_readonly.sql). */
export async function sessionReadonly(ch: ClickHouseClient): Promise<number> {
  const [row] = await queryRows<{ readonly: number }>(ch, 'session_readonly');
  if (row === undefined) throw new Error('system.settings has no readonly setting');
  return Number(row.readonly);
}

/** This session's value of each setting named (session_settings.sql); a name the server does not know is missing. */
export async function sessionSettings(ch: ClickHouseClient, names: readonly string[]): Promise<Map<string, string>> {
  const rows = await queryRows<{ name: string; value: string }>(ch, 'session_settings', { names: [...names] });
  return new Map(rows.map((r) => [r.name, r.value]));
}

/**
 * Waits until the query `queryId` no longer runs on this server, killing it if
 * it still does: after a lost answer, what it wrote is then all it will ever
 * write, and asking whether it landed gives a final answer.
 */
export async function settleQuery(ch: ClickHouseClient, queryId: string): Promise<void> {
  for (let round = 0; ; round++) {
    const [row] = await ch
      .query({ query: renderSql(querySql('query_running'), { query_id: queryId }), format: 'JSONEachRow' })
      .then((r) => r.json<{ n: string | number }>());
    if (Number(row?.n ?? 0) === 0) return;
    if (round >= 20) throw new Error(`query ${queryId} still runs after ${round} attempts to stop it`);
    await ch.command({ query: renderSql(querySql('kill_query'), { query_id: queryId }) });
  }
}
