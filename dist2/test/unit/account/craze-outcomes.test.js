/**
 * craze outcomes per event (src/account/craze-outcomes.ts): the turn-ending
 * rule, what each kind of event yields, and — counted the way the views of
 * schema/clickhouse/0004_craze_views.sql count the rows — the hand-computed
 * turn and sub-agent totals of the corpus (test/fixtures/craze/expected.json).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyTurnEnding, crazeEventOutcome } from '../../../src/account/craze-outcomes.js';
import { corpus, expectedSessions } from '../../support/craze-events.js';
test('turn endings: failed on an error, cancelled on a cancel or a close, else done', () => {
    assert.equal(classifyTurnEnding({ phase: 'ended', stopReason: 'end_turn' }), 'done');
    assert.equal(classifyTurnEnding({ phase: 'ended', stopReason: 'max_tokens' }), 'done');
    assert.equal(classifyTurnEnding({ phase: 'ended', errClass: 'provider', err: '529' }), 'failed');
    assert.equal(classifyTurnEnding({ phase: 'ended', err: 'boom' }), 'failed');
    assert.equal(classifyTurnEnding({ phase: 'ended', stopReason: 'cancelled' }), 'cancelled');
    assert.equal(classifyTurnEnding({ phase: 'ended', stopReason: 'closing', synthetic: true }), 'cancelled');
    assert.equal(classifyTurnEnding({ phase: 'ended', stopReason: 'cancelled', errClass: 'prompt_cancelled', err: 'x', synthetic: true }), 'cancelled');
    assert.equal(classifyTurnEnding({ phase: 'ended', errClass: 'canceled', err: 'context canceled' }), 'cancelled');
});
test('each kind of event yields its own outcome values, and nothing else', () => {
    assert.deepEqual(crazeEventOutcome({ type: 'turn', turn: { id: 't1', phase: 'ended', errClass: 'provider', err: '529', synthetic: true } }), {
        turn: { id: 't1', outcome: 'failed', synthetic: true, errClass: 'provider' },
    });
    // Only an ending is an outcome.
    assert.deepEqual(crazeEventOutcome({ type: 'turn', turn: { id: 't1', phase: 'started' } }), {});
    assert.deepEqual(crazeEventOutcome({ type: 'subagent', subagent: { id: 'a', attemptId: 'a.1', status: 'failed' }, subagentChange: 'finished' }), { subagent: { id: 'a', attemptId: 'a.1', change: 'finished', status: 'failed' } });
    // An exit code is kept when reported, 0 included, and absent otherwise.
    assert.deepEqual(crazeEventOutcome({ type: 'tool', tool: { name: 'bash', kind: 'execute', status: 'completed', output: { exitCode: 0 } } }), {
        tool: { name: 'bash', kind: 'execute', status: 'completed', exitCode: 0 },
    });
    assert.deepEqual(crazeEventOutcome({ type: 'tool', tool: { name: 'read', output: {} } }), {
        tool: { name: 'read', kind: '', status: '', exitCode: undefined },
    });
    assert.deepEqual(crazeEventOutcome({ type: 'ask', ask: { kind: 'permission', outcome: 'answered', by: 'client' } }), {
        ask: { kind: 'permission', outcome: 'answered', by: 'client' },
    });
    assert.deepEqual(crazeEventOutcome({ type: 'compaction', compaction: { phase: 'ended', reason: 'auto', tokensBefore: 180000, tokensAfter: 12000 } }), {
        compaction: { phase: 'ended', reason: 'auto', tokensBefore: 180000, tokensAfter: 12000 },
    });
    // `err` is an error's detail on whatever event carries it.
    assert.deepEqual(crazeEventOutcome({ type: 'error', err: { class: 'rpc', code: -32603 } }), { error: { class: 'rpc', code: -32603 } });
    assert.deepEqual(crazeEventOutcome({ type: 'done', err: { class: 'provider', code: 529 } }), { error: { class: 'provider', code: 529 } });
    // A section under another event type is not that type's outcome; absent means zero.
    assert.deepEqual(crazeEventOutcome({ type: 'newer_type', turn: { id: 'x', phase: 'ended' }, tool: { name: 'bash' } }), {});
    assert.deepEqual(crazeEventOutcome({ type: 'subagent', subagent: {} }), { subagent: { id: '', attemptId: '', change: '', status: '' } });
    assert.deepEqual(crazeEventOutcome({ type: 'compaction', compaction: {} }), {
        compaction: { phase: '', reason: '', tokensBefore: 0, tokensAfter: 0 },
    });
    assert.deepEqual(crazeEventOutcome({ type: 'subagent' }), {});
});
test('corpus: per-event outcomes, counted as the views count rows, give the hand-computed turns and sub-agents', () => {
    const counts = new Map();
    for (const journal of corpus()) {
        // craze_turns: per (incarnation, turn id) the last ending by seq.
        const turns = new Map();
        // craze_subagents: per (incarnation, id, attempt) the last `finished` status by seq, else abandoned.
        const subagents = new Map();
        for (const ev of journal.events) {
            // Both views: replayed events and sub-agent transcripts excluded.
            if (ev.replayed === true || (ev.agent ?? '') !== '')
                continue;
            const o = crazeEventOutcome(ev);
            if (o.turn)
                turns.set(o.turn.id, o.turn.outcome);
            if (o.subagent && o.subagent.id !== '') {
                const key = JSON.stringify([o.subagent.id, o.subagent.attemptId]);
                if (o.subagent.change === 'finished')
                    subagents.set(key, o.subagent.status);
                else if (!subagents.has(key))
                    subagents.set(key, 'abandoned');
            }
        }
        const c = counts.get(journal.sessionId) ?? {};
        for (const outcome of [...[...turns.values()].map((t) => `turns.${t}`), ...[...subagents.values()].map((s) => `subagents.${s}`)]) {
            c[outcome] = (c[outcome] ?? 0) + 1;
        }
        counts.set(journal.sessionId, c);
    }
    for (const want of expectedSessions()) {
        const c = counts.get(want.sessionId) ?? {};
        assert.deepEqual([c['turns.done'], c['turns.failed'], c['turns.cancelled']].map((n) => n ?? 0), [want.turnsDone, want.turnsFailed, want.turnsCancelled], `${want.sessionId} turns`);
        assert.deepEqual([c['subagents.completed'], c['subagents.failed'], c['subagents.cancelled'], c['subagents.abandoned']].map((n) => n ?? 0), [want.subagentsCompleted, want.subagentsFailed, want.subagentsCancelled, want.subagentsAbandoned], `${want.sessionId} sub-agents`);
    }
});
//# sourceMappingURL=craze-outcomes.test.js.map