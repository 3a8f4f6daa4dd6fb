import { sinceOf } from './pending.js';
export class ReadBack {
    edges;
    log;
    /** The group's committed offsets and their metadata per topic, read once per generation. */
    committed = new Map();
    constructor(edges, log) {
        this.edges = edges;
        this.log = log;
    }
    /**
     * The position a partition resumes from: its offset is durable (the last
     * commit, made after its insert, or past it as far as the stored rows
     * reach), its metadata the commit's. The last commit dates the rows it
     * does not cover, so only recent parts are read.
     */
    async resume(stream, topic, partition) {
        const commit = (await this.committedOffsets(topic)).get(partition);
        const since = sinceOf(commit?.metadata);
        const stored = await stream.store.progress(stream.topic, partition, since);
        const committed = commit && Number(commit.offset) >= 0 ? BigInt(commit.offset) : 0n;
        // Rows past the commit: their writer may have died between its insert
        // and its derived writes. Made again now, before any head is read back
        // (heads are read from the derived table alone); all of them when the
        // derived table lost every row of the partition.
        if (await stream.store.derivedLost(stream.topic, partition)) {
            this.log.warn('the derived rows of this partition are all gone; writing them again from its stored rows', { stream: stream.name, topic, partition });
            await stream.store.rederive(stream.topic, partition, 0n, 0);
        }
        else if (stored > committed)
            await stream.store.rederive(stream.topic, partition, committed, since);
        const next = stored > committed ? stored : committed;
        return { topic, partition, offset: next.toString(), ...(commit?.metadata ? { metadata: commit.metadata } : {}) };
    }
    /** Forgets the commits read: a new generation reads them again. */
    clear() {
        this.committed.clear();
    }
    committedOffsets(topic) {
        let found = this.committed.get(topic);
        if (!found) {
            found = this.edges.committedOffsets(topic);
            // A failed read is retried by the next batch, not cached.
            found.catch(() => this.committed.delete(topic));
            this.committed.set(topic, found);
        }
        return found;
    }
}
//# sourceMappingURL=read-back.js.map