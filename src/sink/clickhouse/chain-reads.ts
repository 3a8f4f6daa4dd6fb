/**
 * The hash chains as stored, for `report`: envelopes and loops per verdict,
 * and the chain violations ingested last (chain_summary.sql,
 * chain_violations_latest.sql).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { limitParam, type Int64Json } from './read-values.js';
import { queryRows } from './sql.js';

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
  const ranges = await queryRows<{ part: string; kafka_partition: number; first_offset: Int64Json; last_offset: Int64Json }>(ch, 'envelope_part_ranges');
  const rows = await queryRows<{ verdict: string; envelopes: Int64Json; loops: Int64Json; parts: string[] }>(ch, 'chain_summary');
  const parts = new Set(rows.flatMap((r) => r.parts));
  const stored = ranges.map((r) => ({ part: r.part, partition: Number(r.kafka_partition), first: BigInt(r.first_offset), last: BigInt(r.last_offset) }));
  const exact = partsMayDuplicate(stored, parts) ? await queryRows<{ verdict: string; envelopes: Int64Json; loops: Int64Json }>(ch, 'chain_summary_final') : rows;
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
  const rows = await queryRows<{ loop_id: string; seq: Int64Json; verdict: string; detail: string; time_text: string }>(ch, 'chain_violations_latest', {
    limit: limitParam(limit),
  });
  return rows.map((r) => ({ loopId: r.loop_id, seq: BigInt(r.seq), verdict: r.verdict, detail: r.detail, time: r.time_text }));
}
