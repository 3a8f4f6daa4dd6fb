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

/** Reused: hash.update() copies what it is given before returning. */
const seqBuffer = Buffer.alloc(8);

function seqBytes(seq: number, encoding: SeqEncoding): Buffer | string {
  if (encoding === 'decimal') return String(seq);
  // seq <= 2^53 - 1 (decode checks), so two 32-bit halves are exact.
  seqBuffer.writeUInt32BE(Math.floor(seq / 0x1_0000_0000), 0);
  seqBuffer.writeUInt32BE(seq >>> 0, 4);
  return seqBuffer;
}

export function linkHash(prevHash: Buffer, link: Link, encoding: SeqEncoding): Buffer {
  return createHash('sha256')
    .update(prevHash)
    .update(link.loopId, 'utf8')
    .update(seqBytes(link.seq, encoding))
    .update(link.timeText, 'utf8')
    .update(link.kind, 'utf8')
    .update(link.payload)
    .digest();
}
