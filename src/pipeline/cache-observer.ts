/**
 * What a bounded cache of durable per-key state reports: ingest wires it to
 * Prometheus (observability/metrics.ts), tests and benchmarks count with
 * CacheCounts. The pipeline itself stays free of metrics code.
 */
export interface CacheObserver {
  /** `n` keys found in memory. */
  hit(n: number): void;
  /** `n` keys not in memory: read back from the store. */
  miss(n: number): void;
  /** `n` entries evicted to stay within the budget. */
  evicted(n: number): void;
  /** The cache holds `n` entries now. */
  size(n: number): void;
}

export const NO_CACHE_OBSERVER: CacheObserver = { hit: () => undefined, miss: () => undefined, evicted: () => undefined, size: () => undefined };

/** A CacheObserver that adds up what it is told. */
export class CacheCounts implements CacheObserver {
  hits = 0;
  misses = 0;
  evictions = 0;
  entries = 0;
  hit(n: number): void {
    this.hits += n;
  }
  miss(n: number): void {
    this.misses += n;
  }
  evicted(n: number): void {
    this.evictions += n;
  }
  size(n: number): void {
    this.entries = n;
  }
}
