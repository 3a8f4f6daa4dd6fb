/**
 * The reads behind the page's own endpoints (endpoints.ts), as
 * functions returning typed values; the SQL is in `queries/page_*.sql`,
 * values reach it only through renderSql() placeholders. Each query's row is
 * typed as ClickHouse writes it into JSON (`…Json`).
 *
 * They read the rollups (spend_hourly_now, spend_rollup_root_hour,
 * loop_roots, loop_reconciliation_rollup, alerts_current) so a page over 10M
 * calls reads thousands of rows; where they must read envelopes they filter
 * before deduplicating (by the table's key, or FINAL over loops found by
 * primary key), never FINAL over every envelope.
 *
 * Money stays exact: Decimal128 sums come as decimal text built in two pieces
 * (docs/spend.md "Exact money text"), and are parsed to bigint here.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { Int64Json } from '../clickhouse/read-values.js';
import { queryRows } from './queries.js';

/** A Decimal128 or UInt64 read as text ('' when ANY LEFT JOIN found no row) or as a number: exact. */
const big = (value: string | number | undefined): bigint => (value === undefined || value === '' ? 0n : BigInt(String(value)));

/** The page's filters: '' for "all" (no id, model or source is empty in practice; an empty name is the craze rows' name). */
export interface SpendFilter {
  readonly source: string;
  readonly model: string;
  readonly name: string;
}

/** The headline money of GET /api/overview. */
export interface SpendWindows {
  readonly todayCalls: bigint;
  readonly weekCalls: bigint;
  readonly monthCalls: bigint;
  readonly todayCostPico: bigint;
  readonly weekCostPico: bigint;
  readonly monthCostPico: bigint;
  /** The runtime's counted (verified) calls and cost within the 30 days. */
  readonly runtimeCalls: bigint;
  readonly runtimeCostPico: bigint;
}

/** A row of page_spend_windows.sql: counts and Decimal128 sums, all as text. */
interface SpendWindowsJson {
  today_calls_text: string;
  week_calls_text: string;
  month_calls_text: string;
  runtime_calls_text: string;
  today_cost: string;
  week_cost: string;
  month_cost: string;
  runtime_cost: string;
}

/** Counted spend since three UTC midnights (Unix seconds), the month's the widest (page_spend_windows.sql). */
export async function spendWindows(ch: ClickHouseClient, starts: { today: number; week: number; month: number }, filter: SpendFilter): Promise<SpendWindows> {
  const [r] = await queryRows<SpendWindowsJson>(ch, 'page_spend_windows', { ...starts, ...filter });
  return {
    todayCalls: big(r?.today_calls_text),
    weekCalls: big(r?.week_calls_text),
    monthCalls: big(r?.month_calls_text),
    todayCostPico: big(r?.today_cost),
    weekCostPico: big(r?.week_cost),
    monthCostPico: big(r?.month_cost),
    runtimeCalls: big(r?.runtime_calls_text),
    runtimeCostPico: big(r?.runtime_cost),
  };
}

/** The chain cards: every stored violation, and the unverified ModelCalled since `since` (Unix seconds) among them (page_chain_totals.sql). */
export interface ChainTotals {
  readonly violations: number;
  readonly unverifiedCalls: bigint;
  readonly unverifiedCostPico: bigint;
}

export async function chainTotals(ch: ClickHouseClient, since: number, filter: Pick<SpendFilter, 'model' | 'name'>): Promise<ChainTotals> {
  const [r] = await queryRows<{ violations_text: string; calls_text: string; cost_text: string }>(ch, 'page_chain_totals', { since, model: filter.model, name: filter.name });
  return { violations: Number(r?.violations_text ?? 0), unverifiedCalls: big(r?.calls_text), unverifiedCostPico: big(r?.cost_text) };
}

/** Fleet-wide counts of GET /api/overview (page_counts.sql). */
export interface PageCounts {
  readonly firingAlerts: number;
  readonly stuckLoops: number;
  readonly activeLoops: number;
}

/** A row of page_counts.sql: three counts (UInt64). */
interface PageCountsJson {
  firing_alerts: Int64Json;
  stuck_loops: Int64Json;
  active_loops: Int64Json;
}

export async function pageCounts(ch: ClickHouseClient, activeSince: number): Promise<PageCounts> {
  const [r] = await queryRows<PageCountsJson>(ch, 'page_counts', { active_since: activeSince });
  return {
    firingAlerts: Number(r?.firing_alerts ?? 0),
    stuckLoops: Number(r?.stuck_loops ?? 0),
    activeLoops: Number(r?.active_loops ?? 0),
  };
}

/** The column a series is keyed by. */
export type SeriesBy = 'model' | 'provider' | 'source' | 'loop_name';

/** One (bucket, key) of spend over time. */
export interface SeriesCell {
  /** The bucket's start, Unix seconds. */
  readonly bucket: number;
  readonly key: string;
  readonly calls: bigint;
  readonly costPico: bigint;
}

