/**
 * The plan of spend traffic, drawn from the seed before any envelope is made:
 * the loop trees (roots, sub-agents, grandchildren) and their outcomes, each
 * iteration's model call and tool call, the forks, the whale calls, the USD
 * texts placed on purpose, and where the tamper and the second version go.
 */
import { createHash } from 'node:crypto';
import { chance, int, mulberry32, pick } from './prng.js';
import { parseUtcNanos } from './time.js';
export const MODELS = [
    { provider: 'anthropic', model: 'claude-sonnet-4-5', inUsd: 3e-6, outUsd: 15e-6 },
    { provider: 'anthropic', model: 'claude-haiku-4-5', inUsd: 1e-6, outUsd: 5e-6 },
    { provider: 'openai', model: 'gpt-4.1', inUsd: 2e-6, outUsd: 8e-6 },
    { provider: 'openai', model: 'gpt-4.1-mini', inUsd: 4e-7, outUsd: 1.6e-6 },
    { provider: 'google', model: 'gemini-2.5-flash', inUsd: 3e-7, outUsd: 2.5e-6 },
    // Runs locally: cost_usd is 0 (written `0`), and BudgetCharged omits usd (omitempty).
    { provider: 'ollama', model: 'llama3.1:8b', inUsd: 0, outUsd: 0 },
];
/** One call of it costs $8M..$9.2M (below Int64 picodollars); three of them pass 2^64 picodollars. */
export const WHALE = { provider: 'whalecorp', model: 'leviathan-1' };
const WHALE_MIN_USD = 8_000_000;
const WHALE_MAX_USD = 9_200_000;
/**
 * Costs placed on chosen calls: exponent forms Go writes below 1e-6, exact
 * halves of a picodollar (2.5e-12 -> 2, 1.5e-12 -> 2, 3.5e-12 -> 4, 5e-13 -> 0
 * half to even), 17 significant digits, and a float sum's tail.
 */
