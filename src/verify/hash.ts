/**
 * The loop runtime's link hash (DESIGN.md §1):
 * SHA-256(prevHash ‖ LoopID ‖ Seq ‖ Time ‖ Kind ‖ Payload), where Seq is 8
 * bytes big-endian by default, or decimal ASCII for producers that hashed it
 * as text, and every other part is the bytes exactly as they arrived.
 */
import { createHash } from 'node:crypto';

export type SeqEncoding = 'binary' | 'decimal';

export const ZERO_HASH: Buffer = Buffer.alloc(32);

export interface Link {
  readonly loopId: string;
  readonly seq: number;
  readonly timeText: string;
  readonly kind: string;
  readonly payload: Buffer;
}

/**
 * LoopID ‖ Seq ‖ Time ‖ Kind are written into one reused buffer and hashed
 * with a single update(): six small updates cost more than the SHA-256 of a
 * 1 KB payload (bench/verify-inprocess.ts). update() copies what it is given
 * before it returns, so reusing the buffer is safe.
 */
let scratch = Buffer.alloc(1024);

export function linkHash(prevHash: Buffer, link: Link, encoding: SeqEncoding): Buffer {
  const bound = (link.loopId.length + link.timeText.length + link.kind.length) * 3 + 24;
  if (bound > scratch.length) scratch = Buffer.alloc(bound * 2);
  let off = scratch.write(link.loopId, 0, 'utf8');
  if (encoding === 'decimal') {
    off += scratch.write(String(link.seq), off, 'latin1');
  } else {
    // seq <= 2^53 - 1 (decode checks), so two 32-bit halves are exact.
    scratch.writeUInt32BE(Math.floor(link.seq / 0x1_0000_0000), off);
    scratch.writeUInt32BE(link.seq >>> 0, off + 4);
    off += 8;
  }
  off += scratch.write(link.timeText, off, 'utf8');
  off += scratch.write(link.kind, off, 'utf8');
  return createHash('sha256').update(prevHash).update(scratch.subarray(0, off)).update(link.payload).digest();
}
