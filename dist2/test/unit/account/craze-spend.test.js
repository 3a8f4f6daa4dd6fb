/**
 * The craze spend method (src/account/craze-spend.ts, docs/input-contracts.md §2): per-report
 * spend against the hand-computed corpus (test/fixtures/craze/GROUND_TRUTH.md),
 * focused cases for each rule, and its state across restarts — including the
 * wider state rows written before the outcome lists left the module.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IncarnationSpend } from '../../../src/account/craze-spend.js';
import { corpus, script, SESSION_A, SESSION_B, sp } from '../../support/craze-events.js';
function feedAll(events, account = new IncarnationSpend('s', 'i')) {
    const reports = [];
    for (const ev of events) {
        const r = account.feed(ev);
        if (r !== undefined)
            reports.push(r);
    }
    return { account, reports };
}
const costs = (events) => feedAll(events).reports.map((r) => r.spend.costPicoUsd);
// ---------------------------------------------------------------------------
// The corpus.
test('corpus: per-report spend matches GROUND_TRUTH.md where the two growths disagree', () => {
    const b1 = corpus().find((j) => j.sessionId === SESSION_B && j.file.includes('T101230Z'));
    assert.ok(b1);
    const { reports } = feedAll(b1.events);
    const at = (seq) => reports.find((r) => r.seq === seq);
    // R3, the background sub-agent's wake: session growth wins.
    assert.equal(at(18)?.spend.costPicoUsd, 15750000000n);
    assert.equal(at(18)?.turnGrowth.costPicoUsd, 5850000000n);
    // R6, after the rewind: session growth negative, turn growth counts.
    assert.equal(at(44)?.sessionGrowth.costPicoUsd, -15175000000n);
    assert.equal(at(44)?.spend.costPicoUsd, 11000000000n);
    // R9, after the gap lost turn-4's start: no turn began as far as we know.
    assert.equal(at(56)?.turnBegan, false);
    assert.equal(at(56)?.turnGrowth.cacheRead, 2000n);
    assert.equal(at(56)?.spend.cacheRead, 26500n);
    assert.equal(at(56)?.spend.costPicoUsd, 18750000000n);
    assert.deepEqual(reports.map((r) => r.seq), [8, 11, 18, 35, 37, 44, 46, 56, 63]);
});
test('corpus: spend is attributed to the model in force at each report', () => {
    const reports = corpus()
        .filter((j) => j.sessionId === SESSION_A)
        .flatMap((j) => feedAll(j.events, new IncarnationSpend(j.sessionId, j.incarnation)).reports);
    const byModel = new Map();
    for (const r of reports)
        byModel.set(r.model, (byModel.get(r.model) ?? 0n) + r.spend.costPicoUsd);
    assert.deepEqual(byModel, new Map([
        ['claude-sonnet-4-5', 121185000000n],
        ['claude-opus-4-1', 25500000000n],
        ['local/qwen3-coder', 0n],
    ]));
    assert.deepEqual(reports.filter((r) => r.spend.unpriced).map((r) => [r.seq, r.model]), [[47, 'local/qwen3-coder']]);
});
// ---------------------------------------------------------------------------
// Focused cases.
test('a turn restated across steps is not double counted', () => {
    const s = script();
    s.turn('t1');
    s.report(sp(10n), sp(10n));
    s.report(sp(25n), sp(25n));
    s.report(sp(40n), sp(40n));
    s.ended('t1');
    assert.deepEqual(costs(s.events), [10n, 15n, 15n]);
});
test('a rewound branch (the session drops) still counts the turn growth', () => {
    const s = script();
    s.turn('t1');
    s.report(sp(100n), sp(100n));
    s.turn('t2');
    s.report(sp(50n), sp(150n));
    s.turn('t3'); // after a rewind to before t2: the session figure falls to 100 + 30
    s.report(sp(30n), sp(130n));
    s.report(sp(45n), sp(145n));
    const { reports } = feedAll(s.events);
    assert.deepEqual(reports.map((r) => [r.sessionGrowth.costPicoUsd, r.turnGrowth.costPicoUsd, r.spend.costPicoUsd]), [
        [100n, 100n, 100n],
        [50n, 50n, 50n],
        [-20n, 30n, 30n],
        [15n, 15n, 15n],
    ]);
    assert.equal(reports.reduce((sum, r) => sum + r.spend.costPicoUsd, 0n), 195n);
});
test('a missed turn boundary is caught by the session growth', () => {
    const s = script();
    s.turn('t1');
    s.report(sp(40n), sp(40n));
    // t2's `started` was lost (a journal gap): its first report reads as t1's.
    s.report(sp(15n), sp(55n));
    const { reports } = feedAll(s.events);
    assert.equal(reports[1]?.turnBegan, false);
    assert.equal(reports[1]?.turnGrowth.costPicoUsd, -25n);
    assert.deepEqual(costs(s.events), [40n, 15n]);
});
test('a foreign turn starting is a turn boundary; its end is not', () => {
    const s = script();
    s.turn('t1');
    s.report(sp(40n), sp(40n));
    s.foreign(true);
    s.report(sp(5n), sp(45n));
    s.foreign(false);
    s.report(sp(9n), sp(49n));
    assert.deepEqual(feedAll(s.events).reports.map((r) => [r.turnBegan, r.spend.costPicoUsd]), [
        [true, 40n],
        [true, 5n],
        [false, 4n],
    ]);
});
test('replayed reports are never counted', () => {
    const s = script();
    s.push({ type: 'replay' });
    s.report(sp(7n), sp(1000n), { replayed: true });
    s.push({ type: 'replay' });
    assert.deepEqual(costs(s.events), []);
    // Nor is a replayed report after a live one (a second load): it does not
    // move the baseline either.
    const t = script();
    t.turn('t1');
    t.report(sp(10n), sp(110n), { replayed: false });
    t.report(sp(5n), sp(60n), { replayed: true });
    t.report(sp(20n), sp(120n));
    assert.deepEqual(costs(t.events), [110n, 10n]);
});
test('the first report after a load is measured against the replayed report', () => {
    const s = script();
    s.push({ type: 'replay', replayed: false });
    s.push({ type: 'user', replayed: true });
    s.push({ type: 'turn', turn: { id: 'old', phase: 'ended' }, replayed: true });
    s.report(sp(300n), sp(5000n), { replayed: true, state: { model: 'm-old', usage: { turn: sp(300n), session: sp(5000n) } } });
    s.turn('t1');
    s.report(sp(20n), sp(5020n));
    assert.deepEqual(feedAll(s.events).reports.map((r) => [r.sessionGrowth.costPicoUsd, r.spend.costPicoUsd, r.model]), [[20n, 20n, 'm-old']]);
    // No load: against zero.
    const t = script();
    t.turn('t1');
    t.report(sp(20n), sp(20n));
    assert.deepEqual(costs(t.events), [20n]);
    // A load whose first live report follows no turn start: the turn figure
    // is measured against the replayed one too, so the stored last turn is not
    // counted again.
    const u = script();
    u.report(sp(300n), sp(5000n), { replayed: true });
    u.report(sp(310n), sp(5010n));
    assert.deepEqual(costs(u.events), [10n]);
});
test('agent-scoped events are never spend, no turn boundary and not the session model', () => {
    const s = script();
    s.push({ type: 'meta', state: { model: 'parent-model' } });
    s.turn('t1');
    s.report(sp(10n), sp(10n));
    s.push({ type: 'meta', agent: 'sa', state: { model: 'child-model', usage: { turn: sp(999n), session: sp(999n) } } });
    s.push({ type: 'turn', agent: 'sa', turn: { id: 'c1', phase: 'started' } });
    s.push({ type: 'foreign_turn', agent: 'sa', foreignTurn: { id: 'cf', running: true } });
    s.report(sp(25n), sp(25n));
    s.ended('t1');
    const { account, reports } = feedAll(s.events);
    // The child's turn start is no boundary of the session's turn figure.
    assert.deepEqual(reports.map((r) => [r.turnBegan, r.spend.costPicoUsd, r.model]), [
        [true, 10n, 'parent-model'],
        [false, 15n, 'parent-model'],
    ]);
    assert.equal(account.currentModel, 'parent-model');
});
test('cost sums above 2^53 are exact', () => {
    const big = 9007199254740993n; // 2^53 + 1: not a JavaScript number
    const s = script();
    s.turn('t1');
    s.report(sp(big), sp(big));
    s.turn('t2');
    s.report(sp(big + 2n), sp(2n * big + 2n));
    assert.equal(costs(s.events).reduce((a, b) => a + b, 0n), 18014398509481988n);
});
test('unpriced: counted once where the floor enters, not on every later report', () => {
    const s = script();
    s.turn('t1');
    s.report(sp(10n), sp(10n));
    s.turn('t2');
    s.report(sp(0n, 500n, true), sp(10n, 500n, true));
    s.turn('t3');
    s.report(sp(5n), sp(15n, 500n, true));
    assert.deepEqual(feedAll(s.events).reports.map((r) => r.spend.unpriced), [false, true, false]);
});
// ---------------------------------------------------------------------------
// State across restarts.
const bigints = (_key, v) => (typeof v === 'bigint' ? `${v}n` : v);
test('state survives a JSON round trip mid-stream, and a redelivered seq is ignored', () => {
    for (const journal of corpus()) {
        const straight = feedAll(journal.events, new IncarnationSpend(journal.sessionId, journal.incarnation));
        for (const cut of [1, Math.floor(journal.events.length / 2), journal.events.length - 1]) {
            const before = feedAll(journal.events.slice(0, cut), new IncarnationSpend(journal.sessionId, journal.incarnation));
            const restored = IncarnationSpend.fromJSON(JSON.parse(JSON.stringify(before.account.toJSON())));
            // Redeliver the batch around the cut: what was already folded is ignored.
            const after = feedAll(journal.events.slice(Math.max(0, cut - 3)), restored);
            const where = `${journal.file} cut at ${cut}`;
            assert.deepEqual(restored.toJSON(), straight.account.toJSON(), where);
            assert.equal(JSON.stringify([...before.reports, ...after.reports], bigints), JSON.stringify(straight.reports, bigints), where);
        }
    }
});
/**
 * A script with a load, a rewind, a sub-agent's report and a foreign turn,
 * cut after seq 7 — where the two old-format states below were taken.
 */
