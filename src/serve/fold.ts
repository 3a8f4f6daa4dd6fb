/**
 * What the page's endpoints compute in Node from the rows they read (pure):
 * dense time series with per-bucket totals, and a loop tree with subtree
 * costs. Money is bigint all the way and leaves as decimal strings of
 * picodollars; nothing here goes through a float.
 */
import { treeOrder } from '../account/loop-tree.js';
import type { SeriesCell, TreeFactRow, TreeLoopRow } from './page-reads.js';

/** One key's line of a series: per bucket, in the order of `buckets`. */
export interface SeriesLine {
  readonly key: string;
  readonly costPicoUsd: string[];
  readonly calls: number[];
  readonly totalCostPicoUsd: string;
  readonly totalCalls: number;
}

export interface Series {
  /** Each bucket's start, ISO 8601 UTC. */
  readonly buckets: string[];
  /** Costliest first (ties by key, byte order). */
  readonly series: SeriesLine[];
  /** Per bucket, every key's sum. */
  readonly totals: { readonly costPicoUsd: string[]; readonly calls: number[] };
  readonly totalCostPicoUsd: string;
  readonly totalCalls: number;
}

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/** Every bucket from `since` to `until` (Unix seconds, `step` apart), with zeros where no row fell. */
export function foldSeries(cells: readonly SeriesCell[], since: number, until: number, step: number): Series {
  const n = Math.max(0, Math.ceil((until - since) / step));
  const index = (bucket: number): number => Math.floor((bucket - since) / step);
  const lines = new Map<string, { cost: bigint[]; calls: bigint[]; total: bigint; totalCalls: bigint }>();
  const totalCost = new Array<bigint>(n).fill(0n);
  const totalCalls = new Array<bigint>(n).fill(0n);
  for (const c of cells) {
    const i = index(c.bucket);
    if (i < 0 || i >= n) continue;
    let line = lines.get(c.key);
    if (!line) {
      line = { cost: new Array<bigint>(n).fill(0n), calls: new Array<bigint>(n).fill(0n), total: 0n, totalCalls: 0n };
      lines.set(c.key, line);
    }
    line.cost[i]! += c.costPico;
    line.calls[i]! += c.calls;
    line.total += c.costPico;
    line.totalCalls += c.calls;
    totalCost[i]! += c.costPico;
    totalCalls[i]! += c.calls;
  }
  const series = [...lines.entries()]
    .sort(([ka, a], [kb, b]) => (a.total !== b.total ? (a.total > b.total ? -1 : 1) : ka < kb ? -1 : ka > kb ? 1 : 0))
    .map(([key, l]) => ({
      key,
      costPicoUsd: l.cost.map(String),
      calls: l.calls.map(Number),
      totalCostPicoUsd: l.total.toString(),
      totalCalls: Number(l.totalCalls),
    }));
  return {
    buckets: Array.from({ length: n }, (_, i) => iso(since + i * step)),
    series,
    totals: { costPicoUsd: totalCost.map(String), calls: totalCalls.map(Number) },
    totalCostPicoUsd: totalCost.reduce((a, b) => a + b, 0n).toString(),
    totalCalls: Number(totalCalls.reduce((a, b) => a + b, 0n)),
  };
}

/** One loop of GET /api/tree. */
export interface TreeLoop {
  readonly loopId: string;
  /** '' for the root. */
  readonly parentLoopId: string;
  /** Steps to the root. */
  readonly depth: number;
  readonly name: string;
  /** LoopFinished's outcome, '' while unfinished. */
  readonly outcome: string;
  readonly modelCalls: number;
  readonly modelCostPicoUsd: string;
  /** Its own plus every descendant's, each loop once. */
  readonly subtreeModelCostPicoUsd: string;
  readonly convergenceWarnings: number;
  /** Its stored envelopes per verdict (ok, gap, mismatch, fork, …). */
  readonly verdicts: Record<string, number>;
}

/**
 * The loops of one tree, parents before children (siblings by id), each with
 * its subtree cost summed along the ancestor lists (a loop's cost is added to
 * itself and to each of its ancestors, once).
 */
export function foldTree(root: string, loops: readonly TreeLoopRow[], facts: readonly TreeFactRow[]): TreeLoop[] {
  const subtree = new Map<string, bigint>(loops.map((l) => [l.loopId, 0n]));
  for (const l of loops) {
    for (const id of new Set([...l.ancestors, l.loopId])) {
      if (subtree.has(id)) subtree.set(id, subtree.get(id)! + l.ownCostPico);
    }
  }
  const verdicts = new Map<string, Record<string, number>>();
  const outcome = new Map<string, string>();
  const warnings = new Map<string, number>();
  for (const f of facts) {
    const v = verdicts.get(f.loopId) ?? {};
    v[f.verdict] = (v[f.verdict] ?? 0) + f.envelopes;
    verdicts.set(f.loopId, v);
    if (f.outcome !== '') outcome.set(f.loopId, f.outcome);
    warnings.set(f.loopId, (warnings.get(f.loopId) ?? 0) + f.warnings);
  }
  const top = loops.find((l) => l.loopId === root);
  // Loops whose parent is not in the list (a fold mid-way): after the rest, by id.
  const starts = [...(top ? [top] : []), ...[...loops].sort((a, b) => (a.loopId < b.loopId ? -1 : 1))];
  return treeOrder(loops, root, starts).map(({ loop: l }) => ({
    loopId: l.loopId,
    parentLoopId: l.loopId === root ? '' : l.parentLoopId,
    depth: l.ancestors.length,
    name: l.name,
    outcome: outcome.get(l.loopId) ?? '',
    modelCalls: Number(l.ownCalls),
    modelCostPicoUsd: l.ownCostPico.toString(),
    subtreeModelCostPicoUsd: (subtree.get(l.loopId) ?? 0n).toString(),
    convergenceWarnings: warnings.get(l.loopId) ?? 0,
    verdicts: verdicts.get(l.loopId) ?? {},
  }));
}
