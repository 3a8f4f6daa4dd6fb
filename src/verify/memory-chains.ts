/**
 * Chain state held in memory: every loop's head and every version seen, for
 * `agentledger verify` over files and for the CPU benchmark. It verifies
 * envelopes one by one in the order given, which makes it the reference the
 * consumer must agree with whatever its batches and flushes. The consumer keeps
 * the same state in ClickHouse (store/envelope-store.ts); both answer
 * the pipeline's ChainPort (pipeline/ports.ts): heads() and versions().
 */
import type { Envelope } from '../decode/envelope.js';
import { verifyLink, type ChainHead, type StoredVersion, type Verification } from './chain.js';
import type { SeqEncoding } from './hash.js';

export class MemoryChains {
  private readonly headByLoop = new Map<string, ChainHead>();
  /** Per loop and seq, every version that was not a redelivery, first seen first. */
  private readonly versionsByLoop = new Map<string, Map<number, StoredVersion[]>>();

  constructor(private readonly seqEncoding: SeqEncoding) {}

  get loopCount(): number {
    return this.versionsByLoop.size;
  }

  /** ChainPort: the heads of the given loops that have one. */
  heads(loopIds: readonly string[]): Promise<Map<string, ChainHead>> {
    const found = new Map<string, ChainHead>();
    for (const loopId of loopIds) {
      const head = this.headByLoop.get(loopId);
      if (head) found.set(loopId, head);
    }
    return Promise.resolve(found);
  }

  /** ChainPort: every version of each (loop, seq), first seen first. */
  versions(keys: readonly (readonly [string, number])[]): Promise<(StoredVersion & { loopId: string; seq: number })[]> {
    const found: (StoredVersion & { loopId: string; seq: number })[] = [];
    for (const [loopId, seq] of keys) {
      for (const v of this.versionsByLoop.get(loopId)?.get(seq) ?? []) found.push({ ...v, loopId, seq });
    }
    return Promise.resolve(found);
  }

  verify(env: Envelope): Verification {
    let bySeq = this.versionsByLoop.get(env.loopId);
    if (!bySeq) this.versionsByLoop.set(env.loopId, (bySeq = new Map<number, StoredVersion[]>()));
    const versions = bySeq.get(env.seq);
    const result = verifyLink(this.headByLoop.get(env.loopId), env, versions ?? [], this.seqEncoding);
    if (result.head) this.headByLoop.set(env.loopId, result.head);
    // Every version but a redelivery is kept: a fork redelivered is a duplicate of it.
    if (result.verdict !== 'duplicate') {
      // A copy of the four fields only: every version stays for the whole run,
      // and the envelope would keep its parsed payload alive with it.
      const version = { hash: env.hash, timeText: env.timeText, kind: env.kind, payload: env.payload };
      if (versions) versions.push(version);
      else bySeq.set(env.seq, [version]);
    }
    return result;
  }
}
