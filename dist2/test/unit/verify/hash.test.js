/**
 * linkHash, which writes the whole link into one reused buffer, against the
 * definition written out part by part (docs/input-contracts.md §1): every payload size
 * around the inline limit, both Seq encodings, ids that outgrow the buffer,
 * and calls in a row that must not see each other's bytes.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { linkHash } from '../../../src/verify/hash.js';
function reference(prev, link, encoding) {
    const seq = Buffer.alloc(8);
    seq.writeBigUInt64BE(BigInt(link.seq));
    return createHash('sha256')
        .update(prev)
        .update(link.loopId, 'utf8')
        .update(encoding === 'binary' ? seq : Buffer.from(String(link.seq), 'latin1'))
        .update(link.timeText, 'utf8')
        .update(link.kind, 'utf8')
        .update(link.payload)
        .digest();
}
test('linkHash is SHA-256(prev ‖ LoopID ‖ Seq ‖ Time ‖ Kind ‖ Payload) for every size and both encodings', () => {
    let prev = Buffer.alloc(32);
    for (const size of [0, 1, 1024, 4000, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 300_000, 10]) {
        for (const loopId of ['loop-a', 'ü'.repeat(3000), 'x']) {
            for (const encoding of ['binary', 'decimal']) {
                const link = { loopId, seq: 2 ** 53 - 1 - size, timeText: '2026-12-01T10:00:00.123456789Z', kind: 'ModelCalled', payload: Buffer.alloc(size, size % 251) };
                const got = linkHash(prev, link, encoding);
                assert.ok(got.equals(reference(prev, link, encoding)), `${size} bytes, ${loopId.length} chars, ${encoding}`);
                prev = got;
            }
        }
    }
});
//# sourceMappingURL=hash.test.js.map