/** Counted spend per bucket and key, hours starting in [since, until) (page_spend_series.sql). */
export async function spendSeries(
  ch: ClickHouseClient,
  q: { readonly day: boolean; readonly by: SeriesBy; readonly since: number; readonly until: number } & SpendFilter,
): Promise<SeriesCell[]> {
  const rows = await queryRows<{ bucket_s: number | string; key: string; calls_text: string; cost_text: string }>(ch, 'page_spend_series', {
    day: q.day ? 1 : 0,
    by: q.by,
    since: q.since,
    until: q.until,
    source: q.source,
    model: q.model,
    name: q.name,
  });
  return rows.map((r) => ({ bucket: Number(r.bucket_s), key: r.key, calls: big(r.calls_text), costPico: big(r.cost_text) }));
}

/** One loop of a tree as the rollup job placed it, with its own committed spend (page_tree_loops.sql). */
export interface TreeLoopRow {
  readonly loopId: string;
  readonly parentLoopId: string;
  readonly name: string;
  /** Root first, parent last. */
  readonly ancestors: readonly string[];
  readonly ownCalls: bigint;
  readonly ownCostPico: bigint;
}

export async function treeLoops(ch: ClickHouseClient, root: string): Promise<TreeLoopRow[]> {
  const rows = await queryRows<{ loop_id: string; parent_loop_id: string; loop_name: string; ancestors: string[]; own_calls_text: string; own_cost_text: string }>(
    ch,
    'page_tree_loops',
    { root },
  );
  return rows.map((r) => ({
    loopId: r.loop_id,
    parentLoopId: r.parent_loop_id,
    name: r.loop_name,
    ancestors: r.ancestors,
    ownCalls: big(r.own_calls_text),
    ownCostPico: big(r.own_cost_text),
  }));
}

/** One (loop, verdict) of a tree's envelopes (page_tree_facts.sql). */
export interface TreeFactRow {
  readonly loopId: string;
  readonly verdict: string;
  readonly envelopes: number;
  readonly outcome: string;
  readonly warnings: number;
}

export async function treeFacts(ch: ClickHouseClient, root: string): Promise<TreeFactRow[]> {
  const rows = await queryRows<{ loop_id: string; verdict: string; envelopes: string | number; finished_outcome: string; warnings: string | number }>(
    ch,
    'page_tree_facts',
    { root },
  );
  return rows.map((r) => ({ loopId: r.loop_id, verdict: r.verdict, envelopes: Number(r.envelopes), outcome: r.finished_outcome, warnings: Number(r.warnings) }));
}

/** A chain violation with what it was judged against (page_violations.sql). */
export interface ViolationRow {
  readonly loopId: string;
  readonly seq: string;
  readonly verdict: string;
  readonly kind: string;
  readonly detail: string;
  /** The envelope's own time text, verbatim. */
  readonly time: string;
  /** `YYYY-MM-DD hh:mm:ss`, UTC. */
  readonly ingestedAt: string;
  readonly carriedHash: string;
  readonly expectedHash: string;
  readonly payload: string;
  readonly evidence: string;
}

/** A row of page_violations.sql: chain_violations_now's columns (seq a UInt64), the ingest time as text. */
interface ViolationJson {
  loop_id: string;
  seq: Int64Json;
  verdict_text: string;
  detail_text: string;
  kind_text: string;
  time_of: string;
  carried_hash: string;
  expected_hash: string;
  payload_text: string;
  evidence_text: string;
  ingested_text: string;
}

/** The `limit` chain violations ingested last, at or after `since` (Unix seconds). */
export async function violations(ch: ClickHouseClient, since: number, limit: number): Promise<ViolationRow[]> {
  const rows = await queryRows<ViolationJson>(ch, 'page_violations', { since, limit });
  return rows.map((r) => ({
    loopId: r.loop_id,
    seq: String(r.seq),
    verdict: r.verdict_text,
    kind: r.kind_text,
    detail: r.detail_text,
    time: r.time_of,
    ingestedAt: r.ingested_text,
    carriedHash: r.carried_hash,
    expectedHash: r.expected_hash,
    payload: r.payload_text,
    evidence: r.evidence_text,
  }));
}

/** A loop whose ledgers disagree (page_reconciliation.sql): picodollars, exact. */
export interface LoopReconciliationRow {
  readonly loopId: string;
  readonly rootLoopId: string;
  readonly hasTotalSpend: boolean;
  readonly hasChildSpend: boolean;
  readonly modelDisagrees: boolean;
  readonly totalSpendDisagrees: boolean;
  readonly childSpendDisagrees: boolean;
  readonly modelCostPico: bigint;
  readonly modelBudgetPico: bigint;
  readonly budgetPico: bigint;
  readonly totalSpendPico: bigint;
  readonly childSpendPico: bigint;
  readonly modelMinusModelBudgetPico: bigint;
  readonly budgetMinusTotalSpendPico: bigint;
  readonly budgetMinusChildSpendPico: bigint;
}

/** A row of page_reconciliation.sql: flags as UInt8, money as Decimal128 text, the root '' when loop_roots has none. */
interface LoopReconciliationJson {
  loop_id: string;
  root_loop_id: string;
  has_total_spend: number;
  has_child_spend: number;
  model_disagrees: number;
  total_spend_disagrees: number;
  child_spend_disagrees: number;
  model_cost_text: string;
  model_budget_text: string;
  budget_text: string;
  total_spend_text: string;
  child_spend_text: string;
  model_minus_model_budget_text: string;
  budget_minus_total_spend_text: string;
  budget_minus_child_spend_text: string;
}

