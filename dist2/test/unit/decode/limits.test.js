/**
 * What the decoders refuse so that ClickHouse can store every row (issue 9):
 * ids over MAX_ID_BYTES of UTF-8 (they key chains and incarnations and are
 * read back in IN lists), and reasons that quote the record are made
 * storable (bounded, no lone surrogate). Never an exception.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { decodeCrazeRecord } from '../../../src/decode/craze.js';
import { decodeEnvelope, DEFAULT_DECODE_OPTIONS } from '../../../src/decode/envelope.js';
import { MAX_ID_BYTES, MAX_REASON_LENGTH } from '../../../src/decode/result.js';
const honest = JSON.parse(readFileSync(fileURLToPath(new URL('../../../../test/fixtures/envelopes/honest.jsonl', import.meta.url)), 'utf8').split('\n')[0]);
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Ids of exactly `bytes` UTF-8 bytes, spelt with characters of 1, 2, 3 and 4 bytes. */
function idsOf(bytes) {
    const fill = (char) => {
        const size = Buffer.byteLength(char);
        return char.repeat(Math.floor(bytes / size)) + 'a'.repeat(bytes % size);
    };
    const ids = ['a', 'é', '€', '😀'].map(fill);
    for (const id of ids)
        assert.equal(Buffer.byteLength(id), bytes);
    return ids;
}
const envelope = (loopId) => decodeEnvelope(Buffer.from(JSON.stringify({ ...honest, LoopID: loopId })), DEFAULT_DECODE_OPTIONS);
const craze = (sessionId, incarnation) => decodeCrazeRecord(Buffer.from(JSON.stringify({ sessionId, incarnation, seq: 1, event: { type: 'text', text: 'hi' } })));
test('the id cap is 1 KiB, documented as a constant', () => {
    assert.equal(MAX_ID_BYTES, 1024);
});
test('a LoopID of MAX_ID_BYTES bytes is accepted, one byte more is malformed with the field and its length', () => {
    for (const id of idsOf(MAX_ID_BYTES))
        assert.ok(envelope(id).ok, `${id.length} UTF-16 units`);
    for (const id of idsOf(MAX_ID_BYTES + 1)) {
        const d = envelope(id);
        assert.equal(d.ok, false);
        assert.equal(d.ok ? '' : d.reason, 'LoopID is 1025 bytes long (UTF-8); at most 1024 are accepted');
    }
    // Multibyte characters count by their bytes: 342 euro signs are 1026 bytes in 342 characters.
    const euros = envelope('€'.repeat(342));
    assert.match(euros.ok ? '' : euros.reason, /^LoopID is 1026 bytes long/);
    // A 300,000-character LoopID (finding 2) is one clean refusal.
    const huge = envelope('x'.repeat(300_000));
    assert.match(huge.ok ? '' : huge.reason, /^LoopID is 300000 bytes long/);
});
test('a craze sessionId or incarnation over MAX_ID_BYTES bytes is malformed, naming which', () => {
    for (const id of idsOf(MAX_ID_BYTES)) {
        assert.ok(craze(id, 'inc').ok);
        assert.ok(craze('s', id).ok);
        assert.ok(craze(id, id).ok);
    }
    for (const id of idsOf(MAX_ID_BYTES + 1)) {
        const session = craze(id, 'inc');
        assert.equal(session.ok ? '' : session.reason, 'sessionId is 1025 bytes long (UTF-8); at most 1024 are accepted');
        const incarnation = craze('s', id);
        assert.equal(incarnation.ok ? '' : incarnation.reason, 'incarnation is 1025 bytes long (UTF-8); at most 1024 are accepted');
    }
});
test('a reason quoting the record is bounded and holds no lone surrogate', () => {
    // V8 quotes the text around a JSON error and cuts it inside a surrogate pair:
    // the reason once carried '\ud83d' alone, and its row failed every insert.
    for (const value of ['😀}', '😀😀😀😀😀😀😀😀😀😀😀😀', '[1,x😀😀😀😀😀😀😀😀😀😀]']) {
        const d = decodeEnvelope(Buffer.from(value), DEFAULT_DECODE_OPTIONS);
        assert.equal(d.ok, false);
        const reason = d.ok ? '' : d.reason;
        assert.match(reason, /^record value is not JSON/);
        assert.doesNotMatch(reason, LONE_SURROGATE, JSON.stringify(reason));
    }
    // A seq of a million digits is quoted in the reason: cut, with its length.
    const digits = '9'.repeat(1_000_000);
    const d = decodeCrazeRecord(Buffer.from(`{"sessionId":"s","incarnation":"i","seq":0.${digits},"event":{"type":"text"}}`));
    const reason = d.ok ? '' : d.reason;
    assert.match(reason, /^seq: 0\.999/);
    assert.ok(reason.length <= MAX_REASON_LENGTH + 40, `${reason.length} characters`);
    assert.match(reason, /… \(\d{7} characters\)$/);
});
test('arrays nested 200,000 deep beside a \\u escape are decoded without overflowing the stack', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const env = decodeEnvelope(Buffer.from(JSON.stringify({ ...honest, LoopID: 'loop\u00e9' }).replace('{', `{"x":${deep},"y":"\\u0041",`)), DEFAULT_DECODE_OPTIONS);
    assert.ok(env.ok, env.ok ? '' : env.reason);
    const lone = decodeCrazeRecord(Buffer.from(`{"sessionId":"s","incarnation":"i","seq":1,"event":{"type":"text","x":${deep},"text":"\\ud800"}}`));
    assert.equal(lone.ok, false);
    assert.match(lone.ok ? '' : lone.reason, /lone UTF-16 surrogate/);
});
//# sourceMappingURL=limits.test.js.map