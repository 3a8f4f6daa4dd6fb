/**
 * The loop runtime's loops as `loops --json` lists them, with their place in
 * the tree (what the page's loop tree reads too).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { foldLoopTree, treeOrder } from '../account/loop-tree.js';
import { loopChildren, storedSummaries } from '../rollups/loop-summaries.js';
import { loopSpawnLinks, loopSpawnLinksOf, runtimeLoopRows, runtimeLoopRowsOf, type RuntimeLoopRow } from '../rollups/loop-reads.js';
import { byBytes } from '../clickhouse/read-values.js';
import { inListChunks } from '../clickhouse/sql.js';
import { queryRows } from './queries.js';

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

/** Every stored loop with its place in the tree (every loop read: a root or a subtree sum needs every ancestor and descendant). */
export async function readLoops(ch: ClickHouseClient): Promise<LoopSummary[]> {
  return summarizeLoops(await runtimeLoopRows(ch), await loopSpawnLinks(ch));
}

/** What `agentledger loops` selects (its options). */
export interface LoopsQuery {
  readonly idPrefix?: string | undefined;
  readonly root?: string | undefined;
  readonly limit?: number | undefined;
}

/** One printed loop and its indentation (levels under the root, for --root). */
export interface ListedLoop {
  readonly loop: LoopSummary;
  readonly level: number;
}

/** The loops of one tree for the indented view: from the root, or, while it is not stored, from its children in turn. */
function loopsOfTree(loops: readonly LoopSummary[], root: string): ListedLoop[] {
  const top = loops.find((l) => l.loopId === root);
  return treeOrder(loops, root, top ? [top] : loops.filter((l) => l.loopId !== root && l.parentLoopId === root));
}

/** What `loops` prints of every loop (readLoops()), in its order. */
export function selectLoops(loops: LoopSummary[], q: LoopsQuery): ListedLoop[] {
  const prefix = q.idPrefix;
  if (prefix !== undefined) loops = loops.filter((l) => l.loopId.startsWith(prefix));
  const root = q.root;
  let rows = root === undefined ? loops.map((loop) => ({ loop, level: 0 })) : loopsOfTree(loops.filter((l) => l.rootLoopId === root), root);
  if (q.limit !== undefined) rows = rows.slice(0, q.limit);
  return rows;
}

/** `loops` from a read of every loop: the reference, and the answer when no rollup sweep has finished. */
export async function listLoopsFromAll(ch: ClickHouseClient, q: LoopsQuery): Promise<ListedLoop[]> {
  return selectLoops(await readLoops(ch), q);
}

export interface TreeReadOptions {
  /** AGENTLEDGER_ROLLUP_LATE_MS: how far before the last sweep's newest ingest stamp rows count as stored since it. */
  readonly lateMs: number;
  /** Candidate or live loops above which the whole table is read instead (AGENTLEDGER_ROLLUP_SCAN_LOOPS). */
  readonly maxLoops: number;
  /**
   * Told which read answered, for tests: 'trees' (the printed loops' trees:
   * how many loops), 'summaries' (every loop, from the sweep's summaries) or
   * 'all' (every loop's envelopes); and, for the first two, how many loops'
   * rows came from loop_summaries and how many were read live.
   */
  readonly onRead?: (read: 'trees' | 'summaries' | 'all', loops?: number, sources?: { readonly summarized: number; readonly live: number }) => void;
}

/** A loop with a row stored since the last sweep, and the parents and children its rows name. */
interface ChangedLoop {
  readonly loop_id: string;
  readonly parents: string[];
  readonly children: string[];
}

/** What `loops` knows before reading rows: the loops stored since the marks, and which marks there are. */
interface Since {
  /** loop_roots holds the tree of every link not changed since (a rollup sweep has finished). */
  readonly swept: boolean;
  /** loop_summaries holds the exact row of every loop not in `changed` (a summary step has finished). */
  readonly summarized: boolean;
  readonly changed: readonly ChangedLoop[];
  readonly changedIds: ReadonlySet<string>;
}

/**
 * The loops stored since the last finished sweep's newest ingest stamp, and
 * since the last summary step's, less the margin, whichever is earlier (a
 * loop more read live, or one more candidate, costs time, never exactness);
 * undefined when neither has finished or they are too many.
 */
