/**
 * The loop runtime's link hash (docs/input-contracts.md §1):
 * SHA-256(prevHash ‖ LoopID ‖ Seq ‖ Time ‖ Kind ‖ Payload), where Seq is 8
 * bytes big-endian by default, or decimal ASCII for producers that hashed it
 * as text, and every other part is the bytes exactly as they arrived.
 */
import { createHash } from 'node:crypto';
export const ZERO_HASH = Buffer.alloc(32);
/**
 * prevHash ‖ LoopID ‖ Seq ‖ Time ‖ Kind ‖ Payload are written into one reused
 * buffer and hashed with a single update(): each update() costs more than
 * copying a 1 KB payload (bench/verify-inprocess.ts). update() is done with
 * the buffer before it returns, so reusing it is safe.
 */
let scratch = Buffer.alloc(4096);
const INLINE_PAYLOAD = 64 * 1024;
export function linkHash(prevHash, link, encoding) {
    // A large payload (up to the decoder's limit) is hashed from where it is, not copied.
    const inline = link.payload.length <= INLINE_PAYLOAD;
    // UTF-8 takes at most 3 bytes per UTF-16 unit; Seq 8 bytes (binary) or up to 16 digits (decimal, below 2^53).
    const bound = prevHash.length + (link.loopId.length + link.timeText.length + link.kind.length) * 3 + 16 + (inline ? link.payload.length : 0);
    if (bound > scratch.length)
        scratch = Buffer.alloc(bound * 2);
    let off = prevHash.copy(scratch, 0);
    off += scratch.write(link.loopId, off, 'utf8');
    if (encoding === 'decimal') {
        off += scratch.write(String(link.seq), off, 'latin1');
    }
    else {
        // seq <= 2^53 - 1 (decode checks), so two 32-bit halves are exact.
        scratch.writeUInt32BE(Math.floor(link.seq / 0x1_0000_0000), off);
        scratch.writeUInt32BE(link.seq >>> 0, off + 4);
        off += 8;
    }
    off += scratch.write(link.timeText, off, 'utf8');
    off += scratch.write(link.kind, off, 'utf8');
    if (!inline)
        return createHash('sha256').update(scratch.subarray(0, off)).update(link.payload).digest();
    off += link.payload.copy(scratch, off);
    return createHash('sha256').update(scratch.subarray(0, off)).digest();
}
//# sourceMappingURL=hash.js.map