/**
 * What a stream has judged but not yet seen durable, one layer per buffer:
 * oldest first, the last taking what is judged now, the sealed ones being
 * flushed (ingest judges the next batches while the previous buffer's insert
 * is in flight). A stream consults every layer exactly as it consults the
 * store, so its verdicts do not depend on when a flush lands.
 *
 * Layers are numbered: seal() returns the number of the buffer it closes,
 * durable(upTo) marks that buffer and every one before it durable, and
 * settle() drops the durable layers, handing each to `fold`. settle() runs
 * when the next batch starts, never in the middle of one: a flush may land
 * while a batch waits for its read-backs, and that batch must not see a
 * layer leave after it read the store without its rows. Numbers go on
 * across reset(), so a flush of the old generation that ends later marks
 * nothing of the new one durable.
 */
export class PendingLayers {
    make;
    /** The layers, oldest first, and the number of the buffer of each. */
    values;
    generations;
    /** The newest buffer known durable, not yet settled. */
    durableUpTo = -1;
    constructor(make) {
        this.make = make;
        this.values = [make()];
        this.generations = [0];
    }
    /** The layer that takes what is judged now. */
    get current() {
        return this.values[this.values.length - 1];
    }
    /** Every layer, oldest first (no copy: read it, keep it no longer than the call). */
    get all() {
        return this.values;
    }
    /** The number of the buffer that takes what is judged now (what seal() will return). */
    get number() {
        return this.newest();
    }
    /** Whether buffer `n` is still held: judged, and not yet both durable and settled. */
    holds(n) {
        return n >= this.generations[0];
    }
    /** What was judged so far forms a buffer of its own: returns its number. */
    seal() {
        const sealed = this.newest();
        this.values.push(this.make());
        this.generations.push(sealed + 1);
        return sealed;
    }
    /** Buffer `upTo` and every one before it (all, when omitted) are durable: dropped at the next settle(). */
    durable(upTo = Infinity) {
        this.durableUpTo = Math.max(this.durableUpTo, Math.min(upTo, this.newest()));
    }
    /** Drops the layers durable() marked, oldest first, handing each to `fold`; a batch starts with it. */
    settle(fold) {
        const next = this.newest() + 1;
        while (this.values.length > 0 && this.generations[0] <= this.durableUpTo) {
            this.generations.shift();
            const value = this.values.shift();
            fold?.(value);
        }
        if (this.values.length === 0)
            this.restart(next);
    }
    /** A rebalance: every layer is dropped with its buffer. */
    reset() {
        this.restart(this.newest() + 1);
    }
    restart(generation) {
        this.values = [this.make()];
        this.generations = [generation];
    }
    newest() {
        return this.generations[this.generations.length - 1];
    }
}
//# sourceMappingURL=pending-layers.js.map