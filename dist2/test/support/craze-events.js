/**
 * craze events for the account tests: the sample journals (test/fixtures/craze)
 * read independently of src/, and a builder of small hand-written event scripts.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
export const CRAZE_FIXTURES = fileURLToPath(new URL('../../../test/fixtures/craze/', import.meta.url));
export const SESSION_A = '0195604e-8a31-7c2e-9b1d-3f5e7a9c0b12';
export const SESSION_B = '0195658f-1d04-7a6b-8c3e-5d7f9b1a2c34';
export const SESSION_C = '01956fd5-3e77-7d10-a2b4-6c8e0f2a4b56';
const SPEND_INT = /"(input|output|reasoning|cacheRead|cacheCreation|costPicoUsd)":(-?\d+)/g;
function spendOf(v) {
    const o = v;
    const big = (k) => BigInt(o[k]);
    return {
        input: big('input'),
        output: big('output'),
        reasoning: big('reasoning'),
        cacheRead: big('cacheRead'),
        cacheCreation: big('cacheCreation'),
        costPicoUsd: big('costPicoUsd'),
        unpriced: o.unpriced === true,
    };
}
function toEvent(line) {
    const body = line.event;
    const state = body.state;
    const usage = state?.usage;
    return {
        ...body,
        seq: line.seq,
        at: body.at ?? line.at,
        state: state === undefined
            ? undefined
            : {
                model: state.model,
                usage: usage === undefined ? undefined : { turn: spendOf(usage.turn), session: spendOf(usage.session) },
            },
    };
}
function readJournal(file) {
    const lines = readFileSync(file, 'utf8').split('\n');
    let sessionId = '';
    let incarnation = '';
    let torn = false;
    let omitted = 0;
    let gaps = 0;
    const events = [];
    for (let i = 0; i < lines.length; i++) {
        const text = lines[i] ?? '';
        if (text === '')
            continue;
        let line;
        try {
            line = JSON.parse(text.replace(SPEND_INT, '"$1":"$2"'));
        }
        catch (err) {
            // Only the last line may be torn (a live file flushed mid-line).
            assert.equal(i, lines.length - 1, `${file}:${i + 1}: unreadable line before the end: ${String(err)}`);
            torn = true;
            break;
        }
        switch (line.type) {
            case 'header':
                incarnation = line.incarnation;
                break;
            case 'diag':
                if (line.kind === 'craze_session')
                    sessionId = line.fields.crazeSessionId;
                break;
            case 'gap':
                gaps++;
                break;
            case 'event':
                if (line.event === undefined)
                    omitted++;
                else
                    events.push(toEvent(line));
                break;
            default:
                break;
        }
    }
    assert.notEqual(sessionId, '', `${file}: no craze_session diag`);
    assert.notEqual(incarnation, '', `${file}: no header`);
    return { file, sessionId, incarnation, events, torn, omitted, gaps };
}
/** Every journal of the corpus, in file order. */
export function corpus() {
    const root = `${CRAZE_FIXTURES}journal/`;
    const out = [];
    for (const slug of readdirSync(root).sort()) {
        for (const name of readdirSync(`${root}${slug}`).sort()) {
            assert.match(name, /^\d{8}T\d{6}Z_[0-9a-f-]{36}\.jsonl$/, name);
            const j = readJournal(`${root}${slug}/${name}`);
            assert.ok(name.endsWith(`_${j.incarnation}.jsonl`), `${name}: header names incarnation ${j.incarnation}`);
            out.push(j);
        }
    }
    return out;
}
export function expectedSessions() {
    return JSON.parse(readFileSync(`${CRAZE_FIXTURES}expected.json`, 'utf8')).sessions;
}
// ---------------------------------------------------------------------------
// Hand-written scripts.
/** A Spend of a cost (and input tokens), everything else zero. */
export function sp(cost, input = 0n, unpriced = false) {
    return { input, output: 0n, reasoning: 0n, cacheRead: 0n, cacheCreation: 0n, costPicoUsd: cost, unpriced };
}
/** A tiny event builder; seq assigned in order. */
export function script() {
    const events = [];
    const push = (e) => {
        events.push({ ...e, seq: events.length + 1 });
    };
    return {
        events,
        push,
        turn: (id) => push({ type: 'turn', turn: { id, phase: 'started' } }),
        ended: (id, extra = {}) => push({ type: 'turn', turn: { id, phase: 'ended', stopReason: 'end_turn', ...extra } }),
        foreign: (running) => push({ type: 'foreign_turn', foreignTurn: { id: 'ft', reason: 'subagent_wake', running } }),
        report: (turn, session, extra = {}) => push({ type: 'meta', state: { usage: { turn, session } }, ...extra }),
    };
}
//# sourceMappingURL=craze-events.js.map