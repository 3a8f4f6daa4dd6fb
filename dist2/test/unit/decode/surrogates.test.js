/**
 * A lone surrogate (an unpaired \ud800-\udfff escape) in any decoded string
 * made every insert of its batch fail on ClickHouse 18.16 (Code 25), forever:
 * both decoders now refuse such a record as malformed, with a reason.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { decodeCrazeRecord } from '../../../src/decode/craze.js';
import { decodeEnvelope, DEFAULT_DECODE_OPTIONS } from '../../../src/decode/envelope.js';
const honest = readFileSync(fileURLToPath(new URL('../../../../test/fixtures/envelopes/honest.jsonl', import.meta.url)), 'utf8').split('\n')[0];
test('an envelope whose LoopID or Kind holds a lone surrogate is malformed, with a reason', () => {
    for (const [from, to] of [
        ['"LoopID":"loop-std-08"', '"LoopID":"loop\\ud800x"'],
        ['"LoopID":"loop-std-08"', '"LoopID":"loop\\udc00"'],
        ['"Kind":"LoopStarted"', '"Kind":"Loop\\udbffStarted"'],
    ]) {
        const d = decodeEnvelope(Buffer.from(honest.replace(from, to)), DEFAULT_DECODE_OPTIONS);
        assert.equal(d.ok, false, to);
        assert.match(d.ok ? '' : d.reason, /lone UTF-16 surrogate/);
    }
});
test('a paired surrogate, an escaped backslash before "ud800" and plain escapes are fine', () => {
    assert.ok(decodeEnvelope(Buffer.from(honest), DEFAULT_DECODE_OPTIONS).ok);
    const craze = (session) => Buffer.from(`{"sessionId":"${session}","incarnation":"i","seq":1,"event":{"type":"status"}}`);
    assert.ok(decodeCrazeRecord(craze('s\\ud83d\\ude00')).ok, 'a pair');
    assert.ok(decodeCrazeRecord(craze('s\\\\ud800')).ok, 'a backslash, then text');
    assert.ok(decodeCrazeRecord(craze('s\\u003c\\u2028')).ok, 'ordinary escapes');
    const lone = decodeCrazeRecord(craze('s\\ud800'));
    assert.equal(lone.ok, false);
    const inEvent = decodeCrazeRecord(Buffer.from('{"sessionId":"s","incarnation":"i","seq":1,"event":{"type":"meta","state":{"model":"m\\udfff"}}}'));
    assert.equal(inEvent.ok, false);
});
//# sourceMappingURL=surrogates.test.js.map