function oldFormatScript() {
    const B = 9007199254740993n;
    const s = script();
    s.push({ type: 'replay' });
    s.report(sp(300n), sp(B, 5000n), { replayed: true, state: { model: 'm-old', usage: { turn: sp(300n), session: sp(B, 5000n) } } });
    s.turn('t1');
    s.report(sp(20n, 7n), sp(B + 20n, 5007n), { at: '2026-11-30T10:00:01Z' });
    s.push({ type: 'tool', tool: { id: 'c1', name: 'bash', status: 'completed', output: { exitCode: 1 } } });
    s.ended('t1');
    s.turn('t2');
    // --- cut: seq 7 ---
    s.push({ type: 'meta', at: '2026-11-30T10:00:02Z', state: { model: 'm-new', usage: { turn: sp(15n, 3n), session: sp(B + 35n, 5010n) } } });
    s.push({ type: 'meta', agent: 'sa', state: { model: 'child', usage: { turn: sp(999n), session: sp(999n) } } });
    s.push({ type: 'turn', agent: 'sa', turn: { id: 'c', phase: 'started' } });
    s.report(sp(25n, 5n), sp(B + 10n, 5001n));
    s.foreign(true);
    s.report(sp(4n, 1n), sp(B + 14n, 5002n, true));
    return s.events;
}
/**
 * States of oldFormatScript() at seq 7, written by the code before the split
 * (src/account/craze.ts as of commit bea5da8): FULL is its toJSON(), with the
 * totals and outcome lists it kept; STORED is what the pipeline put in
 * craze_events.account_state (compactState: the same with those emptied).
 */
