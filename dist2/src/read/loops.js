import { foldLoopTree, treeOrder } from '../account/loop-tree.js';
import { loopChildren, storedSummaries } from '../rollups/loop-summaries.js';
import { loopSpawnLinks, loopSpawnLinksOf, runtimeLoopRows, runtimeLoopRowsOf } from '../sink/clickhouse/loop-reads.js';
import { byBytes } from '../sink/clickhouse/read-values.js';
import { inListChunks, queryRows } from '../sink/clickhouse/sql.js';
const exact = (n) => (n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString());
/** The stored loops with their place in the tree, by loop id. */
export function summarizeLoops(rows, spawnedBy) {
    const places = foldLoopTree(rows, spawnedBy);
    return rows.map((r) => {
        const place = places.get(r.loopId);
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
export async function readLoops(ch) {
    return summarizeLoops(await runtimeLoopRows(ch), await loopSpawnLinks(ch));
}
/** The loops of one tree for the indented view: from the root, or, while it is not stored, from its children in turn. */
function loopsOfTree(loops, root) {
    const top = loops.find((l) => l.loopId === root);
    return treeOrder(loops, root, top ? [top] : loops.filter((l) => l.loopId !== root && l.parentLoopId === root));
}
/** What `loops` prints of every loop (readLoops()), in its order. */
export function selectLoops(loops, q) {
    const prefix = q.idPrefix;
    if (prefix !== undefined)
        loops = loops.filter((l) => l.loopId.startsWith(prefix));
    const root = q.root;
    let rows = root === undefined ? loops.map((loop) => ({ loop, level: 0 })) : loopsOfTree(loops.filter((l) => l.rootLoopId === root), root);
    if (q.limit !== undefined)
        rows = rows.slice(0, q.limit);
    return rows;
}
/** `loops` from a read of every loop: the reference, and the answer when no rollup sweep has finished. */
export async function listLoopsFromAll(ch, q) {
    return selectLoops(await readLoops(ch), q);
}
/**
 * The loops stored since the last finished sweep's newest ingest stamp, and
 * since the last summary step's, less the margin, whichever is earlier (a
 * loop more read live, or one more candidate, costs time, never exactness);
 * undefined when neither has finished or they are too many.
 */
async function storedSince(ch, options) {
    const [m] = await queryRows(ch, 'loops_marks');
    const margin = Math.ceil(options.lateMs / 1000);
    const swept = Number(m?.sweeps ?? 0) > 0;
    const summarized = Number(m?.summary_marks ?? 0) > 0;
    const marks = [...(swept ? [Number(m?.swept_through ?? 0)] : []), ...(summarized ? [Number(m?.summarized_through ?? 0)] : [])];
    if (marks.length === 0)
        return undefined;
    const since = Math.max(0, Math.min(...marks) - margin);
    const changed = await queryRows(ch, 'loops_changed_since', { since });
    if (changed.length > options.maxLoops)
        return undefined;
    return { swept, summarized, changed, changedIds: new Set(changed.map((c) => c.loop_id)) };
}
/** The rows and spawn links of these loops (or every loop): from loop_summaries for those not changed since, live for the others. */
async function rowsOf(ch, since, loops) {
    if (!since.summarized) {
        if (loops === 'all')
            throw new Error('rowsOf: every loop live is readLoops()');
        const [rows, spawnedBy] = await Promise.all([runtimeLoopRowsOf(ch, loops), loopSpawnLinksOf(ch, loops)]);
        return { rows, spawnedBy, summarized: 0, live: rows.length };
    }
    const live = loops === 'all' ? [...since.changedIds] : loops.filter((id) => since.changedIds.has(id));
    const kept = loops === 'all' ? 'all' : loops.filter((id) => !since.changedIds.has(id));
    const [stored, liveRows, liveChildren] = await Promise.all([
        kept === 'all' || kept.length > 0 ? storedSummaries(ch, kept) : Promise.resolve([]),
        live.length > 0 ? runtimeLoopRowsOf(ch, live) : Promise.resolve([]),
        live.length > 0 ? loopChildren(ch, live) : Promise.resolve(new Map()),
    ]);
    const summaries = stored.filter((s) => !since.changedIds.has(s.row.loopId));
    const rows = [...summaries.map((s) => s.row), ...liveRows].sort((a, b) => byBytes(a.loopId, b.loopId));
    // When two loops' SubAgentSpawned name one child, either counts (any() in the full read).
    const spawnedBy = new Map();
    for (const [spawner, children] of [...summaries.map((s) => [s.row.loopId, s.children]), ...liveChildren]) {
        for (const child of children)
            if (!spawnedBy.has(child))
                spawnedBy.set(child, spawner);
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
export async function listLoops(ch, q, options) {
    if (q.limit === 0)
        return [];
    const since = await storedSince(ch, options);
    const all = async () => {
        if (since?.summarized) {
            const every = await rowsOf(ch, since, 'all');
            options.onRead?.('summaries', every.rows.length, { summarized: every.summarized, live: every.live });
            return selectLoops(summarizeLoops(every.rows, every.spawnedBy), q);
        }
        options.onRead?.('all');
        return listLoopsFromAll(ch, q);
    };
    if (since === undefined || !since.swept)
        return all();
    let seeds;
    if (q.root !== undefined)
        seeds = [q.root];
    else if (q.limit !== undefined && q.limit <= options.maxLoops) {
        seeds = (await queryRows(ch, 'loops_first', { prefix: q.idPrefix ?? '', n: q.limit })).map((r) => r.loop_id);
        if (seeds.length === 0)
            return [];
    }
    else
        return all();
    const trees = await treeCandidates(ch, seeds, since, options);
    if (trees === undefined)
        return all();
    const { rows, spawnedBy, summarized, live } = await rowsOf(ch, since, trees.loops);
    // A loop stored since the sweep that had a parent then and has none now
    // may take it from a SubAgentSpawned stored long ago, by a loop no
    // candidate names (its LoopStarted naming one replaced by one naming
    // none): the candidates may miss that parent's tree.
    const startedParent = new Map(rows.map((r) => [r.loopId, r.startedParent]));
    for (const [loopId, before] of trees.parentsBefore) {
        if (before !== '' && (startedParent.get(loopId) || spawnedBy.get(loopId) || '') === '')
            return all();
    }
    options.onRead?.('trees', trees.loops.length, { summarized, live });
    const loops = summarizeLoops(rows, spawnedBy);
    if (q.root !== undefined)
        return selectLoops(loops, q);
    // The first ids without FINAL are a superset of the stored loops' first ids:
    // when each has its exact row, they are the first loops; else read all.
    const byId = new Map(loops.map((l) => [l.loopId, l]));
    const listed = seeds.map((id) => byId.get(id));
    if (listed.some((l) => l === undefined) && seeds.length === q.limit)
        return all();
    return listed.filter((l) => l !== undefined).map((loop) => ({ loop, level: 0 }));
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
async function treeCandidates(ch, seeds, since, options) {
    const { changed } = since;
    const found = new Set(seeds);
    for (const c of changed) {
        found.add(c.loop_id);
        for (const p of c.parents)
            found.add(p);
        for (const k of c.children)
            found.add(k);
    }
    // Each changed loop's parent as loop_roots holds it ('' when it holds none).
    const parentsBefore = new Map(changed.map((c) => [c.loop_id, '']));
    let frontier = [...found];
    while (frontier.length > 0) {
        const next = [];
        for (const chunk of inListChunks(frontier, 60_000)) {
            for (const r of await queryRows(ch, 'loop_roots_near', { loop_ids: chunk })) {
                if (parentsBefore.has(r.loop_id) && r.parent_loop_id !== '')
                    parentsBefore.set(r.loop_id, r.parent_loop_id);
                for (const id of [r.loop_id, r.root_loop_id, r.parent_loop_id]) {
                    if (id === '' || found.has(id))
                        continue;
                    found.add(id);
                    next.push(id);
                }
            }
        }
        if (found.size > options.maxLoops)
            return undefined;
        frontier = next;
    }
    return { loops: [...found].sort(byBytes), parentsBefore };
}
//# sourceMappingURL=loops.js.map