/**
 * The loop runtime's loops as `loops --json` lists them, with their place in
 * the tree (what the page's loop tree reads too).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { foldLoopTree } from '../account/loop-tree.js';
import { loopSpawnLinks, runtimeLoopRows, type RuntimeLoopRow } from '../sink/clickhouse/reads.js';

/** One loop as `loops --json` prints it (the command's documented output). */
export interface LoopSummary {
  loopId: string;
  /** '' for a root. */
  parentLoopId: string;
  rootLoopId: string;
  depth: number | string;
  name: string;
  outcome: string;
  error: string;
  modelCalls: number;
  /** Token sums: numbers while exact (up to 2^53 - 1), else decimal strings. */
  inputTokens: number | string;
  outputTokens: number | string;
  /** Picodollars as decimal strings, exact. */
  modelCostPicoUsd: string;
  budgetPicoUsd: string;
  unverifiedModelCostPicoUsd: string;
  subtreeModelCostPicoUsd: string;
  iterations: number;
  subagentsSpawned: number;
  subagentsCompleted: number;
  subagentsFailed: number;
  /** The loop it was forked from ('' when not a fork), and the last replayed seq. */
  forkedFrom: string;
  forkedAtSeq: number | string;
  /** `YYYY-MM-DD hh:mm:ss`, UTC. */
  firstTime: string;
  lastTime: string;
}

const exact = (n: bigint): number | string => (n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString());

/** The stored loops with their place in the tree, by loop id. */
export function summarizeLoops(rows: readonly RuntimeLoopRow[], spawnedBy: ReadonlyMap<string, string>): LoopSummary[] {
  const places = foldLoopTree(rows, spawnedBy);
  return rows.map((r) => {
    const place = places.get(r.loopId)!;
    return {
      loopId: r.loopId,
      parentLoopId: place.parentLoopId,
      rootLoopId: place.rootLoopId,
      depth: exact(place.depth),
      name: r.name,
      outcome: r.outcome,
      error: r.error,
      modelCalls: r.modelCalls,
      inputTokens: exact(r.inputTokens),
      outputTokens: exact(r.outputTokens),
      modelCostPicoUsd: r.modelCostPico.toString(),
      budgetPicoUsd: r.budgetPico.toString(),
      unverifiedModelCostPicoUsd: r.unverifiedModelCostPico.toString(),
      subtreeModelCostPicoUsd: place.subtreeModelCostPico.toString(),
      iterations: r.iterations,
      subagentsSpawned: r.subagentsSpawned,
      subagentsCompleted: r.subagentsCompleted,
      subagentsFailed: r.subagentsFailed,
      forkedFrom: r.forkedFrom,
      forkedAtSeq: exact(r.forkedAtSeq),
      firstTime: r.firstTime,
      lastTime: r.lastTime,
    };
  });
}

/** Every stored loop with its place in the tree (the whole tree is read: a root or a subtree sum needs every ancestor and descendant). */
export async function readLoops(ch: ClickHouseClient): Promise<LoopSummary[]> {
  return summarizeLoops(await runtimeLoopRows(ch), await loopSpawnLinks(ch));
}
