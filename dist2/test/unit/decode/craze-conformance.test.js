/**
 * The craze codec decoder (src/decode/craze.ts) against craze's published JSON
 * Schema of one event (schema/craze-event.schema.json, a verbatim copy of
 * shared/seeds/craze-event.schema.json), run through ajv: one corpus, and the
 * two must agree on every item but the documented tolerances
 * (test/fixtures/craze/conformance.json, `tolerance`):
 *  - additionalProperties: unknown keys, which the schema rejects and the
 *    decoder ignores (docs/input-contracts.md §2);
 *  - unknownType: an event type the schema's enum does not list, kept by the
 *    decoder as `known: false`;
 *  - slashRow: state.slash rows read row by row, as the schema's own
 *    description tells a decoder to;
 *  - catalogDropped: a state.catalog the schema refuses is dropped alone, so
 *    the usage report the same state delta may carry is not lost with it;
 *  - range: integers the schema leaves unbounded that the decoder holds to
 *    int64 (money, tokens) or to 2^53 (counters read as numbers).
 * Then the record decoder's own cases: int64 exactness, seq, tolerance.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { CRAZE_EVENT_TYPES } from '../../../src/decode/craze-event.js';
import { decodeCrazeEvent, decodeCrazeRecord } from '../../../src/decode/craze.js';
import { objectMembers } from '../../../src/decode/json-spans.js';
import { exactIntegerText } from '../../../src/money/int64-text.js';
const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const SCHEMA_PATH = `${REPO}schema/craze-event.schema.json`;
const CORPUS_PATH = `${REPO}test/fixtures/craze/conformance.json`;
/** RFC 3339 §5.6 date-time, written independently of src/decode/time.ts. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;
function isDateTime(s) {
    const m = DATE_TIME.exec(s);
    if (!m)
        return false;
    const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number);
    const days = [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    const offOk = m[7] === undefined || (Number(m[7]) <= 23 && Number(m[8]) <= 59);
    return mo >= 1 && mo <= 12 && d >= 1 && d <= (days[mo - 1] ?? 0) && h <= 23 && mi <= 59 && se <= 60 && offOk;
}
/** The exact text of each element of a top-level JSON array (ints beyond 2^53 must reach the decoder as written). */
function arrayElementTexts(text) {
    const out = [];
    let depth = 0;
    let start = -1;
    for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (c === '"') {
            for (i++; text[i] !== '"'; i++)
                if (text[i] === '\\')
                    i++;
            continue;
        }
        if (c === '{' || c === '[') {
            if (depth === 1)
                start = i;
            depth++;
        }
        else if (c === '}' || c === ']') {
            depth--;
            if (depth === 1)
                out.push(text.slice(start, i + 1));
        }
    }
    return out;
}
function loadSchema() {
    return JSON.parse(readFileSync(SCHEMA_PATH, 'utf8'));
}
function makeValidator() {
    const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
    ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
    return ajv.compile(loadSchema());
}
const record = (eventText, extra = '') => Buffer.from(`{"sessionId":"sess-1","incarnation":"inc-1","seq":1,"event":${eventText}${extra}}`);
const fmt = (errors) => (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.keyword} ${e.message ?? ''}`).join('; ');
test('ajv and the zod decoder agree on the conformance corpus, tolerances aside', () => {
    const validate = makeValidator();
    const text = readFileSync(CORPUS_PATH, 'utf8');
    const items = JSON.parse(text);
    const texts = arrayElementTexts(text);
    assert.equal(texts.length, items.length);
    assert.ok(items.length >= 40, `the corpus has ${items.length} items`);
    const seenValidTypes = new Set();
    const counts = {};
    for (const [i, item] of items.entries()) {
        const eventText = objectMembers(texts[i] ?? '').get('event');
        assert.ok(eventText !== undefined, `${item.name}: no event text`);
        const schemaValid = validate(item.event);
        const errors = validate.errors ?? [];
        const decoded = decodeCrazeRecord(record(eventText));
        const reason = decoded.ok ? 'accepted' : decoded.reason;
        const label = `${item.name}: ajv [${fmt(errors)}], decoder [${reason}]`;
        assert.equal(schemaValid, item.valid, `${label}: the schema's verdict is not the corpus's`);
        counts[item.tolerance ?? (item.valid ? 'valid' : 'invalid')] = (counts[item.tolerance ?? (item.valid ? 'valid' : 'invalid')] ?? 0) + 1;
        switch (item.tolerance) {
            case undefined:
                assert.equal(decoded.ok, schemaValid, `${label}: they disagree`);
                if (decoded.ok)
                    seenValidTypes.add(decoded.value.event.type);
                break;
            case 'additionalProperties':
                assert.ok(!schemaValid && errors.length > 0, label);
                assert.ok(errors.every((e) => e.keyword === 'additionalProperties'), `${label}: ajv fails it for more than unknown keys`);
                assert.ok(decoded.ok, `${label}: unknown keys must be ignored`);
                break;
            case 'unknownType':
                assert.ok(!schemaValid && errors.some((e) => e.keyword === 'enum' && e.instancePath === '/type'), label);
                assert.ok(errors.every((e) => (e.keyword === 'enum' && e.instancePath === '/type') || e.keyword === 'additionalProperties'), `${label}: ajv fails it for more than its type and unknown keys`);
                assert.ok(decoded.ok && !decoded.value.event.known, `${label}: an unknown type must be kept`);
                break;
            case 'slashRow':
                assert.ok(!schemaValid && errors.every((e) => e.instancePath.startsWith('/state/slash')), `${label}: not only slash rows`);
                assert.ok(decoded.ok, `${label}: a bad slash row is dropped alone`);
                break;
            case 'catalogDropped':
                assert.ok(!schemaValid && errors.every((e) => e.instancePath.startsWith('/state/catalog')), `${label}: not only the catalog`);
                assert.ok(decoded.ok && decoded.value.event.state?.catalog === undefined, `${label}: the event is kept, its catalog dropped`);
                break;
            case 'range':
                assert.ok(schemaValid, label);
                assert.ok(!decoded.ok && /int64|2\^53/.test(decoded.reason), `${label}: the decoder must refuse an inexact integer`);
                break;
        }
    }
    for (const type of CRAZE_EVENT_TYPES)
        assert.ok(seenValidTypes.has(type), `no valid corpus item of type ${type}`);
    assert.ok((counts.invalid ?? 0) >= 20, 'too few invalid items');
    for (const tol of ['additionalProperties', 'unknownType', 'slashRow', 'range', 'catalogDropped'])
        assert.ok((counts[tol] ?? 0) >= 1, `no ${tol} item`);
});
// --- the record decoder ------------------------------------------------------------
const spend = (cost, extra = '') => `{"input":1,"output":2,"reasoning":1,"cacheRead":3,"cacheCreation":4,"costPicoUsd":${cost},"unpriced":false${extra}}`;
const meta = (turnCost, sessionCost, ctx = '100') => `{"type":"meta","state":{"usage":{"contextTokens":${ctx},"contextWindow":200000,"turn":${spend(turnCost)},"session":${spend(sessionCost)}}}}`;
function decodeOk(value) {
    const d = decodeCrazeRecord(value);
    assert.ok(d.ok, d.ok ? '' : d.reason);
    return d.value;
}
function decodeBad(value, reason) {
    const d = decodeCrazeRecord(value);
    assert.ok(!d.ok, 'expected malformed');
    assert.match(d.reason, reason);
}
test('costPicoUsd is exact across the whole int64 range', () => {
    const r = decodeOk(record(meta('9007199254740993', '9223372036854775807')));
    const usage = r.event.state?.usage;
    assert.ok(usage);
    assert.equal(usage.turn.costPicoUsd, 9007199254740993n);
    assert.equal(usage.session.costPicoUsd, 9223372036854775807n);
    assert.equal(usage.session.cacheCreation, 4n);
    assert.equal(usage.turn.unpriced, false);
    assert.equal(usage.contextWindow, 200000n);
    const min = decodeOk(record(meta('-9223372036854775808', '0', '1.2e4')));
    assert.equal(min.event.state?.usage?.turn.costPicoUsd, -9223372036854775808n);
    assert.equal(min.event.state?.usage?.contextTokens, 12000n);
});
test('an int64 out of range or not an integer is malformed', () => {
    decodeBad(record(meta('9223372036854775808', '0')), /costPicoUsd: beyond the int64 range/);
    decodeBad(record(meta('0', '-9223372036854775809')), /session\.costPicoUsd: beyond the int64 range/);
    decodeBad(record(meta('1e19', '0')), /int64/);
    decodeBad(record(meta('1e999', '0')), /costPicoUsd/);
    decodeBad(record(meta('1.5', '0')), /costPicoUsd: expected an integer/);
    decodeBad(record(meta('"5"', '0')), /costPicoUsd: expected an integer/);
    decodeBad(record(meta('0', '0', '99999999999999999999')), /contextTokens: beyond the int64 range/);
});
test('exactIntegerText reads integers from any JSON number spelling', () => {
    assert.equal(exactIntegerText('9007199254740993'), 9007199254740993n);
    assert.equal(exactIntegerText('-0'), 0n);
    assert.equal(exactIntegerText('5.000'), 5n);
    assert.equal(exactIntegerText('12.5e1'), 125n);
    assert.equal(exactIntegerText('1500e-2'), 15n);
    assert.equal(exactIntegerText('0e99999'), 0n);
    assert.equal(exactIntegerText('1.25e1'), undefined);
    assert.equal(exactIntegerText('abc'), undefined);
    assert.ok((exactIntegerText('1e99999999') ?? 0n) > 2n ** 63n);
});
test('seq must be an exact integer from 1 to 2^53 - 1', () => {
    const ev = '{"type":"done"}';
    const withSeq = (seq) => Buffer.from(`{"sessionId":"s","incarnation":"i","seq":${seq},"event":${ev}}`);
    assert.equal(decodeOk(withSeq('9007199254740991')).seq, 9007199254740991);
    assert.equal(decodeOk(withSeq('3')).seq, 3);
    decodeBad(withSeq('0'), /seq: 0 must be >= 1/);
    decodeBad(withSeq('-4'), /seq/);
    decodeBad(withSeq('"1"'), /seq: expected a number/);
    decodeBad(withSeq('9007199254740993'), /seq: 9007199254740993 is beyond 2\^53 - 1/);
    decodeBad(withSeq('1.5'), /seq: 1.5 is not an integer/);
    decodeBad(Buffer.from(`{"sessionId":"s","incarnation":"i","event":${ev}}`), /seq/);
});
test('the record envelope: ids, event, unreadable values', () => {
    decodeBad(null, /empty/);
    decodeBad(Buffer.alloc(0), /empty/);
    decodeBad(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), /not valid UTF-8/);
    decodeBad(Buffer.from('{"sessionId":'), /not JSON/);
    decodeBad(Buffer.from('[1,2]'), /not a JSON object/);
    decodeBad(Buffer.from('{"sessionId":"","incarnation":"i","seq":1,"event":{"type":"done"}}'), /sessionId: is empty/);
    decodeBad(Buffer.from('{"incarnation":"i","seq":1,"event":{"type":"done"}}'), /sessionId/);
    decodeBad(Buffer.from('{"sessionId":"s","incarnation":7,"seq":1,"event":{"type":"done"}}'), /incarnation: expected a string/);
    decodeBad(Buffer.from('{"sessionId":"s","incarnation":"i","seq":1}'), /event is missing/);
    decodeBad(Buffer.from('{"sessionId":"s","incarnation":"i","seq":1,"event":"done"}'), /event is not a JSON object/);
    decodeBad(record('{"text":"x"}'), /event\.type is missing/);
    decodeBad(record('{"type":""}'), /event\.type is empty/);
    decodeBad(record('{"type":"error","err":{"message":"m","class":"other"}}'), /event\.err\.code/);
    decodeBad(record(meta('0', '0').replace('"contextWindow":200000,', '')), /event\.state\.usage\.contextWindow: is missing/);
    decodeBad(record('{"type":"queue","queuePos":-1}'), /event\.queuePos: must be >= 0/);
    decodeBad(record('{"type":"queue","queuePos":9007199254740993}'), /event\.queuePos: beyond 2\^53/);
    decodeBad(record('{"type":"subagent","subagent":{"startedAt":"2026-05-01"}}'), /event\.subagent\.startedAt: not an RFC 3339/);
    decodeBad(Buffer.from('{"sessionId":"s","incarnation":"i","seq":1,"event":{"type":"done"},"journal":"x"}'), /journal/);
});
test('the decoder never throws, whatever the bytes', () => {
    const good = record(meta('9007199254740993', '42'), ',"journal":{"cwd":"/r"}');
    for (let cut = 0; cut <= good.length; cut++)
        decodeCrazeRecord(good.subarray(0, cut));
    let seed = 7;
    for (let n = 0; n < 500; n++) {
        const bytes = Buffer.from(good);
        for (let k = 0; k < 3; k++) {
            seed = (seed * 1103515245 + 12345) & 0x7fffffff;
            bytes[seed % bytes.length] = seed & 0xff;
        }
        decodeCrazeRecord(bytes);
    }
});
test('an unknown event type is kept, with the known fields that parse', () => {
    const r = decodeOk(record('{"type":"hologram","text":"hi","agent":"sa-1","replayed":true,"tool":"not an object","newKey":{"a":1}}'));
    assert.equal(r.event.type, 'hologram');
    assert.equal(r.event.known, false);
    assert.equal(r.event.text, 'hi');
    assert.equal(r.event.agent, 'sa-1');
    assert.equal(r.event.replayed, true);
    assert.equal(r.event.tool, undefined);
    assert.deepEqual(r.event.todos, []);
    const known = decodeOk(record('{"type":"turn"}'));
    assert.equal(known.event.known, true);
});
test('unknown keys are ignored at every level; the journal object and the event text are kept', () => {
    const eventText = '{"type":"tool","tool":{"id":"t1","output":{"exitCode":137,"signal":"KILL"},"sandbox":1},"future":[1,2]}';
    const r = decodeOk(Buffer.from(`{"sessionId":"s","incarnation":"i","seq":2,"event":${eventText},"journal":{"cwd":"/repo","provider":"claude","crazeVersion":"0.9.1","file":"a.jsonl","more":1},"shippedAt":"x"}`));
    assert.equal(r.eventText, eventText);
    assert.equal(r.event.tool?.output?.exitCode, 137);
    assert.ok(!('signal' in (r.event.tool?.output ?? {})));
    assert.ok(!('future' in r.event));
    assert.deepEqual(r.journal, { cwd: '/repo', provider: 'claude', crazeVersion: '0.9.1', file: 'a.jsonl' });
    assert.equal(decodeOk(record('{"type":"done"}')).journal, undefined);
    const partial = decodeOk(record('{"type":"done"}', ',"journal":{}'));
    assert.deepEqual(partial.journal, { cwd: '', provider: '', crazeVersion: '', file: '' });
    const spendExtra = `{"type":"meta","state":{"usage":{"contextTokens":1,"contextWindow":2,"turn":${spend('9007199254740993', ',"cacheWrite1h":5')},"session":${spend('1')}}}}`;
    assert.equal(decodeOk(record(spendExtra)).event.state?.usage?.turn.costPicoUsd, 9007199254740993n);
});
test('a present empty object is not an absent one', () => {
    const present = decodeOk(record('{"type":"tool","tool":{"id":"t","task":{},"output":{"exitCode":0}}}')).event;
    const absent = decodeOk(record('{"type":"tool","tool":{"id":"t"}}')).event;
    assert.deepEqual(present.tool?.task, {
        description: '', prompt: '', model: '', agentId: '', subagentType: '', durationMs: 0, receipt: false, status: '', background: false,
    });
    assert.equal(present.tool?.output?.exitCode, 0);
    assert.equal(absent.tool?.task, undefined);
    assert.equal(absent.tool?.output, undefined);
    assert.equal(decodeOk(record('{"type":"tool","tool":{"output":{}}}')).event.tool?.output?.exitCode, undefined);
    const state = decodeOk(record('{"type":"meta","state":{"title":"","config":{},"slash":{}}}')).event.state;
    assert.ok(state);
    assert.equal(state.title, '');
    assert.equal(state.mode, undefined);
    assert.deepEqual(state.config, { options: [] });
    assert.equal(state.commands, undefined);
    assert.equal(decodeOk(record('{"type":"meta","state":{}}')).event.state?.slash, undefined);
    assert.deepEqual(state.slash, { items: [] });
    assert.equal(state.usage, undefined);
    const q = decodeOk(record('{"type":"question","question":{"answers":{"a":null,"b":[]}}}')).event.question;
    assert.deepEqual(q?.answers, { a: null, b: [] });
    assert.equal(decodeOk(record('{"type":"question","question":{}}')).event.question?.answers, undefined);
});
test('absent scalars and lists read as zero', () => {
    const e = decodeOk(record('{"type":"subagent","subagent":{"id":"sa"}}')).event;
    assert.equal(e.text, '');
    assert.equal(e.queuePos, 0);
    assert.equal(e.replayed, false);
    assert.equal(e.at, '');
    assert.deepEqual(e.todos, []);
    assert.equal(e.subagent?.tokensUsed, 0);
    assert.equal(e.subagent?.status, '');
    assert.deepEqual(e.subagent?.toolsUsed, []);
    const t = decodeOk(record('{"type":"turn","turn":{"id":"x","phase":"ended"},"compaction":{}}')).event;
    assert.equal(t.turn?.pending, 0);
    assert.equal(t.turn?.synthetic, false);
    assert.equal(t.turn?.errClass, '');
    assert.equal(t.compaction?.tokensAfter, 0);
});
test('open strings and slash rows', () => {
    const e = decodeOk(record('{"type":"error","err":{"message":"m","class":"brand_new_class","code":0}}')).event;
    assert.equal(e.err?.class, 'brand_new_class');
    const ft = decodeOk(record('{"type":"foreign_turn","foreignTurn":{"reason":"later_reason","running":true}}')).event;
    assert.equal(ft.foreignTurn?.reason, 'later_reason');
    const slash = decodeOk(record('{"type":"meta","state":{"slash":{"items":[{"description":"no name"},{"name":"two words"},{"name":"ok","run":{"kind":"prompt"}},{"name":"x","run":{}},"junk"]}}}')).event.state?.slash;
    assert.deepEqual(slash?.items.map((i) => i.name), ['ok']);
    assert.deepEqual(decodeOk(record('{"type":"meta","state":{"slash":"nope"}}')).event.state?.slash, { items: [] });
});
test('decodeCrazeEvent reads a bare event text the same way', () => {
    const d = decodeCrazeEvent(meta('9007199254740993', '1'));
    assert.ok(d.ok);
    assert.equal(d.value.state?.usage?.turn.costPicoUsd, 9007199254740993n);
    assert.ok(!decodeCrazeEvent('{').ok);
});
test('a catalog beyond the schema limits is dropped, the usage report beside it kept', () => {
    const models = Array.from({ length: 513 }, (_, i) => `{"id":"m${i}","name":"Model ${i}"}`).join(',');
    const text = meta('5', '7').replace('"state":{', `"state":{"catalog":{"models":[${models}],"revision":3},`);
    const r = decodeOk(record(text));
    assert.equal(r.event.state?.catalog, undefined);
    assert.equal(r.event.state?.usage?.session.costPicoUsd, 7n);
});
//# sourceMappingURL=craze-conformance.test.js.map