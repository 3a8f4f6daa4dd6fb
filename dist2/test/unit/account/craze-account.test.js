/**
 * craze session totals and outcome lists (test/support/craze-reference.ts,
 * over production's spend reports) against a hand-computed corpus of craze
 * journals (test/fixtures/craze: GROUND_TRUTH.md shows the arithmetic per
 * report), plus focused cases for each outcome rule.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { corpus, expectedSessions, script, SESSION_A, SESSION_B, SESSION_C, sp } from '../../support/craze-events.js';
import { accountIncarnation, sessionTotals } from '../../support/craze-reference.js';
function accountCorpus() {
    const bySession = new Map();
    for (const journal of corpus()) {
        const { account } = accountIncarnation(journal.sessionId, journal.incarnation, journal.events);
        const list = bySession.get(journal.sessionId) ?? [];
        list.push({ journal, account });
        bySession.set(journal.sessionId, list);
    }
    return bySession;
}
function asExpected(t) {
    return {
        sessionId: t.sessionId,
        incarnations: t.incarnations,
        costPicoUsd: t.costPicoUsd.toString(),
        inputTokens: Number(t.inputTokens),
        outputTokens: Number(t.outputTokens),
        reasoningTokens: Number(t.reasoningTokens),
        cacheReadTokens: Number(t.cacheReadTokens),
        cacheCreationTokens: Number(t.cacheCreationTokens),
        unpricedReports: t.unpricedReports,
        turnsDone: t.turnsDone,
        turnsFailed: t.turnsFailed,
        turnsCancelled: t.turnsCancelled,
        subagentsCompleted: t.subagentsCompleted,
        subagentsFailed: t.subagentsFailed,
        subagentsCancelled: t.subagentsCancelled,
        subagentsAbandoned: t.subagentsAbandoned,
    };
}
test('the corpus reads as craze writes it: torn line, omitted body, gap, replayed loads', () => {
    const journals = corpus();
    assert.equal(journals.length, 7);
    assert.deepEqual(new Set(journals.map((j) => j.sessionId)), new Set([SESSION_A, SESSION_B, SESSION_C]));
    assert.equal(journals.filter((j) => j.torn).length, 1);
    assert.equal(journals.reduce((n, j) => n + j.omitted, 0), 1);
    assert.equal(journals.reduce((n, j) => n + j.gaps, 0), 1);
    // Every resumed incarnation re-contains history, a usage report included.
    const loads = journals.filter((j) => j.events.some((e) => e.replayed === true && e.state?.usage !== undefined));
    assert.equal(loads.length, 4);
});
test('corpus totals equal the hand-computed ground truth, to the picodollar', () => {
    const bySession = accountCorpus();
    const expected = expectedSessions();
    assert.equal(bySession.size, expected.length);
    for (const want of expected) {
        const incs = bySession.get(want.sessionId);
        assert.ok(incs, want.sessionId);
        const got = sessionTotals(want.sessionId, incs.map((a) => a.account));
        assert.deepEqual(asExpected(got), want, want.sessionId);
    }
    // Session C passes 2^53 picodollars: summed over incarnations exactly.
    const c = bySession.get(SESSION_C) ?? [];
    assert.equal(sessionTotals(SESSION_C, c.map((x) => x.account)).costPicoUsd, 11552469012580265n);
});
test('corpus: agent-scoped events are kept apart, labelled by sub-agent', () => {
    const bySession = accountCorpus();
    const b2 = (bySession.get(SESSION_B) ?? []).find((a) => a.journal.file.includes('T083355Z'));
    assert.ok(b2);
    const sa = b2.account.agentOutcomes().get('sa-b5');
    assert.ok(sa);
    assert.deepEqual(sa.errors.map((e) => [e.class, e.code]), [['rpc', -32603]]);
    assert.deepEqual(sa.compactions.map((c) => [c.reason, c.tokensBefore, c.tokensAfter]), [['auto', 180000, 12000]]);
    assert.deepEqual(sa.tools.map((t) => [t.id, t.status, t.exitCode]), [['call-s1', 'completed', 0]]);
    const main = b2.account.sessionOutcomes();
    assert.equal(main.errors.length, 0);
    assert.equal(main.compactions.length, 0);
    // The replayed sub-agent row of the load is not counted.
    assert.deepEqual(main.subagents.map((s) => [s.id, s.attemptId, s.outcome]), [['sa-b5', 'sa-b5.1', 'completed']]);
});
test('corpus: errors, compactions, tool exit codes and permission asks', () => {
    const bySession = accountCorpus();
    const [a1] = bySession.get(SESSION_A) ?? [];
    assert.ok(a1);
    const o = a1.account.sessionOutcomes();
    assert.deepEqual(o.errors.map((e) => [e.class, e.code]), [['provider', 529]]);
    assert.deepEqual(o.permissionAsks.map((a) => [a.id, a.outcome, a.by]), [['perm-1', 'answered', 'client']]);
    assert.deepEqual(o.tools.filter((t) => t.name === 'bash').map((t) => [t.id, t.status, t.exitCode]), [
        ['call-3', 'completed', 1],
        ['call-5', 'completed', 0],
    ]);
    const c = bySession.get(SESSION_C) ?? [];
    const compactions = c.flatMap((x) => x.account.sessionOutcomes().compactions);
    // The replayed compactions of both loads are not counted.
    assert.deepEqual(compactions.map((x) => [x.reason, x.tokensBefore, x.tokensAfter, x.failed]), [
        ['manual', 890000, 21000, false],
        ['overflow', 1010000, 0, true],
    ]);
});
// ---------------------------------------------------------------------------
// Focused cases.
test('a replayed turn ending is not a count', () => {
    const s = script();
    s.push({ type: 'replay', replayed: false });
    s.push({ type: 'turn', turn: { id: 'old', phase: 'ended' }, replayed: true });
    s.report(sp(300n), sp(5000n), { replayed: true });
    s.turn('t1');
    s.report(sp(20n), sp(5020n));
    const { account } = accountIncarnation('s', 'i', s.events);
    assert.equal(account.sessionOutcomes().turns.length, 0);
});
test('sub-agents: the last finished row wins, spawned and never finished is abandoned', () => {
    const s = script();
    const row = (id, attemptId, status, change, extra = {}) => s.push({ type: 'subagent', subagent: { id, attemptId, status }, subagentChange: change, ...extra });
    row('a', '1', 'running', 'spawned');
    row('a', '1', 'failed', 'finished');
    row('a', '1', 'completed', 'finished'); // last by seq wins
    row('a', '2', 'running', 'spawned'); // another attempt: its own key
    row('a', '2', 'cancelled', 'finished');
    row('b', '1', 'running', 'spawned');
    row('b', '1', 'running', 'progress'); // never finished: abandoned
    row('c', '1', 'completed', 'finished', { replayed: true }); // replayed: not counted
    const { account } = accountIncarnation('s', 'i', s.events);
    assert.deepEqual(account.sessionOutcomes().subagents.map((x) => [x.id, x.attemptId, x.outcome]), [
        ['a', '1', 'completed'],
        ['a', '2', 'cancelled'],
        ['b', '1', 'abandoned'],
    ]);
    const t = sessionTotals('s', [account]);
    assert.deepEqual([t.subagentsCompleted, t.subagentsFailed, t.subagentsCancelled, t.subagentsAbandoned], [1, 0, 1, 1]);
});
test('agent-scoped events are excluded from session counts and spend', () => {
    const s = script();
    s.push({ type: 'meta', state: { model: 'parent-model' } });
    s.turn('t1');
    s.report(sp(10n), sp(10n));
    s.push({ type: 'meta', agent: 'sa', state: { model: 'child-model', usage: { turn: sp(999n), session: sp(999n) } } });
    s.push({ type: 'turn', agent: 'sa', turn: { id: 'c1', phase: 'started' } });
    s.push({ type: 'turn', agent: 'sa', turn: { id: 'c1', phase: 'ended', errClass: 'provider' } });
    s.push({ type: 'subagent', agent: 'sa', subagent: { id: 'nested', attemptId: '1', status: 'failed' }, subagentChange: 'finished' });
    s.push({ type: 'error', agent: 'sa', err: { class: 'rpc', code: -32603 } });
    s.report(sp(25n), sp(25n));
    s.ended('t1');
    const { account } = accountIncarnation('s', 'i', s.events);
    const t = sessionTotals('s', [account]);
    assert.deepEqual([t.costPicoUsd, t.turnsDone, t.turnsFailed, t.subagentsFailed], [25n, 1, 0, 0]);
    const sa = account.agentOutcomes().get('sa');
    assert.ok(sa);
    assert.deepEqual([sa.turns.length, sa.subagents.length, sa.errors.length], [1, 1, 1]);
    assert.equal(account.sessionOutcomes().errors.length, 0);
});
test('one turn ended twice counts once, as its last ending says', () => {
    const s = script();
    s.turn('t1');
    s.ended('t1', { synthetic: true, stopReason: 'closing' });
    s.ended('t1');
    const t = sessionTotals('s', [accountIncarnation('s', 'i', s.events).account]);
    assert.deepEqual([t.turnsDone, t.turnsCancelled], [1, 0]);
});
test('unpriced reports are counted once per floor in the totals', () => {
    const s = script();
    s.turn('t1');
    s.report(sp(10n), sp(10n));
    s.turn('t2');
    s.report(sp(0n, 500n, true), sp(10n, 500n, true));
    s.turn('t3');
    s.report(sp(5n), sp(15n, 500n, true));
    assert.equal(sessionTotals('s', [accountIncarnation('s', 'i', s.events).account]).unpricedReports, 1);
});
//# sourceMappingURL=craze-account.test.js.map