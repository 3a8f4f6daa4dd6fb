/**
 * What the server is: its version and whether this user may write, for
 * `doctor` and `serve`. The typed reads of what is stored are beside it, one
 * file per concern: chain-reads.ts, session-reads.ts, loop-reads.ts,
 * spend-reads.ts and page-reads.ts. In all of them the SQL is in
 * `queries/NAME.sql`; values reach it only through renderSql(), never by
 * string concatenation.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { queryRows } from './sql.js';

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

// src/read/loops.ts still imports the loop reads from here.
