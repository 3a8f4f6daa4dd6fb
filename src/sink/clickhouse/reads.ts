/**
 * Every query that shows what is stored (the `report`, `sessions` and `doctor`
 * commands, the demo through them, and the alert rules to come), as functions
 * that return typed values. The SQL is in `queries/NAME.sql`; values reach it
 * only through renderSql(), never by string concatenation.
 *
 * ClickHouse writes 64-bit integers into JSON as strings. Money and token sums
 * stay exact here: a bigint, or the decimal string ClickHouse computed from
 * Decimal128. Only counts that cannot pass 2^53 in practice become numbers.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { inListChunks, queryRows } from './sql.js';

/** No LIMIT: ClickHouse's LIMIT takes a UInt64, and no table holds this many rows. */
const NO_LIMIT = 2n ** 64n - 1n;

/**
 * A row count for `LIMIT {limit:UInt64}`: a whole number, or undefined for no
 * limit. One beyond 2^53 is not exact as a number; it means "all" as much as
 * NO_LIMIT does (and String() would write 1e21 and up in exponent form).
 */
function limitParam(limit: number | undefined): bigint {
  if (limit === undefined) return NO_LIMIT;
  if (!Number.isInteger(limit) || limit < 0) throw new RangeError(`limit ${limit} is not a whole number`);
  return limit > Number.MAX_SAFE_INTEGER ? NO_LIMIT : BigInt(limit);
}

const read = queryRows;

/** A 64-bit integer as ClickHouse writes it into JSON: a string (or a number when quoting is turned off). */
type Int64Json = string | number;

/** The server's version text, e.g. `18.16.1` or `25.8.2.1`. */
export async function serverVersion(ch: ClickHouseClient): Promise<string> {
  const [row] = await read<{ version: string }>(ch, 'server_version');
  if (row === undefined) throw new Error('SELECT version() returned no row');
  return row.version;
}

/** The user's readonly setting: 0 may write, 1 or 2 may not (session_readonly.sql). */
export async function sessionReadonly(ch: ClickHouseClient): Promise<number> {
  const [row] = await read<{ readonly: number }>(ch, 'session_readonly');
  if (row === undefined) throw new Error('system.settings has no readonly setting');
  return Number(row.readonly);
}

/** Stored envelopes and distinct loops with one verdict (chain_summary.sql). */
export interface VerdictCount {
  readonly verdict: string;
  readonly envelopes: bigint;
  readonly loops: bigint;
}

/** One stored part's range of Kafka offsets in one Kafka partition number, of any topic (envelope_part_ranges.sql). */
export interface PartRange {
  readonly part: string;
  readonly partition: number;
  readonly first: bigint;
  readonly last: bigint;
}

/**
 * Whether the parts named may hold two copies of one key. Two copies are one
 * Kafka record stored twice: same (topic, partition, offset), in two parts (one
 * insert holds a record once, a merge keeps one copy). So parts whose offset
 * ranges do not overlap in any Kafka partition number hold no key twice (two
 * topics' ranges are checked as one: an overlap only costs the FINAL read). A
 * part with no range known (stored after the ranges were read) may.
 */
export function partsMayDuplicate(ranges: readonly PartRange[], parts: ReadonlySet<string>): boolean {
  const known = new Set(ranges.map((r) => r.part));
  for (const p of parts) if (!known.has(p)) return true;
  const byPartition = new Map<number, PartRange[]>();
  for (const r of ranges) {
    if (!parts.has(r.part)) continue;
    const list = byPartition.get(r.partition) ?? [];
    list.push(r);
    byPartition.set(r.partition, list);
  }
  for (const list of byPartition.values()) {
    list.sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
    let reach = -1n;
    for (const r of list) {
      // Sorted by first offset, a range overlaps an earlier one iff it starts
      // at or before the furthest offset reached so far (one part has one
      // range per Kafka partition, so that range is another part's).
      if (r.first <= reach) return true;
      if (r.last > reach) reach = r.last;
    }
  }
  return false;
}

/**
 * Envelopes and loops per verdict, by verdict name, as `envelopes FINAL` counts
 * them. FINAL merges every envelope (on 18.16 single-threaded, seconds per
 * million rows), so the counts are read without it, with the names of the
 * parts they came from, and trusted only when those parts cannot hold a key
 * twice (partsMayDuplicate over the part ranges read just before: parts never
 * change, so their ranges still describe them). Otherwise, after a retried
 * insert that no merge has collapsed yet, the FINAL read gives the answer.
 */
