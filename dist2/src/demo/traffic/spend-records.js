/**
 * The built loops as Kafka records in topic order: each loop hash-chained
 * (envelope.ts), the tamper and the second version planted, each loop's
 * records given an arrival time, child-first trees held back, redeliveries
 * added, and everything merged by arrival. Per-loop order is kept, as Kafka
 * keeps it per key.
 */
import { envelopeJson, linkHash } from './envelope.js';
import { canonical } from './go-json.js';
import { int, pick } from './prng.js';
import { formatRfc3339Nano } from './time.js';
const MS = 1000000n;
/** Inserts a record into a loop's list after `from`, where its arrival keeps the list in arrival order. */
function insertLater(list, from, r) {
    let at = from + 1;
    while (at < list.length && list[at].arrivalNs <= r.arrivalNs)
        at++;
    list.splice(at, 0, r);
}
/** A loop's honest chain (with its tamper and second version in place), arriving when each envelope was written. */
function chainOf(b) {
    const loopId = b.plan.loopId;
    const list = [];
    // A fork's replays are written when the fork is made: they arrive with its ForkedFrom.
    const forkedAt = b.events.find((e) => e.kind === 'ForkedFrom')?.timeNs ?? 0n;
    let prev = Buffer.alloc(32);
    b.events.forEach((e, i) => {
        const seq = i + 1;
        const timeText = formatRfc3339Nano(e.timeNs);
        const payload = Buffer.from(canonical(e.body), 'utf8');
        const hash = linkHash(prev, loopId, seq, timeText, e.kind, payload);
        const arrivalNs = e.timeNs > forkedAt ? e.timeNs : forkedAt;
        if (e.tampered) {
            // The payload rewritten after hashing: the carried hash is the honest one's.
            const other = Buffer.from(canonical(e.tampered.body), 'utf8');
            list.push({ arrivalNs, value: Buffer.from(envelopeJson(loopId, seq, timeText, e.kind, other, hash), 'utf8'), written: { loopId, seq, timeText, kind: e.kind, role: 'tampered', fact: e.tampered.fact } });
        }
        else {
            list.push({ arrivalNs, value: Buffer.from(envelopeJson(loopId, seq, timeText, e.kind, payload, hash), 'utf8'), written: { loopId, seq, timeText, kind: e.kind, role: 'chain', fact: e.fact } });
        }
        if (e.second) {
            // Chained honestly from the same predecessor: a second version of seq, not a broken link.
            const other = Buffer.from(canonical(e.second.body), 'utf8');
            const otherHash = linkHash(prev, loopId, seq, timeText, e.kind, other);
            list.push({ arrivalNs, value: Buffer.from(envelopeJson(loopId, seq, timeText, e.kind, other, otherHash), 'utf8'), written: { loopId, seq, timeText, kind: e.kind, role: 'second', fact: e.second.fact } });
        }
        prev = hash;
    });
    return list;
}
/**
 * Holds a child-first tree back: each loop (deepest first) arrives 1 ms after
 * the last record of its last-arriving sub-agent, so every child's whole loop
 * is in the topic before its parent's first envelope.
 */
function holdBack(plan, lists, root) {
    const childrenOf = (l) => plan.loops.filter((c) => c.parent === l).map((c) => c.index);
    const visit = (l) => {
        const kids = childrenOf(l);
        kids.forEach(visit);
        if (kids.length === 0)
            return;
        const lastChild = kids.map((k) => lists[k].at(-1).arrivalNs).reduce((a, b) => (a > b ? a : b));
        const shift = lastChild + MS - lists[l][0].arrivalNs;
        if (shift > 0n)
            for (const r of lists[l])
                r.arrivalNs += shift;
    };
    visit(root);
}
export function spendRecords(plan, built, rng) {
    const lists = built.map(chainOf);
    for (const r of plan.roots)
        if (plan.loops[r].childFirst)
            holdBack(plan, lists, r);
    // A second version arrives a little after the first: the verifier already holds a version of its seq.
    for (const list of lists) {
        const i = list.findIndex((r) => r.written.role === 'second');
        if (i < 0)
            continue;
        const [second] = list.splice(i, 1);
        second.arrivalNs = list[i - 1].arrivalNs + BigInt(int(rng, 1, 3_000)) * MS;
        insertLater(list, i - 1, second);
    }
    // Redeliveries: a counted ModelCalled (not a fork's replay), a ForkedFrom, a counted BudgetCharged,
    // then any honest envelope; soon after or minutes later.
    const honest = lists.flatMap((list, l) => list.map((r, i) => ({ l, i, r })).filter(({ r }) => r.written.role === 'chain'));
    const chosen = new Set();
    const notFork = (l) => plan.loops[l].fork === undefined;
    const tries = [
        (l, w) => notFork(l) && w.fact.kind === 'ModelCalled',
        (_, w) => w.fact.kind === 'ForkedFrom',
        (l, w) => notFork(l) && w.fact.kind === 'BudgetCharged' && w.fact.usdText !== '0',
    ];
    for (let n = 0; n < plan.redeliveries; n++) {
        const want = tries[n] ?? (() => true);
        const candidates = honest.filter(({ l, r }) => want(l, r.written) && !chosen.has(`${r.written.loopId}\n${r.written.seq}`));
        const pool = candidates.length > 0 ? candidates : honest.filter(({ r }) => !chosen.has(`${r.written.loopId}\n${r.written.seq}`));
        if (pool.length === 0)
            break;
        const { l, r } = pick(rng, pool);
        chosen.add(`${r.written.loopId}\n${r.written.seq}`);
        const delay = BigInt(rng() < 0.5 ? int(rng, 1, 2_000) : int(rng, 60_000, 600_000)) * MS;
        const list = lists[l];
        insertLater(list, list.indexOf(r), { arrivalNs: r.arrivalNs + delay, value: Buffer.from(r.value), written: { ...r.written, role: 'redelivery' } });
    }
    // One topic: by arrival, then loop, then position in the loop (which keeps each loop's order).
    const all = lists.flatMap((list, l) => list.map((r, pos) => ({ r, l, pos })));
    all.sort((a, b) => (a.r.arrivalNs !== b.r.arrivalNs ? (a.r.arrivalNs < b.r.arrivalNs ? -1 : 1) : a.l !== b.l ? a.l - b.l : a.pos - b.pos));
    return {
        records: all.map(({ r }) => ({ key: r.written.loopId, value: r.value })),
        written: all.map(({ r }) => r.written),
    };
}
//# sourceMappingURL=spend-records.js.map