/**
 * The spend traffic generator (issue 10, deliverable 8) against the project's
 * own decoder and verifier: every chain verifies but the planted tamper and
 * second version, and the generator's expected totals agree with a second,
 * simpler fold over the decoded records (src/decode's picodollars, the
 * verifier's verdicts), which is what makes them trustworthy for the
 * integration tests and the demo.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { decodeEnvelope } from '../../../src/decode/envelope.js';
import { generateSpendTraffic, usdTextToPicoExact } from '../../../src/demo/traffic/index.js';
import { INT64_MAX } from '../../../src/money/int64-text.js';
import { usdTextToPico } from '../../../src/money/picodollars.js';
import { isViolation } from '../../../src/verify/chain.js';
import { MemoryChains } from '../../../src/verify/memory-chains.js';
/** Decodes and verifies every record in topic order. */
function ingest(records) {
    const chains = new MemoryChains('binary');
    return records.map((r, index) => {
        const d = decodeEnvelope(r.value);
        assert.ok(d.ok, `record ${index} is malformed: ${d.ok ? '' : d.reason}`);
        assert.equal(r.key, d.value.loopId, 'the record key is the LoopID');
        assert.ok(d.value.kindClass, `kind ${d.value.kind} is one the runtime writes`);
        return { index, env: d.value, verdict: chains.verify(d.value).verdict };
    });
}
const body = (e, kind) => (e.body?.kind === kind ? e.body : undefined);
/**
 * The second fold, written apart from the generator's: verdicts from the
 * verifier (ok, gap and time_regression verified; mismatch, fork and
 * regression unverified; duplicates dropped), money from the decoder's
 * picodollars, a fork's seq <= at_seq skipped, the tree from LoopStarted.
 */
