/**
 * The bounded cache of durable loop heads in front of the chain store
 * (ChainState, pipeline/envelopes.ts): least recently used out first, its
 * heads kept compact so that none holds decoding's memory alive.
 */
import type { ChainHead } from '../verify/chain.js';
import type { StoredHead } from '../rows/rows.js';
import { parseRfc3339 } from '../decode/time.js';
import { NO_CACHE_OBSERVER, type CacheObserver } from './cache-observer.js';

/** A loop's head, and the Kafka partition of the record that set it (when known). */
export type LoopHead = ChainHead & { readonly partition?: number };

/** A stored head as the verifier's: its Time parsed (a stored head was decoded, so it parses). */
export function loopHead(stored: StoredHead): LoopHead | null {
  const time = parseRfc3339(stored.timeText);
  return time ? { ...stored, time } : null;
}

/** ChainState's head cache budget when none is given (AGENTLEDGER_HEAD_CACHE_ENTRIES' default). */
export const DEFAULT_HEAD_CACHE_ENTRIES = 20_000;

/**
 * A cached head, compact: its hashes as 32-character latin1 strings. A head's
 * Buffers come from decoding (or from a read-back) and are slices of Node's
 * shared 8 KiB allocation pool: one kept alive keeps its whole slab (the
 * payloads decoded around it) alive. Cached as Buffers, 200,000 heads held
 * 234 MB of slabs (about 1.2 KB a loop, for good); as strings, 16 MB.
 */
interface CachedHead {
  readonly seq: number;
  readonly hash: string;
  readonly computedHash: string | undefined;
  readonly timeText: string;
  readonly time: ChainHead['time'];
  readonly mismatched: boolean;
  readonly partition: number | undefined;
}

const compact = (h: LoopHead): CachedHead => ({
  seq: h.seq,
  hash: h.hash.toString('latin1'),
  computedHash: h.computedHash?.toString('latin1'),
  timeText: h.timeText,
  time: h.time,
  mismatched: h.mismatched,
  partition: h.partition,
});

const expand = (c: CachedHead): LoopHead => ({
  seq: c.seq,
  hash: Buffer.from(c.hash, 'latin1'),
  computedHash: c.computedHash === undefined ? undefined : Buffer.from(c.computedHash, 'latin1'),
  timeText: c.timeText,
  time: c.time,
  mismatched: c.mismatched,
  ...(c.partition === undefined ? {} : { partition: c.partition }),
});

/**
 * Heads of loops whose rows are durable (their envelopes rows and their
 * loop_heads row written), at most `limit`, least recently used evicted
 * first. `null` caches "no envelope stored yet". Only durable heads are ever
 * put here (ChainState keeps the pending ones apart, never evicted), so an
 * evicted head is exactly what loop_heads gives back on the next miss.
 * Cleared on every rebalance: another consumer may have moved a loop's chain
 * while this one did not own its partition.
 */
export class HeadCache {
  private readonly heads = new Map<string, CachedHead | null>();
  constructor(
    readonly limit = DEFAULT_HEAD_CACHE_ENTRIES,
    private readonly observer: CacheObserver = NO_CACHE_OBSERVER,
  ) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`a head cache holds at least 1 entry, got ${limit}`);
  }
  get size(): number {
    return this.heads.size;
  }
  /** A fresh copy of the cached head (the caller may keep it), marked most recently used. */
  get(loopId: string): LoopHead | null | undefined {
    const cached = this.heads.get(loopId);
    if (cached === undefined) return undefined;
    this.heads.delete(loopId);
    this.heads.set(loopId, cached);
    return cached && expand(cached);
  }
  /** A durable head (or null: none stored) of a loop; evicts the least recently used beyond the limit. */
  set(loopId: string, head: LoopHead | null): void {
    this.heads.delete(loopId);
    this.heads.set(loopId, head && compact(head));
    let evicted = 0;
    for (const oldest of this.heads.keys()) {
      if (this.heads.size <= this.limit) break;
      this.heads.delete(oldest);
      evicted++;
    }
    if (evicted > 0) this.observer.evicted(evicted);
  }
  clear(): void {
    this.heads.clear();
    this.observer.size(0);
  }
}