export async function verdictCounts(ch: ClickHouseClient): Promise<VerdictCount[]> {
  const ranges = await read<{ part: string; kafka_partition: number; first_offset: Int64Json; last_offset: Int64Json }>(ch, 'envelope_part_ranges');
  const rows = await read<{ verdict: string; envelopes: Int64Json; loops: Int64Json; parts: string[] }>(ch, 'chain_summary');
  const parts = new Set(rows.flatMap((r) => r.parts));
  const stored = ranges.map((r) => ({ part: r.part, partition: Number(r.kafka_partition), first: BigInt(r.first_offset), last: BigInt(r.last_offset) }));
  const exact = partsMayDuplicate(stored, parts) ? await read<{ verdict: string; envelopes: Int64Json; loops: Int64Json }>(ch, 'chain_summary_final') : rows;
  return exact.map((r) => ({ verdict: r.verdict, envelopes: BigInt(r.envelopes), loops: BigInt(r.loops) }));
}

/** One stored chain violation (chain_violations_latest.sql). */
export interface ChainViolation {
  readonly loopId: string;
  readonly seq: bigint;
  readonly verdict: string;
  readonly detail: string;
  /** The envelope's own time, verbatim. */
  readonly time: string;
}

/** The `limit` chain violations ingested last, newest first. */
export async function latestViolations(ch: ClickHouseClient, limit: number): Promise<ChainViolation[]> {
  const rows = await read<{ loop_id: string; seq: Int64Json; verdict: string; detail: string; time_text: string }>(ch, 'chain_violations_latest', {
    limit: limitParam(limit),
  });
  return rows.map((r) => ({ loopId: r.loop_id, seq: BigInt(r.seq), verdict: r.verdict, detail: r.detail, time: r.time_text }));
}

/**
 * What a craze session counts over all its incarnations: spend, tokens,
 * outcomes. One list of fields for the `sessions` output, the hand-computed
 * ground truth and the tests' reference, each with its own number types.
 */
export interface SessionTotals<Money, Tokens> {
  sessionId: string;
  incarnations: number;
  /** Picodollars, exact. */
  costPicoUsd: Money;
  inputTokens: Tokens;
  outputTokens: Tokens;
  reasoningTokens: Tokens;
  cacheReadTokens: Tokens;
  cacheCreationTokens: Tokens;
  unpricedReports: number;
  turnsDone: number;
  turnsFailed: number;
  turnsCancelled: number;
  subagentsCompleted: number;
  subagentsFailed: number;
  subagentsCancelled: number;
  subagentsAbandoned: number;
}

/**
 * One craze session over all its incarnations, in the shape `sessions --json`
 * prints (the command's documented output): cost as a decimal string, token
 * sums as numbers while exact (up to 2^53 - 1), else as decimal strings.
 */
export interface SessionSummary extends SessionTotals<string, number | string> {
  /** Models used, sorted (JavaScript string order). */
  models: string[];
  provider: string;
  cwd: string;
  /** `YYYY-MM-DD hh:mm:ss`, UTC. */
  firstSeen: string;
  /** `YYYY-MM-DD hh:mm:ss`, UTC. */
  lastSeen: string;
}

export interface SessionFilter {
  /** Only sessions last seen at or after this time (whole seconds count: DateTime has no fraction). */
  readonly since?: Date;
  /** At most this many sessions, the costliest. */
  readonly limit?: number;
}

/** DateTime's last second (2106-02-07 06:28:15 UTC): no stored time is later. */
const DATETIME_MAX_SECONDS = 2 ** 32 - 1;

/** A token sum as a JSON number when exact, else as its decimal string. */
const exact = (text: Int64Json): number | string => (BigInt(text) <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(text) : String(text));

/**
 * Craze sessions, costliest first (ties by session id, byte order), filtered
 * and limited in ClickHouse (craze_sessions.sql).
 */