function refold(seen) {
    const kept = seen.filter((s) => s.verdict !== 'duplicate');
    const atSeq = new Map();
    const sourceOf = new Map();
    for (const { env } of kept) {
        const f = body(env, 'ForkedFrom');
        if (f)
            atSeq.set(env.loopId, Number(f.at_seq));
        if (f)
            sourceOf.set(env.loopId, f.source_loop_id);
    }
    const acc = () => ({ calls: 0, tin: 0, tout: 0, cost: 0n, budget: 0n, ucalls: 0, ucost: 0n });
    const loops = new Map();
    const models = new Map();
    const days = new Map();
    const at = (m, k, make) => m.get(k) ?? (m.set(k, make()), m.get(k));
    for (const { env, verdict } of kept) {
        const loop = at(loops, env.loopId, () => ({ ...acc(), parent: '', depth: 0, name: '', outcome: '', error: '' }));
        const started = body(env, 'LoopStarted');
        if (started)
            Object.assign(loop, { parent: started.parent_id, depth: Number(started.depth), name: started.name });
        const finished = body(env, 'LoopFinished');
        if (finished)
            Object.assign(loop, { outcome: finished.outcome_kind, error: finished.error });
        if (env.seq <= (atSeq.get(env.loopId) ?? 0))
            continue;
        const verified = verdict === 'ok' || verdict === 'gap' || verdict === 'time_regression';
        const day = new Date(env.time.seconds * 1000).toISOString().slice(0, 10);
        const targets = (m) => m?.kind === 'ModelCalled' ? [loop, at(models, `${m.provider}\n${m.model}`, acc), at(days, day, acc)] : [loop, at(days, day, acc)];
        const model = body(env, 'ModelCalled');
        if (model) {
            for (const a of targets(model)) {
                if (verified) {
                    a.calls++;
                    a.tin += Number(model.usage.in);
                    a.tout += Number(model.usage.out);
                    a.cost += model.usage.cost_usd.pico;
                }
                else {
                    a.ucalls++;
                    a.ucost += model.usage.cost_usd.pico;
                }
            }
        }
        const charge = body(env, 'BudgetCharged');
        if (charge && verified)
            for (const a of targets(charge))
                a.budget += charge.usd.pico;
    }
    const rootOf = (id) => (loops.get(id).parent === '' ? id : rootOf(loops.get(id).parent));
    const isUnder = (id, ancestor) => id === ancestor || (loops.get(id).parent !== '' && isUnder(loops.get(id).parent, ancestor));
    const ids = [...loops.keys()].sort();
    const sums = (a) => ({
        modelCalls: a.calls,
        inputTokens: a.tin,
        outputTokens: a.tout,
        modelCostPicoUsd: String(a.cost),
        budgetPicoUsd: String(a.budget),
        unverifiedModelCostPicoUsd: String(a.ucost),
    });
    const total = (list) => list.reduce((t, a) => ({ calls: t.calls + a.calls, tin: t.tin + a.tin, tout: t.tout + a.tout, cost: t.cost + a.cost, budget: t.budget + a.budget, ucalls: t.ucalls + a.ucalls, ucost: t.ucost + a.ucost }), acc());
    const rootIds = [...new Set(ids.map(rootOf))].sort();
    return {
        loops: ids.map((id) => {
            const l = loops.get(id);
            return {
                loopId: id,
                parentLoopId: l.parent,
                rootLoopId: rootOf(id),
                depth: l.depth,
                name: l.name,
                outcome: l.outcome,
                error: l.error,
                modelCalls: l.calls,
                inputTokens: l.tin,
                outputTokens: l.tout,
                modelCostPicoUsd: String(l.cost),
                budgetPicoUsd: String(l.budget),
                unverifiedModelCalls: l.ucalls,
                unverifiedModelCostPicoUsd: String(l.ucost),
                subtreeModelCostPicoUsd: String(ids.filter((d) => isUnder(d, id)).reduce((s, d) => s + loops.get(d).cost, 0n)),
                forkedFrom: sourceOf.get(id) ?? '',
                forkedAtSeq: atSeq.get(id) ?? 0,
            };
        }),
        models: [...models.keys()].sort().map((k) => {
            const [provider, model] = k.split('\n');
            const a = models.get(k);
            return { provider, model, calls: a.calls, inputTokens: a.tin, outputTokens: a.tout, costPicoUsd: String(a.cost), unverifiedCostPicoUsd: String(a.ucost) };
        }),
        roots: rootIds.map((r) => {
            const members = ids.filter((id) => rootOf(id) === r);
            return { rootLoopId: r, name: loops.get(r).name, loops: members.length, ...sums(total(members.map((id) => loops.get(id)))) };
        }),
        days: [...days.keys()].sort().map((day) => ({ day, ...sums(days.get(day)) })),
        totals: sums(total(ids.map((id) => loops.get(id)))),
    };
}
function check(opts) {
    const { records, expected } = generateSpendTraffic(opts);
    const seen = ingest(records);
    const { loops, models, roots, days, totals } = expected;
    assert.deepEqual(refold(seen), { loops, models, roots, days, totals });
    // Every chain verifies but what was planted; every redelivery is a duplicate.
    const violations = seen.filter((s) => isViolation(s.verdict)).map((s) => ({ loopId: s.env.loopId, seq: s.env.seq, verdict: s.verdict }));
    assert.deepEqual(violations.sort((a, b) => (a.loopId === b.loopId ? a.seq - b.seq : a.loopId < b.loopId ? -1 : 1)), expected.violations);
    const redelivered = seen.filter((s) => s.verdict === 'duplicate');
    assert.equal(redelivered.length, expected.planted.redeliveries.length);
    if (redelivered.length > 0) {
        const model = redelivered.find((s) => s.env.kind === 'ModelCalled');
        assert.ok(model, 'a model call is redelivered');
        assert.equal(expected.loops.find((l) => l.loopId === model.env.loopId).forkedFrom, '', 'in a loop where it counts');
    }
    assert.equal(seen.length, expected.records);
    assert.equal(new Set(seen.map((s) => `${s.env.loopId}\n${s.env.seq}`)).size, expected.envelopes);
    return { seen, expected };
}
test('the expected totals agree with a second fold over the decoded, verified records', () => {
    const { expected } = check({ seed: 42, roots: 6 });
    assert.deepEqual(expected.violations.map((v) => v.verdict).sort(), ['fork', 'mismatch'], 'one tampered ModelCalled, one second version');
    assert.ok(expected.records > 200 && expected.records < 1500, `${expected.records} records`);
    // The planted unverified costs are reported apart, and spend counts only verified calls.
    assert.notEqual(expected.totals.unverifiedModelCostPicoUsd, '0');
    assert.ok(expected.days.length >= 2, 'the traffic crosses a UTC midnight');
    assert.ok(expected.roots.every((r) => r.modelCostPicoUsd === expected.loops.find((l) => l.loopId === r.rootLoopId).subtreeModelCostPicoUsd));
});
test('more roots, deeper trees and more forks scale and still agree', () => {
    const { expected } = check({ seed: 7, roots: 30, iterations: [2, 5], maxChildren: 4, maxDepth: 3, forks: 8, redeliveries: 20, whaleCalls: 5 });
    assert.ok(expected.loops.some((l) => l.depth === 3));
    assert.equal(expected.planted.forks.length, 8);
    assert.equal(expected.planted.redeliveries.length, 20);
    check({ seed: 3, roots: 1, maxDepth: 1, iterations: [2, 3], whaleCalls: 0, forks: 1, redeliveries: 1 });
});
test('the same seed gives the same bytes; another seed other bytes', () => {
    const digest = (opts) => {
        const h = createHash('sha256');
        const traffic = generateSpendTraffic(opts);
        for (const r of traffic.records)
            h.update(r.key).update('\n').update(r.value).update('\n');
        return h.update(JSON.stringify(traffic.expected)).digest('hex');
    };
    assert.equal(digest({ seed: 42, roots: 6 }), digest({ seed: 42, roots: 6 }));
    assert.notEqual(digest({ seed: 42, roots: 6 }), digest({ seed: 43, roots: 6 }));
    // Pinned: a change to any draw, JSON byte, hash or expected total shows here.
    assert.equal(digest({ seed: 42, roots: 6 }), '1dd4666c3ec660ac0e653002c58f0aa8059c83877040efbc42efb54733e83b10');
});
test('USD texts: Go float64 text, exact picodollars half to even, both conversions agree', () => {
    const { records, expected } = generateSpendTraffic({ seed: 42, roots: 6 });
    const texts = new Set();
    for (const { env } of ingest(records)) {
        const model = body(env, 'ModelCalled');
        const charge = body(env, 'BudgetCharged');
        for (const usd of [model?.usage.cost_usd, charge?.usd]) {
            if (!usd)
                continue;
            texts.add(usd.text);
            assert.equal(usdTextToPicoExact(usd.text), usd.pico, usd.text);
            // Go's encoding/json: shortest round-trip digits, exponent form below 1e-6 with no zero padding.
            assert.equal(String(Number(usd.text)), usd.text);
            assert.doesNotMatch(usd.text, /e-0|e\+/);
            assert.ok(usd.pico <= INT64_MAX, `${usd.text}: one event stays within Int64 picodollars`);
        }
    }
    for (const t of expected.planted.usdTexts)
        assert.ok(texts.has(t), `${t} is written`);
    for (const t of ['1e-7', '2.5e-12', '12345.678901234567'])
        assert.ok(texts.has(t), t);
    assert.ok([...texts].some((t) => /\d{16}/.test(t.replace('.', ''))), 'some texts carry 16-17 significant digits');
    const pico = { '1e-7': 100000n, '2.5e-12': 2n, '1.5e-12': 2n, '3.5e-12': 4n, '5e-13': 0n, '12345.678901234567': 12345678901234567n, '0.012207000000000001': 12207000000n, '1.0000000000005e-9': 1000n, '1.5000000000005e-12': 2n, '0.30000000000000004': 300000000000n, '9.5e-7': 950000n, '0': 0n };
    for (const [text, want] of Object.entries(pico)) {
        assert.equal(usdTextToPicoExact(text), want, text);
        assert.equal(usdTextToPico(text), want, text);
    }
});
test('the whale model passes 2^64 picodollars in calls that each fit Int64', () => {
    const { records, expected } = generateSpendTraffic({ seed: 42, roots: 6 });
    const whale = expected.models.find((m) => m.provider === expected.planted.whale.provider && m.model === expected.planted.whale.model);
    assert.ok(BigInt(whale.costPicoUsd) > 2n ** 64n, whale.costPicoUsd);
    assert.ok(BigInt(expected.totals.modelCostPicoUsd) > 2n ** 64n);
    assert.ok(expected.loops.some((l) => BigInt(l.subtreeModelCostPicoUsd) > INT64_MAX), 'a tree passes Int64');
    // No single money field of any envelope passes Int64 picodollars, child_spend and total_spend included.
    for (const r of records) {
        const payload = Buffer.from(JSON.parse(r.value.toString('utf8')).Payload, 'base64').toString('utf8');
        for (const m of payload.matchAll(/"(?:cost_usd|usd)":([-0-9.e+]+)/g))
            assert.ok(usdTextToPicoExact(m[1]) <= INT64_MAX, m[1]);
    }
    assert.ok(expected.models.filter((m) => m.calls > 0).length >= 6, 'several providers and models');
    assert.ok(new Set(expected.models.map((m) => m.provider)).size >= 4);
});
test('trees arrive child-first and parent-first; forks replay before their ForkedFrom', () => {
    const { records, expected } = generateSpendTraffic({ seed: 42, roots: 6 });
    const seen = ingest(records);
    const first = new Map();
    const last = new Map();
    // First deliveries: a redelivery may come minutes later, after anything.
    for (const { index, env } of seen.filter((s) => s.verdict !== 'duplicate')) {
        if (!first.has(env.loopId))
            first.set(env.loopId, index);
        last.set(env.loopId, index);
    }
    const byId = new Map(expected.loops.map((l) => [l.loopId, l]));
    const tree = (root) => expected.loops.filter((l) => l.rootLoopId === root && l.parentLoopId !== '' && l.forkedFrom === '');
    assert.ok(expected.planted.childFirstRoots.length > 0 && expected.planted.parentFirstRoots.length > 0);
    for (const root of expected.planted.childFirstRoots) {
        assert.ok(tree(root).some((l) => l.depth >= 1));
        for (const child of tree(root))
            assert.ok(last.get(child.loopId) < first.get(child.parentLoopId), `${child.loopId} arrives whole before its parent`);
    }
    for (const root of expected.planted.parentFirstRoots) {
        for (const child of tree(root)) {
            const spawned = seen.find(({ env }) => env.loopId === child.parentLoopId && body(env, 'SubAgentSpawned')?.child_loop_id === child.loopId);
            assert.ok(spawned.index < first.get(child.loopId), `${child.parentLoopId} spawns ${child.loopId} before it arrives`);
        }
    }
    assert.ok(expected.loops.some((l) => l.depth === 2), 'grandchildren');
    // Interleaved across loops: the topic switches loops far more often than once per loop.
    const switches = records.filter((r, i) => i > 0 && r.key !== records[i - 1].key).length;
    assert.ok(switches > 3 * expected.loops.length, `${switches} switches`);
    assert.ok(expected.planted.forks.length >= 2);
    assert.ok(expected.planted.forks.some((f) => byId.get(f.sourceLoopId).depth === 0) && expected.planted.forks.some((f) => byId.get(f.sourceLoopId).depth > 0));
    for (const f of expected.planted.forks) {
        const fork = seen.filter(({ env, verdict }) => env.loopId === f.loopId && verdict !== 'duplicate');
        const source = seen.filter(({ env, verdict }) => env.loopId === f.sourceLoopId && verdict === 'ok');
        const forkedFrom = fork.find(({ env }) => env.kind === 'ForkedFrom');
        assert.equal(forkedFrom.env.seq, f.atSeq + 1);
        const replays = fork.filter(({ env }) => env.seq <= f.atSeq);
        assert.equal(replays.length, f.atSeq);
        assert.ok(replays.every((r) => r.index < forkedFrom.index), 'ForkedFrom arrives after its replays');
        assert.ok(replays.some(({ env }) => env.kind === 'ModelCalled'), 'a replayed model call must not be counted again');
        for (const r of replays)
            assert.ok(r.env.payload.equals(source.find(({ env }) => env.seq === r.env.seq).env.payload), 'a replay carries its source payload');
        // Its place in the tree comes from its own replayed LoopStarted.
        const own = byId.get(f.loopId);
        const src = byId.get(f.sourceLoopId);
        assert.deepEqual([own.parentLoopId, own.depth, own.name], [src.parentLoopId, src.depth, src.name]);
    }
    assert.ok(expected.loops.some((l) => l.forkedFrom !== '' && l.outcome === ''), 'a fork still running');
});
test('sub-agents fail, carry child_spend that is never added, and tools error', () => {
    const { records, expected } = generateSpendTraffic({ seed: 42, roots: 6 });
    const seen = ingest(records).filter((s) => s.verdict !== 'duplicate');
    const byId = new Map(expected.loops.map((l) => [l.loopId, l]));
    const outcomes = new Set();
    let completions = 0;
    for (const { env } of seen) {
        const done = body(env, 'SubAgentCompleted');
        if (!done)
            continue;
        // Replays of a fork restate their source's completions: checked once, at the source.
        if (byId.get(env.loopId).forkedFrom !== '' && env.seq <= byId.get(env.loopId).forkedAtSeq)
            continue;
        completions++;
        outcomes.add(done.outcome_kind);
        const child = byId.get(done.child_loop_id);
        assert.equal(child.parentLoopId, env.loopId);
        assert.equal(done.outcome_kind, child.outcome);
        assert.equal(done.error, child.error);
        if (done.outcome_kind !== 'Completed')
            assert.notEqual(done.error, '');
        // child_spend: the child's own ledger {iterations, tokens, usd, wall_clock_ms}, usd summed in float64:
        // the child's own budget within float rounding, and not its sub-agents'.
        const spend = JSON.parse(done.child_spend);
        assert.deepEqual(Object.keys(spend), ['iterations', 'tokens', 'usd', 'wall_clock_ms']);
        const budget = Number(child.budgetPicoUsd) / 1e12;
        assert.ok(Math.abs(spend.usd - budget) <= 1e-9 * Math.max(1, budget), `${spend.usd} vs ${budget}`);
    }
    assert.ok(completions > 5);
    for (const o of ['Completed', 'Failed', 'Stuck', 'BudgetExceeded'])
        assert.ok(outcomes.has(o), o);
    assert.ok(seen.some(({ env }) => body(env, 'ToolCalled')?.is_error === true));
    assert.ok(seen.some(({ env }) => body(env, 'ToolCalled')?.is_error === false));
    assert.ok(seen.some(({ env }) => env.kindClass === 'ConvergenceWarning'));
    assert.ok(seen.some(({ env }) => env.kindClass === 'IterationStarted'));
    assert.ok(seen.some(({ env }) => body(env, 'LoopFinished')?.total_spend.startsWith('{"iterations":')));
});
test('options are checked', () => {
    assert.throws(() => generateSpendTraffic({ seed: 1, roots: 0 }), /roots/);
    assert.throws(() => generateSpendTraffic({ seed: 1, roots: 3, whaleCalls: 2 }), /whaleCalls/);
    assert.throws(() => generateSpendTraffic({ seed: 1, roots: 3, iterations: [3, 2] }), /iterations/);
    assert.throws(() => generateSpendTraffic({ seed: 1, roots: 1, startTime: 'tomorrow' }), /startTime/);
});
//# sourceMappingURL=spend.test.js.map