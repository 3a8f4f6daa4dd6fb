import { parseRfc3339 } from '../decode/time.js';
import { NO_CACHE_OBSERVER } from './cache-observer.js';
/** A stored head as the verifier's: its Time parsed (a stored head was decoded, so it parses). */
export function loopHead(stored) {
    const time = parseRfc3339(stored.timeText);
    return time ? { ...stored, time } : null;
}
/** ChainState's head cache budget when none is given (AGENTLEDGER_HEAD_CACHE_ENTRIES' default). */
export const DEFAULT_HEAD_CACHE_ENTRIES = 20_000;
const compact = (h) => ({
    seq: h.seq,
    hash: h.hash.toString('latin1'),
    computedHash: h.computedHash?.toString('latin1'),
    timeText: h.timeText,
    time: h.time,
    mismatched: h.mismatched,
    partition: h.partition,
});
const expand = (c) => ({
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
    limit;
    observer;
    heads = new Map();
    constructor(limit = DEFAULT_HEAD_CACHE_ENTRIES, observer = NO_CACHE_OBSERVER) {
        this.limit = limit;
        this.observer = observer;
        if (!Number.isSafeInteger(limit) || limit < 1)
            throw new RangeError(`a head cache holds at least 1 entry, got ${limit}`);
    }
    get size() {
        return this.heads.size;
    }
    /** A fresh copy of the cached head (the caller may keep it), marked most recently used. */
    get(loopId) {
        const cached = this.heads.get(loopId);
        if (cached === undefined)
            return undefined;
        this.heads.delete(loopId);
        this.heads.set(loopId, cached);
        return cached && expand(cached);
    }
    /** A durable head (or null: none stored) of a loop; evicts the least recently used beyond the limit. */
    set(loopId, head) {
        this.heads.delete(loopId);
        this.heads.set(loopId, head && compact(head));
        let evicted = 0;
        for (const oldest of this.heads.keys()) {
            if (this.heads.size <= this.limit)
                break;
            this.heads.delete(oldest);
            evicted++;
        }
        if (evicted > 0)
            this.observer.evicted(evicted);
    }
    clear() {
        this.heads.clear();
        this.observer.size(0);
    }
}
//# sourceMappingURL=head-cache.js.map