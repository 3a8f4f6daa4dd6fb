/**
 * The hash chains as stored, for `report`: envelopes and loops per verdict,
 * and the chain violations ingested last (chain_summary_now.sql,
 * chain_violations_latest.sql), from the kept chain flags (0021).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { limitParam, type Int64Json } from '../clickhouse/read-values.js';
import { queryRows } from './queries.js';

/** Stored envelopes and distinct loops with one verdict (chain_summary_now.sql). */
export interface VerdictCount {
  readonly verdict: string;
  readonly envelopes: bigint;
  readonly loops: bigint;
}

/**
 * Envelopes and loops per verdict, by verdict name, as `envelopes FINAL` counts
 * them (chain_summary_now.sql): from the chain flags the rollup sweep keeps
 * (0021) for the loops not stored since its mark, by primary key for the
 * others, so neither FINAL nor a read of every envelope's key columns.
 */
export async function verdictCounts(ch: ClickHouseClient): Promise<VerdictCount[]> {
  const rows = await queryRows<{ verdict: string; envelopes: Int64Json; loops: Int64Json }>(ch, 'chain_summary_now');
  return rows.map((r) => ({ verdict: r.verdict, envelopes: BigInt(r.envelopes), loops: BigInt(r.loops) }));
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
  const rows = await queryRows<{ loop_id: string; seq: Int64Json; verdict: string; detail: string; time_text: string }>(ch, 'chain_violations_latest', {
    limit: limitParam(limit),
  });
  return rows.map((r) => ({ loopId: r.loop_id, seq: BigInt(r.seq), verdict: r.verdict, detail: r.detail, time: r.time_text }));
}
