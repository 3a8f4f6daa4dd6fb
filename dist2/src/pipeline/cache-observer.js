export const NO_CACHE_OBSERVER = { hit: () => undefined, miss: () => undefined, evicted: () => undefined, size: () => undefined };
/** A CacheObserver that adds up what it is told. */
export class CacheCounts {
    hits = 0;
    misses = 0;
    evictions = 0;
    entries = 0;
    hit(n) {
        this.hits += n;
    }
    miss(n) {
        this.misses += n;
    }
    evicted(n) {
        this.evictions += n;
    }
    size(n) {
        this.entries = n;
    }
}
//# sourceMappingURL=cache-observer.js.map