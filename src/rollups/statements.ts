/**
 * How the rollup steps run their query files (src/rollups/queries/):
 * as written, per loop and per hour, or in their every-loop form, derived
 * from the per-loop text, for a step with too many loops to list.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { querySql } from './queries.js';
import { renderSql, type SqlValue } from '../clickhouse/sql.js';

export async function exec(ch: ClickHouseClient, name: string, params: Record<string, SqlValue>, signal?: AbortSignal): Promise<void> {
  await ch.command({ query: renderSql(querySql(name), params), ...(signal ? { abort_signal: signal } : {}) });
}

/**
 * A per-loop query (`loop_id IN {loop_ids:Array(String)}` in each of its
 * WHERE clauses) for every loop: those conditions dropped, so a step with
 * many loops reads the table once. The text is derived, not a second file:
 * 18.16 does not fold a constant `OR` before index analysis, so one text with
 * an "all loops" switch would lose the primary key for the per-loop read.
 */
export function everyLoopSql(name: string): string {
  const text = querySql(name)
    .replace(/WHERE loop_id IN \{loop_ids:Array\(String\)\}\s+AND\s+/g, 'WHERE ')
    .replace(/\s+WHERE loop_id IN \{loop_ids:Array\(String\)\}(?=\s*\))/g, '');
  if (text.includes('{loop_ids:')) throw new Error(`${name}.sql: a loop_ids condition that everyLoopSql cannot drop`);
  return text;
}

export async function execEveryLoop(ch: ClickHouseClient, name: string, params: Record<string, SqlValue>, signal?: AbortSignal): Promise<void> {
  await ch.command({ query: renderSql(everyLoopSql(name), params), ...(signal ? { abort_signal: signal } : {}) });
}
