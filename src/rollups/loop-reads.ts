/**
 * The loop runtime's loops as stored: each loop's own facts and counted spend
 * (runtime_loop_rows.sql), and the spawn links that make them a tree
 * (loop_spawn_links.sql); every loop, or those named, by primary key.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { byBytes, decimalText, type Int64Json } from '../clickhouse/read-values.js';
import { inListChunks } from '../clickhouse/sql.js';
import { queryRows } from './queries.js';

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

/** A row of runtime_loop_rows.sql as ClickHouse writes it into JSON (loop_summaries keeps the same columns). */
export interface RuntimeLoopJson {
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

/** Every loop of the loop runtime, by loop id. */
export async function runtimeLoopRows(ch: ClickHouseClient): Promise<RuntimeLoopRow[]> {
  return (await queryRows<RuntimeLoopJson>(ch, 'runtime_loop_rows')).map(loopRow);
}

/**
 * The rows runtimeLoopRows() gives these loops (those stored), by loop id,
 * read by primary key (runtime_loop_rows_of.sql), a chunk of ids per query.
 */
export async function runtimeLoopRowsOf(ch: ClickHouseClient, loopIds: readonly string[]): Promise<RuntimeLoopRow[]> {
  const ids = [...new Set(loopIds)].sort(byBytes);
  const out: RuntimeLoopRow[] = [];
  // Chunks of sorted ids, each answered in id order: concatenated, still in id order.
  for (const chunk of inListChunks(ids, ROWS_OF_LIST_BYTES)) out.push(...(await queryRows<RuntimeLoopJson>(ch, 'runtime_loop_rows_of', { loop_ids: chunk })).map(loopRow));
  return out;
}

/** A RuntimeLoopRow from its JSON columns. */
export function loopRow(r: RuntimeLoopJson): RuntimeLoopRow {
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
  const rows = await queryRows<{ child: string; spawned_by: string }>(ch, 'loop_spawn_links');
  return new Map(rows.map((r) => [r.child, r.spawned_by]));
}

/** loopSpawnLinks() for the children these loops spawned (loop_spawn_links_of.sql, by primary key). */
export async function loopSpawnLinksOf(ch: ClickHouseClient, spawners: readonly string[]): Promise<Map<string, string>> {
  const links = new Map<string, string>();
  for (const chunk of inListChunks([...new Set(spawners)].sort(byBytes), ROWS_OF_LIST_BYTES)) {
    for (const r of await queryRows<{ child: string; spawned_by: string }>(ch, 'loop_spawn_links_of', { loop_ids: chunk })) {
      if (!links.has(r.child)) links.set(r.child, r.spawned_by);
    }
  }
  return links;
}
