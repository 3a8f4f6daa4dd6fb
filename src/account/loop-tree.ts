/**
 * The loop tree of the loop runtime, folded from what each loop's envelopes
 * say (pure). A loop's parent comes from its own LoopStarted{parent_id} or,
 * whichever was stored first, from its parent's SubAgentSpawned{child_loop_id};
 * its root is its highest known ancestor, so a grandchild ingested before its
 * parent resolves to the true root once the chain up to it is stored. Depth
 * is LoopStarted's (a fork's comes from its own replayed LoopStarted), else
 * the steps to the root.
 *
 * Money: a subtree's model cost is each loop's own verified model cost, every
 * loop counted once. A parent's SubAgentCompleted.child_spend is the same
 * money seen from the parent's ledger and is never added.
 */

/** What the tree needs of one loop (rollups/loop-reads.ts RuntimeLoopRow conforms). */
export interface LoopFacts {
  readonly loopId: string;
  /** The parent its LoopStarted names ('' for a root or none stored). */
  readonly startedParent: string;
  /** LoopStarted's depth; undefined when no LoopStarted is stored. */
  readonly startedDepth: bigint | undefined;
  /** Its own counted (verified, not replayed) model cost, picodollars. */
  readonly modelCostPico: bigint;
}

export interface TreePlace {
  /** '' for a root. */
  readonly parentLoopId: string;
  readonly rootLoopId: string;
  readonly depth: bigint;
  /** Its own model cost plus every descendant's, each loop once. */
  readonly subtreeModelCostPico: bigint;
}

/**
 * Parent, root, depth and subtree cost of every loop in `loops`. `spawnedBy`
 * maps a child loop id to the loop whose SubAgentSpawned names it. A cycle
 * (hostile or broken input) stops the walk where it closes: every loop still
 * gets a root, and no cost is counted twice.
 */
export function foldLoopTree(loops: readonly LoopFacts[], spawnedBy: ReadonlyMap<string, string>): Map<string, TreePlace> {
  const byId = new Map(loops.map((l) => [l.loopId, l]));
  const parentOf = (id: string): string => {
    const started = byId.get(id)?.startedParent ?? '';
    return started !== '' ? started : (spawnedBy.get(id) ?? '');
  };

  // Roots and steps to them, memoized along each walk.
  const rootOf = new Map<string, { root: string; steps: bigint }>();
  const resolve = (id: string): { root: string; steps: bigint } => {
    const path: string[] = [];
    const onPath = new Set<string>();
    let cur = id;
    let found: { root: string; steps: bigint } | undefined;
    for (;;) {
      const known = rootOf.get(cur);
      if (known) {
        found = known;
        break;
      }
      path.push(cur);
      onPath.add(cur);
      const parent = parentOf(cur);
      if (parent === '' || onPath.has(parent)) {
        found = { root: cur, steps: 0n };
        rootOf.set(cur, found);
        path.pop();
        break;
      }
      cur = parent;
    }
    // Down the path: each one step further from the root than the one above it.
    let steps = found.steps;
    for (let i = path.length - 1; i >= 0; i--) {
      steps += 1n;
      rootOf.set(path[i]!, { root: found.root, steps });
    }
    return rootOf.get(id)!;
  };

  // Children among the loops stored, for the subtree sums.
  const children = new Map<string, string[]>();
  for (const l of loops) {
    const parent = parentOf(l.loopId);
    if (parent === '' || !byId.has(parent)) continue;
    const list = children.get(parent);
    if (list) list.push(l.loopId);
    else children.set(parent, [l.loopId]);
  }
  const subtree = new Map<string, bigint>();
  const subtreeOf = (id: string): bigint => {
    const done = subtree.get(id);
    if (done !== undefined) return done;
    // Iterative post-order: a deep chain must not overflow the stack.
    const stack: { id: string; expanded: boolean }[] = [{ id, expanded: false }];
    const seen = new Set<string>();
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (subtree.has(top.id)) {
        stack.pop();
        continue;
      }
      if (!top.expanded) {
        top.expanded = true;
        seen.add(top.id);
        for (const c of children.get(top.id) ?? []) if (!seen.has(c) && !subtree.has(c)) stack.push({ id: c, expanded: false });
        continue;
      }
      stack.pop();
      let sum = byId.get(top.id)?.modelCostPico ?? 0n;
      for (const c of children.get(top.id) ?? []) sum += subtree.get(c) ?? 0n;
      subtree.set(top.id, sum);
    }
    return subtree.get(id)!;
  };

  const places = new Map<string, TreePlace>();
  for (const l of loops) {
    const { root, steps } = resolve(l.loopId);
    places.set(l.loopId, {
      parentLoopId: parentOf(l.loopId),
      rootLoopId: root,
      depth: l.startedDepth ?? steps,
      subtreeModelCostPico: subtreeOf(l.loopId),
    });
  }
  return places;
}

/** A loop as a walk of its tree needs it: its id and its parent's ('' for a root). */
export interface TreeLink {
  readonly loopId: string;
  readonly parentLoopId: string;
}

/** A loop in a walk, and its level below the start it was reached from (a start is 0). */
export interface TreeStep<T> {
  readonly loop: T;
  readonly level: number;
}

/**
 * The loops of one tree, parents before children (siblings by id): depth
 * first from each of `starts` in turn, each loop listed once, where it is
 * first reached (a cycle or a loop reached again is not walked twice). The
 * loop `root` is nobody's child, whatever parent it names. Used by the
 * indented `loops --root` and by the page's loop tree.
 */
export function treeOrder<T extends TreeLink>(loops: readonly T[], root: string, starts: readonly T[]): TreeStep<T>[] {
  const children = new Map<string, T[]>();
  for (const l of loops) {
    if (l.loopId === root) continue;
    const list = children.get(l.parentLoopId);
    if (list) list.push(l);
    else children.set(l.parentLoopId, [l]);
  }
  const out: TreeStep<T>[] = [];
  const seen = new Set<string>();
  for (const start of starts) {
    const stack: TreeStep<T>[] = [{ loop: start, level: 0 }];
    while (stack.length > 0) {
      const next = stack.pop()!;
      if (seen.has(next.loop.loopId)) continue;
      seen.add(next.loop.loopId);
      out.push(next);
      const kids = [...(children.get(next.loop.loopId) ?? [])].sort((a, b) => (a.loopId < b.loopId ? -1 : a.loopId > b.loopId ? 1 : 0));
      for (let i = kids.length - 1; i >= 0; i--) stack.push({ loop: kids[i]!, level: next.level + 1 });
    }
  }
  return out;
}