export async function loopReconciliation(ch: ClickHouseClient, limit: number): Promise<LoopReconciliationRow[]> {
  const rows = await queryRows<LoopReconciliationJson>(ch, 'page_reconciliation', { limit });
  const flag = (v: number): boolean => Number(v) === 1;
  return rows.map((r) => ({
    loopId: r.loop_id,
    rootLoopId: r.root_loop_id || r.loop_id,
    hasTotalSpend: flag(r.has_total_spend),
    hasChildSpend: flag(r.has_child_spend),
    modelDisagrees: flag(r.model_disagrees),
    totalSpendDisagrees: flag(r.total_spend_disagrees),
    childSpendDisagrees: flag(r.child_spend_disagrees),
    modelCostPico: big(r.model_cost_text),
    modelBudgetPico: big(r.model_budget_text),
    budgetPico: big(r.budget_text),
    totalSpendPico: big(r.total_spend_text),
    childSpendPico: big(r.child_spend_text),
    modelMinusModelBudgetPico: big(r.model_minus_model_budget_text),
    budgetMinusTotalSpendPico: big(r.budget_minus_total_spend_text),
    budgetMinusChildSpendPico: big(r.budget_minus_child_spend_text),
  }));
}

/** A root whose tree holds disagreeing loops (page_root_reconciliation.sql). */
export interface RootReconciliationRow {
  readonly rootLoopId: string;
  readonly loops: number;
  readonly loopsDisagreeing: number;
  readonly treeModelCostPico: bigint;
  readonly treeModelBudgetPico: bigint;
  readonly treeBudgetPico: bigint;
}

/** A row of page_root_reconciliation.sql: counts as UInt64, money as Decimal128 text. */
interface RootReconciliationJson {
  root_loop_id: string;
  loops: Int64Json;
  loops_disagreeing: Int64Json;
  tree_model_cost_text: string;
  tree_model_budget_text: string;
  tree_budget_text: string;
}

export async function rootReconciliation(ch: ClickHouseClient, limit: number): Promise<RootReconciliationRow[]> {
  const rows = await queryRows<RootReconciliationJson>(ch, 'page_root_reconciliation', { limit });
  return rows.map((r) => ({
    rootLoopId: r.root_loop_id,
    loops: Number(r.loops),
    loopsDisagreeing: Number(r.loops_disagreeing),
    treeModelCostPico: big(r.tree_model_cost_text),
    treeModelBudgetPico: big(r.tree_model_budget_text),
    treeBudgetPico: big(r.tree_budget_text),
  }));
}

/** A root by counted spend in a range of hours (page_top_roots.sql). */
export interface TopRootRow {
  readonly source: string;
  readonly rootLoopId: string;
  /** The root loop's name ('' for a craze session or a root not placed yet). */
  readonly name: string;
  readonly calls: bigint;
  readonly costPico: bigint;
  /** `YYYY-MM-DD hh:mm:ss`, UTC. */
  readonly firstHour: string;
  readonly lastHour: string;
}

/** A row of page_top_roots.sql and page_top_roots_filtered.sql (fragments/top_roots_columns.sql): all text. */
interface TopRootJson {
  source: string;
  root_loop_id: string;
  loop_name: string;
  calls_text: string;
  cost_text: string;
  first_hour_text: string;
  last_hour_text: string;
}

/**
 * Roots by counted spend in [since, until): from the per-root rollup, or,
 * with a model or loop name filter, from the per-loop rows that keep them
 * (page_top_roots.sql, page_top_roots_filtered.sql).
 */
export async function topRoots(ch: ClickHouseClient, q: { since: number; until: number; limit: number } & SpendFilter): Promise<TopRootRow[]> {
  const { model, name, ...rest } = q;
  const rows =
    model === '' && name === ''
      ? await queryRows<TopRootJson>(ch, 'page_top_roots', rest)
      : await queryRows<TopRootJson>(ch, 'page_top_roots_filtered', { ...rest, model, name });
  return rows.map((r) => ({
    source: r.source,
    rootLoopId: r.root_loop_id,
    name: r.loop_name,
    calls: big(r.calls_text),
    costPico: big(r.cost_text),
    firstHour: r.first_hour_text,
    lastHour: r.last_hour_text,
  }));
}

/** A loop name by the runtime's counted spend in a range of hours (page_top_names.sql). */
export interface TopNameRow {
  readonly name: string;
  readonly calls: bigint;
  readonly costPico: bigint;
}

export async function topNames(ch: ClickHouseClient, q: { since: number; until: number; model: string; limit: number }): Promise<TopNameRow[]> {
  const rows = await queryRows<{ loop_name: string; calls_text: string; cost_text: string }>(ch, 'page_top_names', q);
  return rows.map((r) => ({ name: r.loop_name, calls: big(r.calls_text), costPico: big(r.cost_text) }));
}
