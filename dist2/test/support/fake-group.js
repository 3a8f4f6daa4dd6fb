/** The error kafkajs gives for an answer of the group coordinator (membershipError() reads its type). */
const coordinatorRefusal = (type) => Object.assign(new Error(`The coordinator refused this member (${type})`), { name: 'KafkaJSProtocolError', type, retriable: false });
const tpOf = (topic, partition) => `${topic}:${partition}`;
export class FakeBroker {
    /** Per "topic:partition", its records; a record's offset is its index. */
    logs = new Map();
    /** The group's committed offsets per "topic:partition". */
    committed = new Map();
    /** Every dead letter sent, by any member. */
    deadLetters = [];
    /** The group's generation: a member of another one has its commits refused. */
    generation = 0;
    produce(topic, partition, records) {
        const tp = tpOf(topic, partition);
        const log = this.logs.get(tp) ?? [];
        this.logs.set(tp, log);
        log.push(...records);
    }
    member(id) {
        return new FakeMember(this, id);
    }
    /**
     * A rebalance: every member named is told it started, then joins the new
     * generation with its partitions (fetching each from its committed
     * offset). A member not named is not told, and is expelled (a zombie).
     */
    rebalance(assignments) {
        this.generation++;
        for (const [member] of assignments)
            member.listener?.rebalancing();
        for (const [member, assignment] of assignments)
            member.join(this.generation, assignment);
    }
    /** The coordinator expels a member (its session timed out while it was paused): it is not told. */
    expel(member) {
        member.expelled = true;
        this.generation++;
    }
}
export class FakeMember {
    broker;
    id;
    listener;
    eachBatch;
    /** The generation this member last joined, and whether the coordinator expelled it since. */
    generation = -1;
    expelled = false;
    assignment = {};
    /** Next offset each owned partition is fetched from. */
    positions = new Map();
    /** Bumped by every seek and join of a partition: a batch fetched before is stale. */
    epochs = new Map();
    /** Every commit this member made that the coordinator accepted. */
    commits = [];
    /** Queries settled after a lost or failed answer. */
    settled = [];
    paused = false;
    constructor(broker, id) {
        this.broker = broker;
        this.id = id;
    }
    join(generation, assignment) {
        this.generation = generation;
        this.expelled = false;
        this.assignment = assignment;
        this.positions.clear();
        for (const [topic, partitions] of Object.entries(assignment)) {
            for (const partition of partitions) {
                const tp = tpOf(topic, partition);
                const committed = this.broker.committed.get(tp);
                this.positions.set(tp, committed ? Number(committed.offset) : 0);
                this.epochs.set(tp, (this.epochs.get(tp) ?? 0) + 1);
            }
        }
        this.listener?.joined(this.id, assignment);
    }
    /**
     * Fetches up to `max` records of a partition this member owns from its
     * position and hands them to eachBatch, as kafkajs's runner does: the
     * next fetch starts after the offset resolved, or where a seek put it.
     * Returns how many records were fetched, and what eachBatch threw (the
     * runner logs it and fetches again, or rejoins after a membership error).
     */
    async fetch(topic, partition, max) {
        const tp = tpOf(topic, partition);
        const from = this.positions.get(tp);
        const log = this.broker.logs.get(tp) ?? [];
        if (from === undefined || this.eachBatch === undefined || this.paused)
            return { fetched: 0 };
        const records = log.slice(from, from + max);
        if (records.length === 0)
            return { fetched: 0 };
        const epoch = this.epochs.get(tp);
        const stale = () => this.epochs.get(tp) !== epoch;
        let resolved;
        const messages = records.map((r, i) => ({ offset: String(from + i), timestamp: '1764504000000', key: r.key, value: r.value }));
        const payload = {
            batch: {
                topic,
                partition,
                highWatermark: String(log.length),
                messages,
                firstOffset: () => messages[0]?.offset ?? null,
                lastOffset: () => messages[messages.length - 1].offset,
            },
            resolveOffset: (offset) => {
                if (!stale())
                    resolved = Number(offset);
            },
            // kafkajs sends a heartbeat only once its interval has passed: most calls answer without asking the coordinator.
            heartbeat: () => Promise.resolve(),
            // Auto-commit is off: kafkajs's own commit never runs for ingest.
            commitOffsetsIfNecessary: () => Promise.resolve(),
            isRunning: () => true,
            isStale: stale,
        };
        let error;
        try {
            await this.eachBatch(payload);
        }
        catch (err) {
            error = err;
        }
        if (!stale() && resolved !== undefined)
            this.positions.set(tp, resolved + 1);
        return error === undefined ? { fetched: records.length } : { fetched: records.length, error };
    }
    ensureTopics() {
        return Promise.resolve();
    }
    connect() {
        return Promise.resolve();
    }
    listen(listener) {
        this.listener = listener;
    }
    run(_topics, eachBatch) {
        this.eachBatch = eachBatch;
        return Promise.resolve();
    }
    commit(positions) {
        if (this.expelled)
            return Promise.reject(coordinatorRefusal('UNKNOWN_MEMBER_ID'));
        if (this.generation !== this.broker.generation)
            return Promise.reject(coordinatorRefusal('ILLEGAL_GENERATION'));
        for (const p of positions)
            this.broker.committed.set(tpOf(p.topic, p.partition), { offset: p.offset, metadata: p.metadata ?? null });
        this.commits.push([...positions]);
        return Promise.resolve();
    }
    seek(topic, partition, offset) {
        const tp = tpOf(topic, partition);
        this.positions.set(tp, Number(offset));
        this.epochs.set(tp, (this.epochs.get(tp) ?? 0) + 1);
    }
    pause() {
        this.paused = true;
    }
    sendDeadLetters(letters) {
        this.broker.deadLetters.push(...letters);
        return Promise.resolve();
    }
    settle(queryId) {
        this.settled.push(queryId);
        return Promise.resolve();
    }
    committedOffsets(topic) {
        const found = new Map();
        for (const [tp, c] of this.broker.committed) {
            const at = tp.lastIndexOf(':');
            if (tp.slice(0, at) === topic)
                found.set(Number(tp.slice(at + 1)), { ...c });
        }
        return Promise.resolve(found);
    }
    uncommitted(topics, owned) {
        let waiting = 0n;
        for (const [tp, log] of this.broker.logs) {
            const at = tp.lastIndexOf(':');
            const topic = tp.slice(0, at);
            const partition = Number(tp.slice(at + 1));
            if (!topics.includes(topic) || (owned !== undefined && !owned[topic]?.includes(partition)))
                continue;
            waiting += BigInt(log.length - Number(this.broker.committed.get(tp)?.offset ?? 0));
        }
        return Promise.resolve(waiting);
    }
    disconnect() {
        return Promise.resolve();
    }
}
//# sourceMappingURL=fake-group.js.map