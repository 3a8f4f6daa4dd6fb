import { WHALE } from './spend-plan.js';
const USD_TEXT = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
/**
 * A JSON number's text in USD -> integer picodollars, rounding half to even:
 * the text is mantissa × 10^exponent, so picodollars are mantissa ×
 * 10^(exponent - fraction digits + 12), divided exactly when that power is negative.
 */
export function usdTextToPicoExact(text) {
    const m = USD_TEXT.exec(text);
    if (!m)
        throw new RangeError(`${JSON.stringify(text)} is not a JSON number`);
    const fraction = m[3] ?? '';
    const mantissa = BigInt(`${m[2]}${fraction}`);
    const power = Number(m[4] ?? '0') - fraction.length + 12;
    let pico;
    if (power >= 0) {
        pico = mantissa * 10n ** BigInt(power);
    }
    else {
        const divisor = 10n ** BigInt(-power);
        const q = mantissa / divisor;
        const twice = 2n * (mantissa % divisor);
        pico = twice > divisor || (twice === divisor && q % 2n === 1n) ? q + 1n : q;
    }
    return m[1] === '-' ? -pico : pico;
}
const zero = () => ({ calls: 0, tokensIn: 0, tokensOut: 0, cost: 0n, budget: 0n, unverifiedCalls: 0, unverified: 0n });
function addTo(s, o) {
    s.calls += o.calls;
    s.tokensIn += o.tokensIn;
    s.tokensOut += o.tokensOut;
    s.cost += o.cost;
    s.budget += o.budget;
    s.unverifiedCalls += o.unverifiedCalls;
    s.unverified += o.unverified;
}
const get = (m, k) => {
    let s = m.get(k);
    if (!s)
        m.set(k, (s = zero()));
    return s;
};
function safe(n, what) {
    if (!Number.isSafeInteger(n))
        throw new RangeError(`${what} ${n} is beyond 2^53: raise the generator's limits with care`);
    return n;
}
const byLoopSeq = (a, b) => (a.loopId === b.loopId ? a.seq - b.seq : a.loopId < b.loopId ? -1 : 1);
const by = (key) => (a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
export function expectedSpend(plan, written) {
    // A fork's ForkedFrom.at_seq, wherever it arrives: the fold reads it before counting anything.
    const forkOf = new Map();
    for (const w of written)
        if (w.fact.kind === 'ForkedFrom')
            forkOf.set(w.loopId, { sourceLoopId: w.fact.sourceLoopId, atSeq: w.fact.atSeq });
    const started = new Map();
    const finished = new Map();
    const perLoop = new Map();
    const perModel = new Map();
    const perDay = new Map();
    const stored = new Set();
    const violations = [];
    for (const w of written) {
        // Rule: a redelivery is the envelope already written; it counts once, as that one.
        if (w.role === 'redelivery')
            continue;
        // A second version is evidence beside the stored (loop, seq), not another row of the chain.
        if (w.role !== 'second')
            stored.add(`${w.loopId}\n${w.seq}`);
        if (w.role === 'tampered')
            violations.push({ loopId: w.loopId, seq: w.seq, verdict: 'mismatch' });
        if (w.role === 'second')
            violations.push({ loopId: w.loopId, seq: w.seq, verdict: 'fork' });
        get(perLoop, w.loopId);
        // The loop's own place and outcome come from its own LoopStarted and LoopFinished, a fork's
        // replayed LoopStarted included (it is how a fork knows its parent and depth).
        if (w.fact.kind === 'LoopStarted')
            started.set(w.loopId, w.fact);
        if (w.fact.kind === 'LoopFinished')
            finished.set(w.loopId, w.fact);
        // Rule: a fork's events 1..at_seq replay its source's, whose spend they are: not counted in the fork.
        const fork = forkOf.get(w.loopId);
        if (fork && w.seq <= fork.atSeq)
            continue;
        // Rule: verified spend counts only the loop's own chain as written (role chain: its link verifies);
        // the tampered envelope (mismatch) and the second version (fork verdict) count apart, as unverified.
        const verified = w.role === 'chain';
        const day = w.timeText.slice(0, 10); // UTC date: every Time the generator writes ends in Z.
        const s = zero();
        if (w.fact.kind === 'ModelCalled') {
            const pico = usdTextToPicoExact(w.fact.costText);
            if (verified)
                Object.assign(s, { calls: 1, tokensIn: w.fact.tokensIn, tokensOut: w.fact.tokensOut, cost: pico });
            else
                Object.assign(s, { unverifiedCalls: 1, unverified: pico });
            addTo(get(perModel, `${w.fact.provider}\n${w.fact.model}`), s);
        }
        else if (w.fact.kind === 'BudgetCharged' && verified) {
            s.budget = usdTextToPicoExact(w.fact.usdText);
        }
        else {
            continue;
        }
        addTo(get(perLoop, w.loopId), s);
        addTo(get(perDay, day), s);
    }
    // The tree, from each loop's own LoopStarted: root = the top of its parent chain.
    const parentOf = (id) => started.get(id)?.parentId ?? '';
    const rootOf = (id) => {
        let cur = id;
        for (let p = parentOf(cur); p !== ''; p = parentOf(cur))
            cur = p;
        return cur;
    };
    // Rule: a subtree's cost is each loop's own verified model cost, every loop once: own cost is
    // added to the loop and each of its ancestors. A parent's child_spend is never added.
    const subtree = new Map();
    for (const [id, s] of perLoop) {
        for (let cur = id; cur !== ''; cur = parentOf(cur))
            subtree.set(cur, (subtree.get(cur) ?? 0n) + s.cost);
    }
    const perRoot = new Map();
    for (const [id, s] of perLoop) {
        const root = rootOf(id);
        const r = perRoot.get(root) ?? { ...zero(), loops: 0 };
        r.loops++;
        addTo(r, s);
        perRoot.set(root, r);
    }
    const loops = [...perLoop.entries()].map(([loopId, s]) => {
        const st = started.get(loopId);
        const fin = finished.get(loopId);
        return {
            loopId,
            parentLoopId: parentOf(loopId),
            rootLoopId: rootOf(loopId),
            depth: st?.depth ?? 0,
            name: st?.name ?? '',
            outcome: fin?.outcome ?? '',
            error: fin?.error ?? '',
            modelCalls: s.calls,
            inputTokens: safe(s.tokensIn, 'inputTokens'),
            outputTokens: safe(s.tokensOut, 'outputTokens'),
            modelCostPicoUsd: s.cost.toString(),
            budgetPicoUsd: s.budget.toString(),
            unverifiedModelCalls: s.unverifiedCalls,
            unverifiedModelCostPicoUsd: s.unverified.toString(),
            subtreeModelCostPicoUsd: (subtree.get(loopId) ?? 0n).toString(),
            forkedFrom: forkOf.get(loopId)?.sourceLoopId ?? '',
            forkedAtSeq: forkOf.get(loopId)?.atSeq ?? 0,
        };
    });
    const money = (s) => ({
        modelCalls: s.calls,
        inputTokens: safe(s.tokensIn, 'inputTokens'),
        outputTokens: safe(s.tokensOut, 'outputTokens'),
        modelCostPicoUsd: s.cost.toString(),
        budgetPicoUsd: s.budget.toString(),
        unverifiedModelCostPicoUsd: s.unverified.toString(),
    });
    const models = [...perModel.entries()].map(([key, s]) => {
        const [provider, model] = key.split('\n');
        return { provider, model, calls: s.calls, inputTokens: safe(s.tokensIn, 'inputTokens'), outputTokens: safe(s.tokensOut, 'outputTokens'), costPicoUsd: s.cost.toString(), unverifiedCostPicoUsd: s.unverified.toString() };
    });
    const roots = [...perRoot.entries()].map(([rootLoopId, s]) => ({ rootLoopId, name: started.get(rootLoopId)?.name ?? '', loops: s.loops, ...money(s) }));
    const days = [...perDay.entries()].map(([day, s]) => ({ day, ...money(s) }));
    const total = zero();
    for (const s of perLoop.values())
        addTo(total, s);
    const of = (role) => written.filter((w) => w.role === role).map(({ loopId, seq }) => ({ loopId, seq })).sort(byLoopSeq);
    const idOf = (i) => plan.loops[i].loopId;
    const parents = new Set(plan.loops.flatMap((l) => (l.parent === undefined ? [] : [l.parent])));
    return {
        loops: loops.sort(by((l) => l.loopId)),
        models: models.sort(by((m) => `${m.provider}\n${m.model}`)),
        roots: roots.sort(by((r) => r.rootLoopId)),
        days: days.sort(by((d) => d.day)),
        totals: money(total),
        records: written.length,
        envelopes: stored.size,
        violations: violations.sort(byLoopSeq),
        planted: {
            tampered: of('tampered'),
            secondVersions: of('second'),
            redeliveries: of('redelivery'),
            forks: [...forkOf.entries()].map(([loopId, f]) => ({ loopId, ...f })).sort(by((f) => f.loopId)),
            childFirstRoots: plan.roots.filter((r) => plan.loops[r].childFirst && parents.has(r)).map(idOf),
            parentFirstRoots: plan.roots.filter((r) => !plan.loops[r].childFirst && parents.has(r)).map(idOf),
            whale: { provider: WHALE.provider, model: WHALE.model },
            usdTexts: plan.usdTexts,
        },
    };
}
//# sourceMappingURL=spend-expected.js.map