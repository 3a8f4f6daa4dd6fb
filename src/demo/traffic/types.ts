/** What a caller asks for (options, planted problems) and what it gets back (records, expected verdicts). */

/** One Kafka record: key = the LoopID, value = the Envelope JSON. */
export interface TrafficRecord {
  readonly key: string;
  readonly value: Buffer;
}

/**
 * How many loops get each kind of planted problem (one problem per loop, at
 * the first, a middle or the last usable seq in turn):
 * - mismatch: one payload digit changed, carried hash kept → `mismatch` at k;
 * - gap: envelope k deleted → `gap` at k+1;
 * - fork: a second, honestly hashed version of seq k with another payload, after the original → `fork` at k;
 * - timeRegression: envelope k honestly hashed with a Time 1 ns..1 s before k-1's → `time_regression` at k;
 * - reorder: k+1 delivered before k → `gap` at k+1, then `regression` at k;
 * - duplicate: a byte-identical redelivery of k later on → no violation.
 */
export interface ViolationPlan {
  readonly mismatch?: number;
  readonly gap?: number;
  readonly fork?: number;
  readonly timeRegression?: number;
  readonly reorder?: number;
  readonly duplicate?: number;
}
export type PlantedKind = keyof ViolationPlan;
export const PLANTED_KINDS: readonly PlantedKind[] = ['mismatch', 'gap', 'fork', 'timeRegression', 'reorder', 'duplicate'];

/** About 1.5% of the loops (at least one) for each kind of problem. */
export function defaultViolationPlan(loops: number): Required<ViolationPlan> {
  const n = Math.max(1, Math.ceil(loops * 0.015));
  return { mismatch: n, gap: n, fork: n, timeRegression: n, reorder: n, duplicate: n };
}

export type ViolationVerdict = 'mismatch' | 'gap' | 'fork' | 'regression' | 'time_regression';

export interface PlantedViolation {
  readonly loopId: string;
  readonly seq: number;
  readonly verdict: ViolationVerdict;
}

export interface TrafficOptions {
  readonly loops: number;
  /** Envelopes per loop (before planting), fixed or drawn from [min, max]. */
  readonly envelopesPerLoop: number | readonly [number, number];
  readonly seed: number;
  /** Average Kafka record value size to aim for, in bytes (default 1024): pads model responses and tool results. */
  readonly payloadBytes?: number;
  readonly violations?: ViolationPlan;
  /** Earliest loop start, RFC 3339 UTC (default 2026-11-30T10:00:00Z). */
  readonly startTime?: string;
}

export interface ExpectedLoop {
  readonly loopId: string;
  /** Distinct seqs that reach the topic: what must be stored, once each. */
  readonly envelopes: number;
  /** Kafka records of this loop (forks' second versions and duplicates included). */
  readonly records: number;
  /** The planted problem, if any. */
  readonly planted?: { readonly kind: PlantedKind; readonly seq: number };
}

export interface ExpectedTraffic {
  readonly loops: readonly ExpectedLoop[];
  /** Sum of the loops' distinct (loop, seq): rows to store. */
  readonly envelopes: number;
  /** Kafka records in total. */
  readonly records: number;
  /** Exact redeliveries (verdict duplicate; not violations). */
  readonly duplicates: number;
  /** Every verdict other than ok and duplicate, sorted by loopId then seq. */
  readonly violations: readonly PlantedViolation[];
  /**
   * Every (loopId, seq) that must be stored exactly once, sorted by loopId then
   * seq: all envelopes but deleted ones. A fork's second version is extra
   * evidence, not another (loop, seq).
   */
  readonly stored: readonly { readonly loopId: string; readonly seq: number }[];
}

export interface Traffic {
  /** The records in topic order. Generated lazily; iterating again yields the same records. */
  readonly records: Iterable<TrafficRecord>;
  readonly expected: ExpectedTraffic;
}
