/**
 * Counted spend, for `spend`: per owner, provider, model and day from the
 * stored rows (runtime_spend_groups.sql, craze_spend_groups.sql), or grouped
 * in ClickHouse from the hour rollups (spend_rollup_groups.sql,
 * spend_rollup_root_groups.sql).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { DATETIME_MAX_SECONDS, decimalText, type Int64Json } from '../clickhouse/read-values.js';
import { queryRows } from './queries.js';

/** Counted spend of one (source, owner, provider, model, day): owner is a loop id (runtime) or a session id (craze). */
export interface SpendGroup {
  readonly source: 'runtime' | 'craze';
  readonly owner: string;
  readonly provider: string;
  readonly model: string;
  /** YYYY-MM-DD, UTC. */
  readonly day: string;
  readonly calls: number;
  readonly inputTokens: bigint;
  readonly outputTokens: bigint;
  readonly costPico: bigint;
  /** Usage reports without a price (craze; their cost is a floor). */
  readonly unpricedCalls: number;
  /** The loop name, where the group is per name already (the rollups: owner is then ''). */
  readonly name?: string;
}

export interface SpendWindow {
  /** Spend at or after this time (whole seconds). */
  readonly since?: Date;
  /** Spend before this time (whole seconds). */
  readonly until?: Date;
}

/** [since, until) as DateTime seconds, clamped to DateTime's range (toDateTime would wrap a value outside it). */
function windowSeconds({ since, until }: SpendWindow): { since: number; until: number } {
  const seconds = (d: Date | undefined, fallback: number): number => {
    if (d === undefined) return fallback;
    const s = Math.floor(d.getTime() / 1000);
    if (Number.isNaN(s)) throw new RangeError('spend window: an invalid Date');
    return Math.min(DATETIME_MAX_SECONDS, Math.max(0, s));
  };
  return { since: seconds(since, 0), until: seconds(until, DATETIME_MAX_SECONDS) };
}

/** The columns both spend queries return, whatever owns the spend. */
interface SpendSums {
  provider: string;
  model: string;
  day: string;
  calls: Int64Json;
  input_tokens_sum: string;
  output_tokens_sum: string;
  cost: string;
}

function spendGroup(source: SpendGroup['source'], owner: string, r: SpendSums, unpricedCalls: number): SpendGroup {
  return {
    source,
    owner,
    provider: r.provider,
    model: r.model,
    day: r.day,
    calls: Number(r.calls),
    inputTokens: decimalText(r.input_tokens_sum),
    outputTokens: decimalText(r.output_tokens_sum),
    costPico: decimalText(r.cost),
    unpricedCalls,
  };
}

/** Counted spend of the loop runtime and of craze, per owner, provider, model and day (runtime_spend_groups.sql, craze_spend_groups.sql). */
export async function spendGroups(ch: ClickHouseClient, sources: readonly ('runtime' | 'craze')[], window: SpendWindow = {}): Promise<SpendGroup[]> {
  const params = windowSeconds(window);
  const groups: SpendGroup[] = [];
  if (sources.includes('runtime')) {
    for (const r of await queryRows<SpendSums & { loop_id: string }>(ch, 'runtime_spend_groups', params)) groups.push(spendGroup('runtime', r.loop_id, r, 0));
  }
  if (sources.includes('craze')) {
    for (const r of await queryRows<SpendSums & { session_id: string; unpriced_calls: Int64Json }>(ch, 'craze_spend_groups', params)) {
      groups.push(spendGroup('craze', r.session_id, r, Number(r.unpriced_calls)));
    }
  }
  return groups;
}

/** The keys `spend --rollups` groups by in SQL: what its --by takes. */
export type RollupSpendBy = 'model' | 'day' | 'name' | 'root' | 'source';

/**
 * Counted spend from the hour rollups, grouped in ClickHouse by source and
 * the `by` key (spend_rollup_groups.sql; by root spend_rollup_root_groups.sql),
 * one group per row `spend --rollups` prints: fast at any size, current up
 * to the last sweep for rows stored late. Every hour the window overlaps is
 * counted whole. A group's owner is its root (by root), else ''; its name
 * is the loop name (by name), else ''.
 */
export async function rollupSpendGroups(
  ch: ClickHouseClient,
  sources: readonly ('runtime' | 'craze')[],
  by: RollupSpendBy,
  window: SpendWindow = {},
): Promise<SpendGroup[]> {
  const params = { ...windowSeconds(window), sources: [...sources] };
  const known = <R extends { source: string }>(r: R): r is R & { source: 'runtime' | 'craze' } => r.source === 'runtime' || r.source === 'craze';
  if (by === 'root') {
    const rows = await queryRows<Omit<SpendSums, 'provider' | 'model' | 'day'> & { source: string; root_loop_id: string; unpriced_calls: Int64Json }>(ch, 'spend_rollup_root_groups', params);
    return rows.filter(known).map((r) => spendGroup(r.source, r.root_loop_id, { ...r, provider: '', model: '', day: '' }, Number(r.unpriced_calls)));
  }
  const rows = await queryRows<SpendSums & { source: string; loop_name: string; unpriced_calls: Int64Json }>(ch, 'spend_rollup_groups', { ...params, by });
  return rows.filter(known).map((r) => ({ ...spendGroup(r.source, '', r, Number(r.unpriced_calls)), name: r.loop_name }));
}
