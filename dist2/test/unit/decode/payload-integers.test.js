/**
 * Integers of loop-runtime payloads (src/decode/payloads.ts) read through the
 * one exact reader (src/money/int64-text.ts): every spelling JSON allows, each
 * accepted or refused as before that reader was shared.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodePayload } from '../../../src/decode/payloads.js';
function read(kind, text) {
    const d = decodePayload(kind, text, JSON.parse(text));
    if (!d.ok)
        return d.reason;
    return Object.fromEntries(Object.entries(d.value).filter(([k]) => k !== 'kind'));
}
test('plain digits are exact across int64 and uint64, and refused beyond', () => {
    assert.deepEqual(read('IterationStarted', '{"iteration":9223372036854775807}'), { iteration: 9223372036854775807n });
    assert.deepEqual(read('IterationStarted', '{"iteration":-9223372036854775808}'), { iteration: -9223372036854775808n });
    assert.equal(read('IterationStarted', '{"iteration":9223372036854775808}'), 'IterationStarted payload: iteration: 9223372036854775808 does not fit int64');
    assert.deepEqual(read('SnapshotTaken', '{"seq":18446744073709551615}'), { seq: 18446744073709551615n, state_hash: '' });
    assert.equal(read('SnapshotTaken', '{"seq":18446744073709551616}'), 'SnapshotTaken payload: seq: 18446744073709551616 does not fit uint64');
    assert.equal(read('IterationStarted', `{"iteration":1${'0'.repeat(60)}}`), `IterationStarted payload: iteration: 1${'0'.repeat(60)} does not fit int64`);
    assert.deepEqual(read('IterationStarted', '{"iteration":-0}'), { iteration: 0n });
});
test('absent reads as zero, and so does a null usage', () => {
    assert.deepEqual(read('IterationStarted', '{}'), { iteration: 0n });
    const usage = read('ModelCalled', '{"usage":null}');
    assert.deepEqual(usage.usage, { in: 0n, out: 0n, cost_usd: { text: '0', pico: 0n } });
});
test('another spelling of an integer is accepted up to 2^53 - 1, where a float could not have rounded it', () => {
    assert.deepEqual(read('IterationStarted', '{"iteration":1e3}'), { iteration: 1000n });
    assert.deepEqual(read('IterationStarted', '{"iteration":5.0}'), { iteration: 5n });
    assert.deepEqual(read('IterationStarted', '{"iteration":-12.5e1}'), { iteration: -125n });
    assert.deepEqual(read('IterationStarted', '{"iteration":9007199254740991.0}'), { iteration: 9007199254740991n });
    for (const text of ['9007199254740992.0', '1e18', '-1e18', '12345678901234567890e-1']) {
        assert.equal(read('IterationStarted', `{"iteration":${text}}`), `IterationStarted payload: iteration: ${text} is not an exact integer`, text);
    }
    // Inside `usage` too.
    const usage = read('ModelCalled', '{"usage":{"in":2e3,"out":9007199254740993,"cost_usd":1e-7}}');
    assert.deepEqual(usage.usage, { in: 2000n, out: 9007199254740993n, cost_usd: { text: '1e-7', pico: 100000n } });
    assert.equal(read('ModelCalled', '{"usage":{"in":1e20}}'), 'ModelCalled payload: usage.in: 1e20 is not an exact integer');
});
test('a number that is not an integer is refused, even where a float would round it to one', () => {
    assert.match(String(read('IterationStarted', '{"iteration":1.5}')), /expected an integer/);
    // JSON.parse reads these as 1 and 0; their text says otherwise.
    assert.equal(read('IterationStarted', '{"iteration":1.0000000000000000001}'), 'IterationStarted payload: iteration: 1.0000000000000000001 is not an exact integer');
    assert.equal(read('IterationStarted', '{"iteration":1e-400}'), 'IterationStarted payload: iteration: 1e-400 is not an exact integer');
});
//# sourceMappingURL=payload-integers.test.js.map