async function storedSince(ch: ClickHouseClient, options: TreeReadOptions): Promise<Since | undefined> {
  const [m] = await queryRows<Record<'swept_through' | 'sweeps' | 'summarized_through' | 'summary_marks', number | string>>(ch, 'loops_marks');
  const margin = Math.ceil(options.lateMs / 1000);
  const swept = Number(m?.sweeps ?? 0) > 0;
  const summarized = Number(m?.summary_marks ?? 0) > 0;
  const marks = [...(swept ? [Number(m?.swept_through ?? 0)] : []), ...(summarized ? [Number(m?.summarized_through ?? 0)] : [])];
  if (marks.length === 0) return undefined;
  const since = Math.max(0, Math.min(...marks) - margin);
  const changed = await queryRows<ChangedLoop>(ch, 'loops_changed_since', { since });
  if (changed.length > options.maxLoops) return undefined;
  return { swept, summarized, changed, changedIds: new Set(changed.map((c) => c.loop_id)) };
}

/** The rows and spawn links of these loops (or every loop): from loop_summaries for those not changed since, live for the others. */
async function rowsOf(
  ch: ClickHouseClient,
  since: Since,
  loops: readonly string[] | 'all',
): Promise<{ rows: RuntimeLoopRow[]; spawnedBy: Map<string, string>; summarized: number; live: number }> {
  if (!since.summarized) {
    if (loops === 'all') throw new Error('rowsOf: every loop live is readLoops()');
    const [rows, spawnedBy] = await Promise.all([runtimeLoopRowsOf(ch, loops), loopSpawnLinksOf(ch, loops)]);
    return { rows, spawnedBy, summarized: 0, live: rows.length };
  }
  const live = loops === 'all' ? [...since.changedIds] : loops.filter((id) => since.changedIds.has(id));
  const kept = loops === 'all' ? 'all' : loops.filter((id) => !since.changedIds.has(id));
  const [stored, liveRows, liveChildren] = await Promise.all([
    kept === 'all' || kept.length > 0 ? storedSummaries(ch, kept) : Promise.resolve([]),
    live.length > 0 ? runtimeLoopRowsOf(ch, live) : Promise.resolve([]),
    live.length > 0 ? loopChildren(ch, live) : Promise.resolve(new Map<string, string[]>()),
  ]);
  const summaries = stored.filter((s) => !since.changedIds.has(s.row.loopId));
  const rows = [...summaries.map((s) => s.row), ...liveRows].sort((a, b) => byBytes(a.loopId, b.loopId));
  // When two loops' SubAgentSpawned name one child, either counts (any() in the full read).
  const spawnedBy = new Map<string, string>();
  for (const [spawner, children] of [...summaries.map((s) => [s.row.loopId, s.children] as const), ...liveChildren]) {
    for (const child of children) if (!spawnedBy.has(child)) spawnedBy.set(child, spawner);
  }
  return { rows, spawnedBy, summarized: summaries.length, live: liveRows.length };
}

/**
 * `loops`, answering what listLoopsFromAll() answers (docs/spend.md, "How
 * `loops` reads"). After a rollup sweep, each loop's row comes from the
 * sweep's summary (loop_summaries) unless the loop has a row stored since,
 * which is read live by primary key; with --root or --limit only the trees
 * of the loops it prints are read. Without a finished sweep, or with too many
 * loops stored since, every loop's envelopes are read.
 */