export async function crazeSessions(ch: ClickHouseClient, filter: SessionFilter = {}): Promise<SessionSummary[]> {
  const { since, limit } = filter;
  // DateTime is Unix seconds in 0..2^32-1: a bound before it keeps every
  // session, one after it none (toDateTime would wrap it around instead).
  const sinceSeconds = since === undefined ? 0 : Math.max(0, Math.floor(since.getTime() / 1000));
  if (Number.isNaN(sinceSeconds)) throw new RangeError('crazeSessions: since is an invalid Date');
  if (sinceSeconds > DATETIME_MAX_SECONDS) return [];
  const rows = await read<{
    session_id: string;
    incarnations: Int64Json;
    cost_pico: string;
    input_tokens: string;
    output_tokens: string;
    reasoning_tokens: string;
    cache_read_tokens: string;
    cache_creation_tokens: string;
    unpriced_reports: Int64Json;
    models: string[];
    provider: string;
    cwd: string;
    first_seen_text: string;
    last_seen_text: string;
    turns_done: Int64Json;
    turns_failed: Int64Json;
    turns_cancelled: Int64Json;
    subagents_completed: Int64Json;
    subagents_failed: Int64Json;
    subagents_cancelled: Int64Json;
    subagents_abandoned: Int64Json;
  }>(ch, 'craze_sessions', {
    since: sinceSeconds,
    limit: limitParam(limit),
  });
  return rows.map((r) => ({
    sessionId: r.session_id,
    incarnations: Number(r.incarnations),
    costPicoUsd: r.cost_pico,
    inputTokens: exact(r.input_tokens),
    outputTokens: exact(r.output_tokens),
    reasoningTokens: exact(r.reasoning_tokens),
    cacheReadTokens: exact(r.cache_read_tokens),
    cacheCreationTokens: exact(r.cache_creation_tokens),
    unpricedReports: Number(r.unpriced_reports),
    turnsDone: Number(r.turns_done),
    turnsFailed: Number(r.turns_failed),
    turnsCancelled: Number(r.turns_cancelled),
    subagentsCompleted: Number(r.subagents_completed),
    subagentsFailed: Number(r.subagents_failed),
    subagentsCancelled: Number(r.subagents_cancelled),
    subagentsAbandoned: Number(r.subagents_abandoned),
    models: [...r.models].sort(),
    provider: r.provider,
    cwd: r.cwd,
    firstSeen: r.first_seen_text,
    lastSeen: r.last_seen_text,
  }));
}

/** One loop of the loop runtime as stored: its own facts and own counted spend (runtime_loop_rows.sql). */
export interface RuntimeLoopRow {
  readonly loopId: string;
  readonly name: string;
  /** The parent its LoopStarted names ('' for a root, or when no LoopStarted is stored yet). */
  readonly startedParent: string;
  /** LoopStarted's depth; undefined when no LoopStarted is stored yet. */
  readonly startedDepth: bigint | undefined;
  readonly outcome: string;
  readonly error: string;
  readonly iterations: number;
  readonly subagentsSpawned: number;
  readonly subagentsCompleted: number;
  readonly subagentsFailed: number;
  readonly forkedFrom: string;
  readonly forkedAtSeq: bigint;
  /** `YYYY-MM-DD hh:mm:ss`, UTC. */
  readonly firstTime: string;
  readonly lastTime: string;
  readonly modelCalls: number;
  readonly inputTokens: bigint;
  readonly outputTokens: bigint;
  readonly modelCostPico: bigint;
  readonly budgetPico: bigint;
  readonly unverifiedModelCostPico: bigint;
}

/** A Decimal128 sum read as text ('' when ANY LEFT JOIN found no row): exact. */
const decimalText = (text: string): bigint => (text === '' ? 0n : BigInt(text));

interface RuntimeLoopJson {
    loop_id: string;
    name: string;
    started_parent: string;
    started_depth: Int64Json;
    started: number;
    finished_outcome: string;
    finished_error: string;
    iterations: Int64Json;
    subagents_spawned: Int64Json;
    subagents_completed: Int64Json;
    subagents_failed: Int64Json;
    forked_from: string;
    forked_at_seq: Int64Json;
    first_time_text: string;
    last_time_text: string;
    model_calls: Int64Json;
    input_tokens_sum: string;
    output_tokens_sum: string;
    model_cost: string;
    budget_cost: string;
    unverified_model_cost: string;
}

/** loop_id IN lists per query: runtime_loop_rows_of.sql holds its list four times, and max_query_size is 262,144 bytes. */
const ROWS_OF_LIST_BYTES = 50_000;

