/** Spend traffic (issue 10): what a caller asks for, and the exact totals it must add up to. */
import type { TrafficRecord } from './types.js';

export interface SpendTrafficOptions {
  readonly seed: number;
  /** Root loops (tasks), each the root of a tree of sub-agents. */
  readonly roots: number;
  /** Most sub-agents a loop spawns (default 3). */
  readonly maxChildren?: number;
  /** Deepest sub-agent level: 1 = children only, 2 = grandchildren too (default 2). */
  readonly maxDepth?: number;
  /** Iterations (one model call each) per loop, [min, max] (default [1, 3]). */
  readonly iterations?: readonly [number, number];
  /** Fork loops, alternately of a root and of a sub-agent (default max(2, ceil(roots / 3))). */
  readonly forks?: number;
  /** Envelopes delivered a second time, later (default max(4, ceil(roots / 2))). */
  readonly redeliveries?: number;
  /** Calls of the whale model, each between $8M and $9.2M, one per loop: 0, or >= 3 to pass 2^64 picodollars (default 3). */
  readonly whaleCalls?: number;
  /** Plant one ModelCalled whose payload cost is changed after hashing: verdict mismatch (default true). */
  readonly tamper?: boolean;
  /** Plant one second, honestly hashed version of a ModelCalled: verdict fork (default true). */
  readonly secondVersion?: boolean;
  /** First root's start, RFC 3339 UTC (default 2026-11-30T23:57:00Z, so the traffic crosses a UTC midnight). */
  readonly startTime?: string;
  /** Every LoopID starts with it (default `spend-s<seed>`). */
  readonly idPrefix?: string;
}

/** One loop as `agentledger loops --json` must report it. Money: decimal strings of integer picodollars. */
export interface ExpectedSpendLoop {
  readonly loopId: string;
  /** '' for a root. */
  readonly parentLoopId: string;
  readonly rootLoopId: string;
  readonly depth: number;
  readonly name: string;
  /** LoopFinished.outcome_kind; '' while the loop runs. */
  readonly outcome: string;
  readonly error: string;
  readonly modelCalls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly modelCostPicoUsd: string;
  readonly budgetPicoUsd: string;
  /** ModelCalled envelopes that did not verify (mismatch, second version): how many, and their cost. */
  readonly unverifiedModelCalls: number;
  readonly unverifiedModelCostPicoUsd: string;
  readonly subtreeModelCostPicoUsd: string;
  /** The fork's source ('' when not a fork) and ForkedFrom.at_seq (0 when not a fork). */
  readonly forkedFrom: string;
  readonly forkedAtSeq: number;
}

export interface ExpectedModelSpend {
  readonly provider: string;
  readonly model: string;
  readonly calls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costPicoUsd: string;
  readonly unverifiedCostPicoUsd: string;
}

/** The sums a root, a day and the whole traffic report alike. Money: decimal strings of integer picodollars. */
export interface SpendTotals {
  readonly modelCalls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly modelCostPicoUsd: string;
  readonly budgetPicoUsd: string;
  readonly unverifiedModelCostPicoUsd: string;
}

export interface ExpectedRootSpend extends SpendTotals {
  readonly rootLoopId: string;
  readonly name: string;
  /** Loops whose root it is, itself included. */
  readonly loops: number;
}

export interface ExpectedDaySpend extends SpendTotals {
  /** UTC date of the envelopes' Time, YYYY-MM-DD. */
  readonly day: string;
}

export interface LoopSeq {
  readonly loopId: string;
  readonly seq: number;
}

/** What was planted, so a test can assert it is there and name it in a failure. */
export interface SpendPlanted {
  readonly tampered: readonly LoopSeq[];
  readonly secondVersions: readonly LoopSeq[];
  readonly redeliveries: readonly LoopSeq[];
  readonly forks: readonly { readonly loopId: string; readonly sourceLoopId: string; readonly atSeq: number }[];
  /** Roots of the trees whose every child arrives, whole, before its parent's first envelope. */
  readonly childFirstRoots: readonly string[];
  /** Roots of the trees whose parents arrive first (SubAgentSpawned before the child's LoopStarted). */
  readonly parentFirstRoots: readonly string[];
  readonly whale: { readonly provider: string; readonly model: string };
  /** USD texts placed on purpose (exponents, 17 digits, exact halves of a picodollar). */
  readonly usdTexts: readonly string[];
}

export interface ExpectedSpend {
  /** Sorted by loopId. */
  readonly loops: readonly ExpectedSpendLoop[];
  /** Sorted by provider, then model. */
  readonly models: readonly ExpectedModelSpend[];
  /** Sorted by rootLoopId. */
  readonly roots: readonly ExpectedRootSpend[];
  /** Sorted by day. */
  readonly days: readonly ExpectedDaySpend[];
  readonly totals: SpendTotals;
  /** Kafka records, redeliveries and second versions included. */
  readonly records: number;
  /** Distinct (loop, seq): rows to store. */
  readonly envelopes: number;
  /** Every verdict but ok and duplicate, sorted by loopId then seq. */
  readonly violations: readonly (LoopSeq & { readonly verdict: 'mismatch' | 'fork' })[];
  readonly planted: SpendPlanted;
}

export interface SpendTraffic {
  /** In topic order: key = LoopID, value = the Envelope JSON as Go writes it. */
  readonly records: readonly TrafficRecord[];
  readonly expected: ExpectedSpend;
}