export async function listLoops(ch: ClickHouseClient, q: LoopsQuery, options: TreeReadOptions): Promise<ListedLoop[]> {
  if (q.limit === 0) return [];
  const since = await storedSince(ch, options);
  const all = async (): Promise<ListedLoop[]> => {
    if (since?.summarized) {
      const every = await rowsOf(ch, since, 'all');
      options.onRead?.('summaries', every.rows.length, { summarized: every.summarized, live: every.live });
      return selectLoops(summarizeLoops(every.rows, every.spawnedBy), q);
    }
    options.onRead?.('all');
    return listLoopsFromAll(ch, q);
  };
  if (since === undefined || !since.swept) return all();
  let seeds: string[];
  if (q.root !== undefined) seeds = [q.root];
  else if (q.limit !== undefined && q.limit <= options.maxLoops) {
    seeds = (await queryRows<{ loop_id: string }>(ch, 'loops_first', { prefix: q.idPrefix ?? '', n: q.limit })).map((r) => r.loop_id);
    if (seeds.length === 0) return [];
  } else return all();
  const trees = await treeCandidates(ch, seeds, since, options);
  if (trees === undefined) return all();
  const { rows, spawnedBy, summarized, live } = await rowsOf(ch, since, trees.loops);
  // A loop stored since the sweep that had a parent then and has none now
  // may take it from a SubAgentSpawned stored long ago, by a loop no
  // candidate names (its LoopStarted naming one replaced by one naming
  // none): the candidates may miss that parent's tree.
  const startedParent = new Map(rows.map((r) => [r.loopId, r.startedParent]));
  for (const [loopId, before] of trees.parentsBefore) {
    if (before !== '' && (startedParent.get(loopId) || spawnedBy.get(loopId) || '') === '') return all();
  }
  options.onRead?.('trees', trees.loops.length, { summarized, live });
  const loops = summarizeLoops(rows, spawnedBy);
  if (q.root !== undefined) return selectLoops(loops, q);
  // The first ids without FINAL are a superset of the stored loops' first ids:
  // when each has its exact row, they are the first loops; else read all.
  const byId = new Map(loops.map((l) => [l.loopId, l]));
  const listed = seeds.map((id) => byId.get(id));
  if (listed.some((l) => l === undefined) && seeds.length === q.limit) return all();
  return listed.filter((l): l is LoopSummary => l !== undefined).map((loop) => ({ loop, level: 0 }));
}

/**
 * A set of loops holding every loop of the trees of `seeds` (every loop
 * linked to one of them, through parents and children, as the tree is
 * stored now), or undefined when it cannot be bounded. Why it holds them:
 * - loop_roots is the tree as the last finished rollup sweep folded it,
 *   from every row stored up to its newest ingest stamp less
 *   AGENTLEDGER_ROLLUP_LATE_MS (the margin the sweeps take for the same
 *   reason); a loop's link to its parent can only have changed since
 *   through a row stored since, of the child (its LoopStarted) or of the
 *   parent (a SubAgentSpawned, a ForkedFrom that makes it a replay);
 * - so every link of the tree now is either one loop_roots holds (a loop's
 *   parent_loop_id), or has both ends among the loops stored since and the
 *   parents and children their rows name;
 * - the walk below follows both: loop_roots' parents, children and roots,
 *   and the links of the loops stored since, until nothing new is found.
 * One case escapes that: a loop stored since whose LoopStarted naming a
 *   parent was replaced by one naming none takes its parent from a
 *   SubAgentSpawned that may be stored long ago, by a loop neither side
 *   names; listLoops() finds it (a parent then, none among the candidates
 *   now) and reads every loop.
 * The fold of these loops' exact rows (a summary, or FINAL) is then the fold of every
 * loop, for each loop of those trees.
 */
async function treeCandidates(
  ch: ClickHouseClient,
  seeds: readonly string[],
  since: Since,
  options: TreeReadOptions,
): Promise<{ loops: string[]; parentsBefore: Map<string, string> } | undefined> {
  const { changed } = since;
  const found = new Set<string>(seeds);
  for (const c of changed) {
    found.add(c.loop_id);
    for (const p of c.parents) found.add(p);
    for (const k of c.children) found.add(k);
  }
  // Each changed loop's parent as loop_roots holds it ('' when it holds none).
  const parentsBefore = new Map(changed.map((c) => [c.loop_id, '']));
  let frontier = [...found];
  while (frontier.length > 0) {
    const next: string[] = [];
    for (const chunk of inListChunks(frontier, 60_000)) {
      for (const r of await queryRows<{ loop_id: string; root_loop_id: string; parent_loop_id: string }>(ch, 'loop_roots_near', { loop_ids: chunk })) {
        if (parentsBefore.has(r.loop_id) && r.parent_loop_id !== '') parentsBefore.set(r.loop_id, r.parent_loop_id);
        for (const id of [r.loop_id, r.root_loop_id, r.parent_loop_id]) {
          if (id === '' || found.has(id)) continue;
          found.add(id);
          next.push(id);
        }
      }
    }
    if (found.size > options.maxLoops) return undefined;
    frontier = next;
  }
  return { loops: [...found].sort(byBytes), parentsBefore };
}
