/**
 * The one place a ClickHouse client is made. The settings here are the ones
 * both ClickHouse 18.16 (Debian's, used by the local stack) and current
 * ClickHouse accept.
 */
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import type { Config } from '../../config/index.js';

export type ClickHouseSettings = Config['clickhouse'];

export function createClickHouse(settings: ClickHouseSettings, database = settings.database): ClickHouseClient {
  return createClient({
    url: settings.url,
    username: settings.user,
    password: settings.password,
    database,
    request_timeout: 60_000,
    compression: { request: false, response: false },
    application: 'agentledger',
    // Failures are reported by agentledger's own logger, with context.
    log: { level: ClickHouseLogLevel.OFF },
  });
}

/** Quotes an identifier for SQL text (18.16 has no query parameters for identifiers). */
export function quoteIdent(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`not a plain identifier: ${name}`);
  return '`' + name + '`';
}

/** Quotes a string literal for SQL text: 18.16 lacks `{name:Type}` query parameters. */
export function quoteString(value: string): string {
  return "'" + value.replace(/\\/g, '\\\\').replace(/'/g, "\\'") + "'";
}

/**
 * The ClickHouse error code of a failed request, or undefined when the failure
 * is not ClickHouse's (network, timeout). @clickhouse/client parses current
 * servers' "Code: 57. DB::Exception" into `code`; 18.16 writes
 * "Code: 57, e.displayText() = DB::Exception", which it leaves in the message.
 */
export function clickhouseErrorCode(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && /^\d+$/.test(code)) return Number(code);
  if (typeof code === 'number') return code;
  const message = (err as { message?: unknown }).message;
  const match = typeof message === 'string' ? /\bCode: (\d+)[.,]/.exec(message) : null;
  return match ? Number(match[1]) : undefined;
}
