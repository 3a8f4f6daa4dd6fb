/**
 * Counted spend of the loop runtime and craze, folded by model, day, loop
 * name, root or source: what `spend --json` prints and `/api/spend` answers.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { rollupSpendGroups, spendGroups, type SpendGroup } from './spend-reads.js';
import { readLoops } from './loops.js';

export const SPEND_BY = ['model', 'day', 'name', 'root', 'source'] as const;
export type SpendBy = (typeof SPEND_BY)[number];
export const SPEND_SOURCES = ['runtime', 'craze', 'all'] as const;
export type SpendSource = (typeof SPEND_SOURCES)[number];

/** One row of `spend --json`: its key columns (by --by) and the sums. */
export interface SpendRow {
  source: string;
  provider?: string;
  model?: string;
  day?: string;
  name?: string;
  rootLoopId?: string;
  calls: number;
  /** Token sums as decimal strings, exact. */
  inputTokens: string;
  outputTokens: string;
  /** Picodollars as a decimal string, exact. */
  costPicoUsd: string;
  /** craze usage reports without a price: their cost is a floor. */
  unpricedCalls: number;
}

/** Where a spend group's owner sits: the loop's name and root (runtime), the session itself (craze). */
interface Owner {
  readonly name: string;
  readonly root: string;
}

/** Folds spend groups into rows keyed by `by`, costliest first (ties by key); by day, newest day first. */
export function foldSpend(groups: readonly SpendGroup[], by: SpendBy, owners: ReadonlyMap<string, Owner>): SpendRow[] {
  const rows = new Map<string, SpendRow & { cost: bigint; input: bigint; output: bigint }>();
  for (const g of groups) {
    const owner = g.source === 'runtime' ? owners.get(g.owner) : undefined;
    const keyed: Partial<SpendRow> =
      by === 'model'
        ? { provider: g.provider, model: g.model }
        : by === 'day'
          ? { day: g.day }
          : by === 'name'
            ? { name: g.name ?? owner?.name ?? '' }
            : by === 'root'
              ? // A craze session is its own root.
                { rootLoopId: g.source === 'runtime' ? (owner?.root ?? g.owner) : g.owner }
              : {};
    const key = JSON.stringify([g.source, keyed]);
    let row = rows.get(key);
    if (!row) {
      row = { source: g.source, ...keyed, calls: 0, inputTokens: '', outputTokens: '', costPicoUsd: '', unpricedCalls: 0, cost: 0n, input: 0n, output: 0n };
      rows.set(key, row);
    }
    row.calls += g.calls;
    row.unpricedCalls += g.unpricedCalls;
    row.cost += g.costPico;
    row.input += g.inputTokens;
    row.output += g.outputTokens;
  }
  type Entry = [string, { cost: bigint; day?: string }];
  const costliest = ([ka, a]: Entry, [kb, b]: Entry): number => (a.cost !== b.cost ? (a.cost > b.cost ? -1 : 1) : ka < kb ? -1 : ka > kb ? 1 : 0);
  // Days are a series: newest first, each day's sources costliest first.
  const newest = (a: Entry, b: Entry): number => {
    const [da, db] = [a[1].day ?? '', b[1].day ?? ''];
    return da === db ? costliest(a, b) : da > db ? -1 : 1;
  };
  return [...rows.entries()]
    .sort(by === 'day' ? newest : costliest)
    .map(([, { cost, input, output, ...row }]) => ({ ...row, costPicoUsd: cost.toString(), inputTokens: input.toString(), outputTokens: output.toString() }));
}

export interface SpendQuery {
  readonly by: SpendBy;
  readonly source: SpendSource;
  /** Spend at or after this time; `until`: before it. */
  readonly since?: Date;
  readonly until?: Date;
  /** Read the hour rollups (every hour the window overlaps, whole; late rows wait for the next sweep), not every stored envelope. */
  readonly rollups?: boolean;
  /** At most this many rows, the first in the order printed (costliest; by day, newest); undefined or 0: all. */
  readonly limit?: number;
}

/** The spend rows of a query, read from ClickHouse (the loops too, when folded by name or root). */
export async function readSpend(ch: ClickHouseClient, q: SpendQuery): Promise<SpendRow[]> {
  const rows = await spendRows(ch, q);
  return q.limit ? rows.slice(0, q.limit) : rows;
}

async function spendRows(ch: ClickHouseClient, q: SpendQuery): Promise<SpendRow[]> {
  const sources: readonly ('runtime' | 'craze')[] = q.source === 'all' ? ['runtime', 'craze'] : [q.source];
  if (q.rollups) {
    // Grouped by the --by key in ClickHouse: each group is one row, so the fold only renders and sorts them.
    return foldSpend(await rollupSpendGroups(ch, sources, q.by, { since: q.since, until: q.until }), q.by, new Map());
  }
  const groups = await spendGroups(ch, sources, { since: q.since, until: q.until });
  const owners = new Map<string, Owner>();
  if ((q.by === 'name' || q.by === 'root') && sources.includes('runtime')) {
    for (const l of await readLoops(ch)) owners.set(l.loopId, { name: l.name, root: l.rootLoopId });
  }
  return foldSpend(groups, q.by, owners);
}