const OLD_PREFIX = '{"v":1,"sessionId":"s","incarnation":"i","lastSeq":7,"model":"m-old",' +
    '"prevSession":{"input":"5007","output":"0","reasoning":"0","cacheRead":"0","cacheCreation":"0","costPicoUsd":"9007199254741013","unpriced":false},' +
    '"prevTurn":{"input":"7","output":"0","reasoning":"0","cacheRead":"0","cacheCreation":"0","costPicoUsd":"20","unpriced":false},' +
    '"turnBegan":true,"sawLiveReport":true,';
const OLD_FULL = OLD_PREFIX +
    '"totals":{"input":"7","output":"0","reasoning":"0","cacheRead":"0","cacheCreation":"0","costPicoUsd":"20","reports":1,"unpricedReports":0},' +
    '"byModel":[["m-old",{"input":"7","output":"0","reasoning":"0","cacheRead":"0","cacheCreation":"0","costPicoUsd":"20","reports":1,"unpricedReports":0}]],' +
    '"scopes":[["",{"turns":[{"turnId":"t1","seq":6,"at":null,"outcome":"done","stopReason":"end_turn","errClass":"","synthetic":false}],' +
    '"subagents":[],"errors":[],"compactions":[],"tools":[{"id":"c1","seq":5,"name":"bash","kind":"","status":"completed","exitCode":1}],' +
    '"permissionAsks":[],"foreignTurns":[]}]]}';
