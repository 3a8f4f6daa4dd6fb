/**
 * Chain state held in memory: every loop's head and every version seen, for
 * `agentledger verify` over files. The consumer keeps the same state in
 * ClickHouse instead (sink/clickhouse/chain-state.ts).
 */
import type { Envelope } from '../decode/envelope.js';
import { verifyLink, type ChainHead, type StoredVersion, type Verification } from './chain.js';
import type { SeqEncoding } from './hash.js';

export class MemoryChains {
  private readonly heads = new Map<string, ChainHead>();
  private readonly versions = new Map<string, Map<number, StoredVersion>>();

  constructor(private readonly seqEncoding: SeqEncoding) {}

  get loopCount(): number {
    return this.versions.size;
  }

  verify(env: Envelope): Verification {
    let seen = this.versions.get(env.loopId);
    if (!seen) {
      seen = new Map();
      this.versions.set(env.loopId, seen);
    }
    const result = verifyLink(this.heads.get(env.loopId), env, seen.get(env.seq), this.seqEncoding);
    if (result.head) this.heads.set(env.loopId, result.head);
    // The first version of a seq is the one kept; a fork is evidence, not the chain.
    if (!seen.has(env.seq) && result.verdict !== 'fork') {
      seen.set(env.seq, { hash: env.hash, timeText: env.timeText, kind: env.kind, payload: env.payload });
    }
    return result;
  }
}
