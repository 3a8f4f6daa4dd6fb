/**
 * Each loop's place in the loop tree as the rollups read it (loop_roots,
 * migration 0013): the tree folded whole (account/loop-tree.ts) and the
 * loops whose place or name changed written under the recompute's version,
 * so the sweep knows whose rollup rows moved and must be recomputed.
 */
import { foldLoopTree, type LoopFacts, type TreePlace } from '../account/loop-tree.js';
import { queryRows } from './queries.js';
import type { RollupDeps } from './deps.js';

const rows = queryRows;

/** A loop's ancestors, its root first and its parent last (empty for a root), as the fold placed it. */
function ancestorsOf(loopId: string, places: ReadonlyMap<string, TreePlace>, spawnedBy: ReadonlyMap<string, string>): string[] {
  const root = places.get(loopId)?.rootLoopId ?? loopId;
  const line: string[] = [];
  const seen = new Set([loopId]);
  let cur = loopId;
  while (cur !== root) {
    const parent = places.get(cur)?.parentLoopId ?? spawnedBy.get(cur) ?? '';
    // A cycle closes where the fold stopped it: the root is on it.
    if (parent === '' || seen.has(parent)) break;
    seen.add(parent);
    line.push(parent);
    cur = parent;
  }
  return line.reverse();
}

/**
 * Folds the loop tree and writes to loop_roots, under `version`, the loops
 * whose place (parent, ancestors, root) or name differs from what it holds.
 * Returns the loops whose root or name changed: their rollup rows moved.
 */
export async function refreshRoots(deps: RollupDeps, version: bigint): Promise<string[]> {
  const { ch } = deps;
  const started = await rows<{ loop_id: string; started_parent: string; name: string }>(ch, 'loop_tree_links');
  const spawns = await rows<{ child: string; spawned_by: string }>(ch, 'loop_tree_spawns');
  const spawnedBy = new Map(spawns.map((s) => [s.child, s.spawned_by]));
  const names = new Map(started.map((s) => [s.loop_id, s.name]));
  const facts: LoopFacts[] = started.map((s) => ({ loopId: s.loop_id, startedParent: s.started_parent, startedDepth: undefined, modelCostPico: 0n }));
  for (const child of spawnedBy.keys()) {
    if (!names.has(child)) facts.push({ loopId: child, startedParent: '', startedDepth: undefined, modelCostPico: 0n });
  }
  const places = foldLoopTree(facts, spawnedBy);
  interface Held {
    readonly root: string;
    readonly name: string;
    readonly parent: string;
    readonly ancestors: string;
  }
  const held = new Map<string, Held>();
  for (const r of await rows<{ loop_id: string; root_loop_id: string; loop_name: string; parent_loop_id: string; ancestors: string[] }>(ch, 'loop_roots_current')) {
    held.set(r.loop_id, { root: r.root_loop_id, name: r.loop_name, parent: r.parent_loop_id, ancestors: JSON.stringify(r.ancestors) });
  }
  const changed: { loop_id: string; root_loop_id: string; loop_name: string; parent_loop_id: string; ancestors: string[]; version: string }[] = [];
  const moved: string[] = [];
  for (const [loopId, place] of places) {
    const name = names.get(loopId) ?? '';
    const ancestors = ancestorsOf(loopId, places, spawnedBy);
    // A loop loop_roots does not hold is read as a root of its own with no name.
    const before = held.get(loopId) ?? { root: loopId, name: '', parent: '', ancestors: '[]' };
    if (before.root !== place.rootLoopId || before.name !== name) moved.push(loopId);
    if (before.root !== place.rootLoopId || before.name !== name || before.parent !== place.parentLoopId || before.ancestors !== JSON.stringify(ancestors)) {
      changed.push({ loop_id: loopId, root_loop_id: place.rootLoopId, loop_name: name, parent_loop_id: place.parentLoopId, ancestors, version: version.toString() });
    }
  }
  for (let i = 0; i < changed.length; i += 50_000) {
    await ch.insert({ table: 'loop_roots', values: changed.slice(i, i + 50_000), format: 'JSONEachRow' });
  }
  return moved;
}