export const SPECIAL_USD = [1e-7, 2.5e-12, 1.5e-12, 3.5e-12, 5e-13, 12345.678901234567, 0.1 + 0.2, 9.5e-7];
const TASKS = ['fix-flaky-tests', 'triage-issue', 'refactor-module', 'write-release-notes', 'review-pull-request', 'upgrade-dependencies'];
const DEFINITIONS = ['code-search', 'test-runner', 'doc-writer', 'reviewer', 'planner', 'web-research'];
const TOOLS = ['bash', 'read_file', 'write_file', 'grep', 'http_get'];
const DETECTORS = ['oscillation', 'zero-progress', 'depth'];
/** Sub-agent outcomes in turn: every kind of failure shows up in a small run. */
const CHILD_OUTCOMES = ['Completed', 'Failed', 'Completed', 'Stuck', 'Completed', 'BudgetExceeded', 'Completed', 'Completed'];
const ERRORS = {
    Completed: '',
    Failed: 'tool bash exited 1 three times in a row',
    Stuck: 'no progress in 3 iterations (zero-progress)',
    BudgetExceeded: 'budget of $0.50 exceeded',
};
const MS = 1000000n;
const S = 1000000000n;
function wholeAtLeast(name, v, min) {
    if (!Number.isSafeInteger(v) || v < min)
        throw new RangeError(`${name} must be a whole number >= ${min}, got ${v}`);
    return v;
}
/** A model call, priced as the runtime prices it: tokens × USD per token in float64. */
function drawCall(rng, primary) {
    const m = chance(rng, 0.7) ? primary : pick(rng, MODELS);
    const tokensIn = int(rng, 300, 40_000);
    const tokensOut = int(rng, 10, 4_000);
    return { provider: m.provider, model: m.model, tokensIn, tokensOut, costUsd: tokensIn * m.inUsd + tokensOut * m.outUsd, durationMs: int(rng, 300, 30_000) };
}
function drawIteration(rng, primary) {
    const tool = chance(rng, 0.7) ? { name: pick(rng, TOOLS), isError: chance(rng, 0.2), ms: int(rng, 1, 3_000) } : undefined;
    const warning = chance(rng, 0.15) ? { detector: pick(rng, DETECTORS), count: int(rng, 1, 4) } : undefined;
    return { call: drawCall(rng, primary), tool, warning, spawn: [] };
}
export function makeSpendPlan(opts) {
    const roots = wholeAtLeast('roots', opts.roots, 1);
    const maxChildren = wholeAtLeast('maxChildren', opts.maxChildren ?? 3, 0);
    const maxDepth = wholeAtLeast('maxDepth', opts.maxDepth ?? 2, 0);
    const [minIt, maxIt] = opts.iterations ?? [1, 3];
    wholeAtLeast('iterations[0]', minIt, 1);
    if (wholeAtLeast('iterations[1]', maxIt, 1) < minIt)
        throw new RangeError(`iterations must be [min, max] with 1 <= min <= max, got [${minIt}, ${maxIt}]`);
    const forks = wholeAtLeast('forks', opts.forks ?? Math.max(2, Math.ceil(roots / 3)), 0);
    const redeliveries = wholeAtLeast('redeliveries', opts.redeliveries ?? Math.max(4, Math.ceil(roots / 2)), 0);
    const whaleCalls = wholeAtLeast('whaleCalls', opts.whaleCalls ?? 3, 0);
    if (whaleCalls > 0 && whaleCalls < 3)
        throw new RangeError(`whaleCalls must be 0 or >= 3 (three pass 2^64 picodollars), got ${whaleCalls}`);
    const rng = mulberry32(opts.seed);
    const prefix = opts.idPrefix ?? `spend-s${opts.seed}`;
    const start = parseUtcNanos(opts.startTime ?? '2026-11-30T23:57:00Z');
    const used = new Set();
    const newId = () => {
        for (;;) {
            const id = `${prefix}-${int(rng, 0, 0xffffffff).toString(16).padStart(8, '0')}`;
            if (!used.has(id)) {
                used.add(id);
                return id;
            }
        }
    };
    const seedOf = () => (BigInt(int(rng, 0, 0x3fffffff)) << 32n) | BigInt(int(rng, 0, 0xffffffff));
    const hex = (s) => createHash('sha256').update(s).digest('hex');
    const loops = [];
    let childCount = 0;
    /** Adds a loop and, depth-first, its sub-agents. */
    const addLoop = (parent, depth, childFirst, startNs, name, rootOrdinal, forceChild) => {
        const index = loops.length;
        const primary = pick(rng, MODELS.slice(0, 5));
        const iterations = Array.from({ length: int(rng, minIt, maxIt) }, () => drawIteration(rng, primary));
        const outcome = depth === 0 ? (rootOrdinal % 5 === 4 ? 'Failed' : 'Completed') : CHILD_OUTCOMES[childCount++ % CHILD_OUTCOMES.length];
        loops.push({
            index,
            loopId: newId(),
            parent,
            depth,
            name,
            seed: seedOf(),
            configHash: hex(`config ${name} ${primary.model}`),
            iterations,
            outcome: { kind: outcome, error: ERRORS[outcome] ?? '' },
            finished: true,
            childFirst,
            startNs,
        });
        if (depth >= maxDepth || maxChildren === 0)
            return index;
        // Roots always have sub-agents, deeper loops now and then (and the first root's first child always: a grandchild).
        const children = depth === 0 ? int(rng, 1, maxChildren) : forceChild ? 1 : chance(rng, 0.5) ? int(rng, 1, Math.max(1, maxChildren - 1)) : 0;
        for (let c = 0; c < children; c++) {
            const child = addLoop(index, depth + 1, childFirst, 0n, pick(rng, DEFINITIONS), rootOrdinal, depth === 0 && rootOrdinal === 0 && c === 0);
            pick(rng, iterations).spawn.push(child);
        }
        return index;
    };
    const rootIndexes = [];
    for (let r = 0; r < roots; r++) {
        // Roots 40-80 s apart: trees overlap in time, and from the default start the traffic crosses midnight.
        const startNs = start + BigInt(r) * 40n * S + BigInt(int(rng, 0, 40_000)) * MS;
        rootIndexes.push(addLoop(undefined, 0, r % 2 === 1, startNs, pick(rng, TASKS), r, false));
    }
    const treeLoops = loops.length;
    // Forks, alternately of a root and of a sub-agent; the second fork is left running.
    const subAgents = loops.filter((l) => l.depth > 0).map((l) => l.index);
    const forkIndexes = [];
    for (let f = 0; f < forks; f++) {
        const source = f % 2 === 1 && subAgents.length > 0 ? pick(rng, subAgents) : pick(rng, rootIndexes);
        const src = loops[source];
        const primary = pick(rng, MODELS.slice(0, 5));
        const index = loops.length;
        loops.push({
            index,
            loopId: newId(),
            parent: undefined,
            depth: src.depth,
            name: src.name,
            seed: src.seed,
            configHash: src.configHash,
            iterations: Array.from({ length: int(rng, 1, 2) }, () => drawIteration(rng, primary)),
            outcome: { kind: 'Completed', error: '' },
            finished: f !== 1,
            childFirst: false,
            startNs: 0n,
            fork: { source, delayNs: BigInt(int(rng, 1_000, 1_200_000)) * MS },
        });
        forkIndexes.push(index);
    }
    // Call slots that carry no special role yet; each role takes distinct slots.
    const taken = new Set();
    const slot = (l, i) => `${l}/${i}`;
    const freeSlots = (candidates) => candidates.flatMap((l) => loops[l].iterations.map((_, i) => [l, i]).filter(([, i]) => !taken.has(slot(l, i))));
    const tree = Array.from({ length: treeLoops }, (_, i) => i);
    // Whale calls, one per loop (so no single event, total_spend or child_spend passes Int64 picodollars):
    // the first root, its first child, then the next roots and their first children.
    const whaleLoops = rootIndexes.flatMap((r) => [r, ...loops.filter((l) => l.parent === r).slice(0, 1).map((l) => l.index)]);
    if (whaleCalls > whaleLoops.length)
        throw new RangeError(`whaleCalls ${whaleCalls} needs as many roots and first sub-agents; there are ${whaleLoops.length}`);
    for (const l of whaleLoops.slice(0, whaleCalls)) {
        const i = int(rng, 0, loops[l].iterations.length - 1);
        const costUsd = WHALE_MIN_USD + rng() * (WHALE_MAX_USD - WHALE_MIN_USD);
        loops[l].iterations[i].call = { ...WHALE, tokensIn: int(rng, 1_500_000, 3_000_000), tokensOut: int(rng, 200_000, 600_000), costUsd, durationMs: int(rng, 60_000, 300_000) };
        taken.add(slot(l, i));
    }
    // The tamper: a sub-agent of a parent-first tree, not a fork's source; the second version: a loop of a child-first tree.
    const sources = new Set(forkIndexes.map((f) => loops[f].fork.source));
    const plain = tree.filter((l) => !sources.has(l));
    const plant = (prefer, set) => {
        const free = freeSlots(plain.filter((l) => prefer(loops[l])));
        const any = free.length > 0 ? free : freeSlots(plain);
        if (any.length === 0)
            throw new RangeError('no model call left to plant a tamper or second version on: raise roots or iterations');
        const [l, i] = pick(rng, any);
        set(loops[l].iterations[i]);
        taken.add(slot(l, i));
    };
    if (opts.tamper ?? true)
        plant((l) => l.depth > 0 && !l.childFirst, (it) => (it.tamperedCostUsd = it.call.costUsd * 1000 + 0.01));
    if (opts.secondVersion ?? true)
        plant((l) => l.childFirst, (it) => (it.secondCall = { ...it.call, tokensOut: it.call.tokensOut + 17, costUsd: it.call.costUsd / 2 + 0.001 }));
    const usdTexts = [];
    for (const costUsd of SPECIAL_USD) {
        const free = freeSlots(tree);
        if (free.length === 0)
            break;
        const [l, i] = pick(rng, free);
        const it = loops[l].iterations[i];
        it.call = { ...it.call, costUsd, tokensIn: costUsd < 1e-6 ? 0 : it.call.tokensIn };
        taken.add(slot(l, i));
        usdTexts.push(String(costUsd));
    }
    return { loops, roots: rootIndexes, forks: forkIndexes, redeliveries, usdTexts };
}
//# sourceMappingURL=spend-plan.js.map