const OLD_STORED = OLD_PREFIX +
    '"totals":{"input":"0","output":"0","reasoning":"0","cacheRead":"0","cacheCreation":"0","costPicoUsd":"0","reports":0,"unpricedReports":0},' +
    '"byModel":[],"scopes":[]}';
test('a state stored by the older, wider format restores and goes on with identical spend', () => {
    const events = oldFormatScript();
    const straight = feedAll(events);
    // What the old code reported after the cut (hand-checked: seq 8 a new turn,
    // seq 11 the rewind counted by the turn figure, seq 13 after a foreign turn,
    // where the session became unpriced).
    const want = straight.reports.filter((r) => r.seq > 7);
    assert.deepEqual(want.map((r) => [r.seq, r.model, r.turnBegan, r.spend.costPicoUsd, r.spend.input, r.spend.unpriced]), [
        [8, 'm-new', true, 15n, 3n, false],
        [11, 'm-new', false, 10n, 2n, false],
        [13, 'm-new', true, 4n, 1n, true],
    ]);
    for (const [name, text] of [
        ['full', OLD_FULL],
        ['stored', OLD_STORED],
    ]) {
        const restored = IncarnationSpend.fromJSON(JSON.parse(text));
        assert.equal(restored.headSeq, 7, name);
        assert.equal(restored.currentModel, 'm-old', name);
        // A redelivery of seqs 5-7 first, as after a crash.
        const after = feedAll(events.slice(4), restored);
        assert.equal(JSON.stringify(after.reports, bigints), JSON.stringify(want, bigints), name);
        assert.deepEqual(restored.toJSON(), straight.account.toJSON(), name);
    }
    // The new state is the old one without the fields it no longer keeps.
    const now = feedAll(events.slice(0, 7)).account.toJSON();
    assert.equal(JSON.stringify(now), `${OLD_PREFIX.slice(0, -1)}}`);
});
//# sourceMappingURL=craze-spend.test.js.map