import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeEnvelope, isCanonicalBase64, recordSchema } from '../../../src/decode/envelope.js';
import { linkHash, ZERO_HASH } from '../../../src/verify/hash.js';
const payload = '{"iteration":3}';
const good = {
    LoopID: 'loop-a',
    Seq: 1,
    Time: '2026-11-30T10:00:00.123456789Z',
    Kind: 'IterationStarted',
    Payload: Buffer.from(payload).toString('base64'),
    Hash: Array.from(linkHash(ZERO_HASH, { loopId: 'loop-a', seq: 1, timeText: '2026-11-30T10:00:00.123456789Z', kind: 'IterationStarted', payload: Buffer.from(payload) }, 'binary')),
};
const rec = (over) => Buffer.from(JSON.stringify({ ...good, ...over }));
test('the Go encoding and the tolerated variants decode to the same envelope', () => {
    const go = decodeEnvelope(rec({}));
    const variant = decodeEnvelope(rec({ Hash: Buffer.from(good.Hash).toString('hex'), Payload: payload }));
    assert.ok(go.ok && variant.ok);
    assert.ok(go.value.payload.equals(variant.value.payload));
    assert.ok(go.value.hash.equals(variant.value.hash));
    assert.equal(go.value.kindClass, 'IterationStarted');
    assert.equal(go.value.body?.kind === 'IterationStarted' && go.value.body.iteration, 3n);
    assert.equal(go.value.time.nanos, 123456789);
});
test('kinds classify ignoring case and separators; unknown kinds are kept', () => {
    const snake = decodeEnvelope(rec({ Kind: 'iteration_started' }));
    assert.ok(snake.ok);
    assert.equal(snake.value.kindClass, 'IterationStarted');
    assert.equal(snake.value.kind, 'iteration_started');
    const unknown = decodeEnvelope(rec({ Kind: 'SomethingNew' }));
    assert.ok(unknown.ok);
    assert.equal(unknown.value.kindClass, undefined);
    assert.equal(unknown.value.body, undefined);
});
test('omitted omitempty fields read as zero; unknown members are ignored', () => {
    const p = '{"action_type":"model","extra":{"x":1}}';
    const d = decodeEnvelope(rec({ Kind: 'BudgetCharged', Payload: p }));
    assert.ok(d.ok);
    assert.ok(d.value.body?.kind === 'BudgetCharged');
    assert.equal(d.value.body.tokens, 0n);
    assert.equal(d.value.body.usd.pico, 0n);
    assert.equal(d.value.body.action_type, 'model');
});
test('json.RawMessage members keep the producer text', () => {
    const p = '{"outcome_kind":"Completed","result":{"b":1.50,"a":"\\u003c"},"total_spend":{"usd":1e-7}}';
    const d = decodeEnvelope(rec({ Kind: 'LoopFinished', Payload: p }));
    assert.ok(d.ok && d.value.body?.kind === 'LoopFinished');
    assert.equal(d.value.body.result, '{"b":1.50,"a":"\\u003c"}');
    assert.equal(d.value.body.total_spend, '{"usd":1e-7}');
});
const malformedCases = [
    ['empty', Buffer.alloc(0), /empty/],
    ['null value (tombstone)', null, /empty/],
    ['not JSON', Buffer.from('hello'), /not JSON/],
    ['a JSON array', Buffer.from('[1,2]'), /expected object, received array/],
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), /UTF-8/],
    ['LoopID a number', rec({ LoopID: 7 }), /LoopID/],
    ['empty LoopID', rec({ LoopID: '' }), /LoopID/],
    ['Seq 0', rec({ Seq: 0 }), /Seq must be >= 1/],
    ['Seq negative', rec({ Seq: -3 }), /Seq must be >= 1/],
    ['Seq fractional', rec({ Seq: 1.5 }), /Seq/],
    ['Seq as string', rec({ Seq: '1' }), /Seq/],
    ['Seq beyond 2^53', Buffer.from(JSON.stringify(good).replace('"Seq":1', '"Seq":9007199254740993')), /2\^53/],
    // JSON.parse reads these as the integer 1; Go writes a uint64 as digits, and a float is no Seq.
    ['Seq 1.0000000000000001', Buffer.from(JSON.stringify(good).replace('"Seq":1', '"Seq":1.0000000000000001')), /Seq "1\.0000000000000001" is not a whole number written in digits/],
    ['Seq 1.0', Buffer.from(JSON.stringify(good).replace('"Seq":1', '"Seq":1.0')), /Seq "1\.0" is not a whole number/],
    ['Seq 1e0', Buffer.from(JSON.stringify(good).replace('"Seq":1', '"Seq":1e0')), /Seq "1e0" is not a whole number/],
    ['Seq 10E-1', Buffer.from(JSON.stringify(good).replace('"Seq":1', '"Seq":10E-1')), /Seq "10E-1" is not a whole number/],
    ['Seq 1.0 hidden behind an escaped name', Buffer.from(JSON.stringify(good).replace('"Seq":1', '"S\\u0065q":1.0')), /Seq "1\.0" is not a whole number/],
    ['Seq 1.0 repeated after a good one', Buffer.from(JSON.stringify(good).replace('"Seq":1', '"Seq":1,"Seq":1.0')), /Seq "1\.0" is not a whole number/],
    ['Time not RFC 3339', rec({ Time: '30/11/2026' }), /RFC 3339/],
    ['Time impossible date', rec({ Time: '2026-02-30T00:00:00Z' }), /RFC 3339/],
    ['Kind missing', rec({ Kind: undefined }), /Kind/],
    ['bad base64', rec({ Payload: 'eyJ!!!' }), /base64/],
    ['base64 of non-JSON', rec({ Payload: Buffer.from('nope').toString('base64') }), /payload is not JSON/],
    ['payload invalid UTF-8', rec({ Payload: Buffer.from([0x22, 0xc3, 0x28, 0x22]).toString('base64') }), /UTF-8/],
    ['hash of 31 bytes', rec({ Hash: good.Hash.slice(1) }), /Hash/],
    ['hash byte 256', rec({ Hash: [...good.Hash.slice(1), 256] }), /Hash/],
    ['hash hex too short', rec({ Hash: 'abcd' }), /Hash/],
    ['payload of the wrong type for its kind', rec({ Payload: '{"iteration":"three"}' }), /iteration/],
    ['USD that is not a number', rec({ Kind: 'BudgetCharged', Payload: '{"usd":"1.5"}' }), /usd/],
    ['an int64 out of range', rec({ Kind: 'BudgetCharged', Payload: '{"tokens":9223372036854775808}' }), /int64/],
    ['10 MB payload', rec({ Payload: '{"x":"' + 'a'.repeat(10 * 1024 * 1024) + '"}', Kind: 'Unknown' }), /larger than/],
];
for (const [name, value, reason] of malformedCases) {
    test(`malformed: ${name}`, () => {
        const d = decodeEnvelope(value);
        assert.equal(d.ok, false);
        if (!d.ok)
            assert.match(d.reason, reason);
    });
}
test('isCanonicalBase64 says what encoding again would: every length, padding, spare bits, other alphabets, junk', () => {
    let seed = 12345;
    const rand = (n) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ !\n\t.';
    const texts = ['', '=', '==', '====', 'QQ==', 'QR==', 'QUI=', 'QUJ=', 'QUJD', 'Q===', 'QQ=A', 'Q Q==', 'QQ', '-_-_', 'QUJD\n'];
    for (let len = 0; len < 40; len++) {
        const bytes = Buffer.alloc(len);
        for (let i = 0; i < len; i++)
            bytes[i] = rand(256);
        const canonical = bytes.toString('base64');
        texts.push(canonical, canonical.replace(/=+$/, ''), bytes.toString('base64url'));
        for (let k = 0; k < 6 && canonical.length > 0; k++) {
            const at = rand(canonical.length);
            texts.push(canonical.slice(0, at) + alphabet[rand(alphabet.length)] + canonical.slice(at + 1));
            texts.push(canonical.slice(0, at) + canonical.slice(at + 1));
        }
    }
    for (const text of texts) {
        const decoded = Buffer.from(text, 'base64');
        assert.equal(isCanonicalBase64(text, decoded), decoded.toString('base64') === text, JSON.stringify(text));
    }
});
test('records checked by hand on the hot path get the decoding zod would give them, and every refusal its reason', () => {
    const variants = [
        {},
        { LoopID: 'x'.repeat(300) },
        { Seq: Number.MAX_SAFE_INTEGER },
        { Seq: 2 ** 53 },
        { Seq: 1e300 },
        { Seq: true },
        { Seq: null },
        { Time: 5 },
        { Kind: '' },
        { Kind: 7 },
        { Payload: null },
        { Payload: payload },
        { Hash: Buffer.from(good.Hash).toString('hex').toUpperCase() },
        { Hash: [...good.Hash.slice(1), 1.5] },
        { Hash: [...good.Hash.slice(1), '1'] },
        { Hash: {} },
        { LoopID: undefined },
        { extra: { nested: [1, 2] } },
    ];
    for (const over of variants) {
        const d = decodeEnvelope(rec(over));
        const viaZod = recordSchemaReason(over);
        if (viaZod === undefined)
            assert.ok(d.ok || !/^(LoopID|Seq|Time|Kind|Payload|Hash):/.test(d.reason), JSON.stringify(over));
        else
            assert.deepEqual(d, { ok: false, reason: viaZod }, JSON.stringify(over));
    }
});
/** The reason recordSchema gives a record (undefined when it takes it), as decodeEnvelope words it. */
function recordSchemaReason(over) {
    const checked = recordSchema.safeParse(JSON.parse(JSON.stringify({ ...good, ...over })));
    if (checked.success)
        return undefined;
    const issue = checked.error.issues[0];
    return `${issue?.path.length ? `${issue.path.join('.')}: ` : ''}${issue?.message ?? 'not an Envelope'}`;
}
//# sourceMappingURL=envelope.test.js.map