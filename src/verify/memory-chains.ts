/**
 * Chain state held in memory: every loop's head and every version seen, for
 * `agentledger verify` over files and for the CPU benchmark. The consumer
 * keeps the same state in ClickHouse instead (sink/clickhouse/envelope-store.ts);
 * both answer the pipeline's ChainPort (pipeline/ports.ts): heads() and versions().
 */
import type { Envelope } from '../decode/envelope.js';
import { verifyLink, type ChainHead, type StoredVersion, type Verification } from './chain.js';
import type { SeqEncoding } from './hash.js';
import { versionKey } from '../sink/clickhouse/rows.js';

export class MemoryChains {
  private readonly headByLoop = new Map<string, ChainHead>();
  private readonly versionsByLoop = new Map<string, Map<number, StoredVersion>>();

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

  /** ChainPort: the first version seen of each (loop, seq), keyed by versionKey(). */
  versions(keys: readonly (readonly [string, number])[]): Promise<Map<string, StoredVersion>> {
    const found = new Map<string, StoredVersion>();
    for (const [loopId, seq] of keys) {
      const version = this.versionsByLoop.get(loopId)?.get(seq);
      if (version) found.set(versionKey(loopId, seq), version);
    }
    return Promise.resolve(found);
  }

  verify(env: Envelope): Verification {
    let seen = this.versionsByLoop.get(env.loopId);
    if (!seen) {
      seen = new Map();
      this.versionsByLoop.set(env.loopId, seen);
    }
    const result = verifyLink(this.headByLoop.get(env.loopId), env, seen.get(env.seq), this.seqEncoding);
    if (result.head) this.headByLoop.set(env.loopId, result.head);
    // The first version of a seq is the one kept; a fork is evidence, not the chain.
    if (!seen.has(env.seq) && result.verdict !== 'fork') {
      seen.set(env.seq, { hash: env.hash, timeText: env.timeText, kind: env.kind, payload: env.payload });
    }
    return result;
  }
}