/** Byte order of UTF-8 text, ClickHouse's order of String. */
export const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** Every loop of the loop runtime, by loop id. */
export async function runtimeLoopRows(ch: ClickHouseClient): Promise<RuntimeLoopRow[]> {
  return (await read<RuntimeLoopJson>(ch, 'runtime_loop_rows')).map(loopRow);
}

/**
 * The rows runtimeLoopRows() gives these loops (those stored), by loop id,
 * read by primary key (runtime_loop_rows_of.sql), a chunk of ids per query.
 */
export async function runtimeLoopRowsOf(ch: ClickHouseClient, loopIds: readonly string[]): Promise<RuntimeLoopRow[]> {
  const ids = [...new Set(loopIds)].sort(byBytes);
  const out: RuntimeLoopRow[] = [];
  // Chunks of sorted ids, each answered in id order: concatenated, still in id order.
  for (const chunk of inListChunks(ids, ROWS_OF_LIST_BYTES)) out.push(...(await read<RuntimeLoopJson>(ch, 'runtime_loop_rows_of', { loop_ids: chunk })).map(loopRow));
  return out;
}

function loopRow(r: RuntimeLoopJson): RuntimeLoopRow {
  return {
    loopId: r.loop_id,
    name: r.name,
    startedParent: r.started_parent,
    startedDepth: Number(r.started) === 1 ? BigInt(r.started_depth) : undefined,
    outcome: r.finished_outcome,
    error: r.finished_error,
    iterations: Number(r.iterations),
    subagentsSpawned: Number(r.subagents_spawned),
    subagentsCompleted: Number(r.subagents_completed),
    subagentsFailed: Number(r.subagents_failed),
    forkedFrom: r.forked_from,
    forkedAtSeq: BigInt(r.forked_at_seq),
    firstTime: r.first_time_text,
    lastTime: r.last_time_text,
    modelCalls: Number(r.model_calls),
    inputTokens: decimalText(r.input_tokens_sum),
    outputTokens: decimalText(r.output_tokens_sum),
    modelCostPico: decimalText(r.model_cost),
    budgetPico: decimalText(r.budget_cost),
    unverifiedModelCostPico: decimalText(r.unverified_model_cost),
  };
}

/** The parent's side of the loop tree: child loop id -> the loop that spawned it (loop_spawn_links.sql). */
export async function loopSpawnLinks(ch: ClickHouseClient): Promise<Map<string, string>> {
  const rows = await read<{ child: string; spawned_by: string }>(ch, 'loop_spawn_links');
  return new Map(rows.map((r) => [r.child, r.spawned_by]));
}

/** loopSpawnLinks() for the children these loops spawned (loop_spawn_links_of.sql, by primary key). */
export async function loopSpawnLinksOf(ch: ClickHouseClient, spawners: readonly string[]): Promise<Map<string, string>> {
  const links = new Map<string, string>();
  for (const chunk of inListChunks([...new Set(spawners)].sort(byBytes), ROWS_OF_LIST_BYTES)) {
    for (const r of await read<{ child: string; spawned_by: string }>(ch, 'loop_spawn_links_of', { loop_ids: chunk })) {
      if (!links.has(r.child)) links.set(r.child, r.spawned_by);
    }
  }
  return links;
}

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
    for (const r of await read<SpendSums & { loop_id: string }>(ch, 'runtime_spend_groups', params)) groups.push(spendGroup('runtime', r.loop_id, r, 0));
  }
  if (sources.includes('craze')) {
    for (const r of await read<SpendSums & { session_id: string; unpriced_calls: Int64Json }>(ch, 'craze_spend_groups', params)) {
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
    const rows = await read<Omit<SpendSums, 'provider' | 'model' | 'day'> & { source: string; root_loop_id: string; unpriced_calls: Int64Json }>(ch, 'spend_rollup_root_groups', params);
    return rows.filter(known).map((r) => spendGroup(r.source, r.root_loop_id, { ...r, provider: '', model: '', day: '' }, Number(r.unpriced_calls)));
  }
  const rows = await read<SpendSums & { source: string; loop_name: string; unpriced_calls: Int64Json }>(ch, 'spend_rollup_groups', { ...params, by });
  return rows.filter(known).map((r) => ({ ...spendGroup(r.source, '', r, Number(r.unpriced_calls)), name: r.loop_name }));
}
