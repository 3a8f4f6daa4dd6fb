/**
 * One Kafka batch of envelope records -> rows for the envelopes table and
 * dead letters. Decoding and verification are the pure stages; this module
 * feeds them the chain state (durable, from the store behind a cache, and
 * pending, judged since the last flush) and keeps it in step with the rows it
 * returns.
 */
import { loopFacts } from '../account/loop-facts.js';
import { foldFacts, NO_SLOTS } from '../rows/envelope-facts.js';
import { decodeEnvelope } from '../decode/envelope.js';
import { clampDetail, outsideDateTime, toClickHouseDateTime } from '../decode/time.js';
import { isViolation, verifyLink } from '../verify/chain.js';
import { malformedColumns, UNSTAMPED } from './malformed.js';
import { NO_CACHE_OBSERVER } from './cache-observer.js';
import { HeadCache, loopHead } from './head-cache.js';
import { PendingLayers } from './pending-layers.js';
import { batchBuilder } from './stream.js';
const versionKey = (loopId, seq) => `${loopId}\u0000${seq}`;
/**
 * The chain state envelopes are judged against: what is durable (the store,
 * behind a bounded cache of heads) plus what this process judged since its
 * last flush (pending: never evicted, consulted exactly like stored rows).
 * With both, a verdict is a pure function of (durable state, the partition's
 * records in offset order) — never of batch boundaries, flush timing or cache
 * size — so two members that judge the same records store identical rows.
 */
export class ChainState {
    store;
    observer;
    durable;
    /** What rows not yet durable say, one layer per buffer. */
    layers = new PendingLayers(() => ({ heads: new Map(), versions: new Map() }));
    /** `cacheLimit`: durable heads kept in memory (HeadCache); `observer` hears its hits, misses and evictions. */
    constructor(store, cacheLimit, observer = NO_CACHE_OBSERVER) {
        this.store = store;
        this.observer = observer;
        this.durable = new HeadCache(cacheLimit, observer);
    }
    /** The rows judged so far form a buffer of their own: returns its number, for flushed(). */
    seal() {
        return this.layers.seal();
    }
    /**
     * The rows of buffer `upTo` and every one before it (all judged rows when
     * omitted) are durable now, their derived writes (loop_heads) done: their
     * heads join the cache, their versions are the store's. Not before the
     * derived writes: the store reads heads from loop_heads alone, so a head
     * let go of earlier (evicted from the cache) would be read back old.
     * Called when a flush lands, which may be while a batch is being judged
     * (its read-backs in flight): the layers are folded only when the next
     * batch starts (settle), so no batch sees a buffer's versions leave the
     * pending state after it read the store without them.
     */
    flushed(upTo = Infinity) {
        this.layers.durable(upTo);
    }
    /** Folds the layers flushed() marked durable into the cache; a batch starts with it. */
    settle() {
        this.layers.settle((layer) => {
            for (const [loopId, head] of layer.heads)
                this.durable.set(loopId, head);
        });
        this.observer.size(this.durable.size);
    }
    /** A rebalance: what was pending was dropped with the buffer, and the store may have moved. */
    reset() {
        this.durable.clear();
        this.layers.reset();
    }
    /** A loop's head as the rows not yet durable left it (the newest layer that moved it), if any did. */
    pendingHead(loopId) {
        const layers = this.layers.all;
        for (let i = layers.length - 1; i >= 0; i--) {
            const head = layers[i].heads.get(loopId);
            if (head !== undefined)
                return head;
        }
        return undefined;
    }
    /**
     * The heads of the given loops as a map of this batch's own (a cache
     * smaller than one batch cannot drop any): pending, else cached, else read
     * from the store in one query.
     */
    async heads(loopIds) {
        const heads = new Map();
        const unknown = [];
        let hits = 0;
        for (const loopId of loopIds) {
            if (heads.has(loopId))
                continue;
            const pending = this.pendingHead(loopId);
            if (pending !== undefined) {
                heads.set(loopId, pending);
                continue;
            }
            const cached = this.durable.get(loopId);
            if (cached === undefined)
                unknown.push(loopId);
            else
                hits++;
            heads.set(loopId, cached ?? undefined);
        }
        if (hits > 0)
            this.observer.hit(hits);
        if (unknown.length > 0) {
            this.observer.miss(unknown.length);
            const loaded = await this.store.heads(unknown);
            for (const loopId of unknown) {
                const stored = loaded.get(loopId);
                const head = stored ? loopHead(stored) : null;
                this.durable.set(loopId, head);
                heads.set(loopId, head ?? undefined);
            }
            this.observer.size(this.durable.size);
        }
        return heads;
    }
    /** Versions of (loop, seq) in rows not yet durable, in offset order. */
    pending(loopId, seq) {
        let found;
        for (const layer of this.layers.all) {
            const versions = layer.versions.get(loopId)?.get(seq);
            if (versions !== undefined)
                found = found === undefined ? versions : [...found, ...versions];
        }
        return found;
    }
    /** Records a judged envelope as pending: the loop's head after it, and (unless dropped as a redelivery) its version. */
    judged(env, result, head) {
        const layer = this.layers.current;
        if (head && head !== this.pendingHead(env.loopId))
            layer.heads.set(env.loopId, head);
        if (result.verdict === 'duplicate')
            return;
        let bySeq = layer.versions.get(env.loopId);
        if (!bySeq)
            layer.versions.set(env.loopId, (bySeq = new Map()));
        // The version holds what a later copy is compared with, no more: the
        // envelope itself (its decoded payload, times, text) would live on with
        // it until the buffer is durable, which the garbage collector pays for.
        const version = { hash: env.hash, timeText: env.timeText, kind: env.kind, payload: env.payload };
        const list = bySeq.get(env.seq);
        if (list)
            list.push(version);
        else
            bySeq.set(env.seq, [version]);
    }
}
/**
 * Judges a batch of one partition's records against `state` and moves it:
 * their rows (ingested_at left to the flush, which sets one for all the rows
 * of an insert), dead letters and verdict counts.
 */
export async function processEnvelopeBatch(records, state, options) {
    state.settle();
    const decoded = records.map((r) => {
        const d = decodeEnvelope(r.value, options);
        return d.ok ? d.value : d.reason;
    });
    const loopIds = [];
    for (const d of decoded)
        if (typeof d !== 'string')
            loopIds.push(d.loopId);
    const heads = await state.heads(loopIds);
    // Stored versions of seqs at or below their loop's head as the batch
    // starts (a redelivery, a fork or a late arrival), in one query. The store
    // holds nothing above that head: only head-moving rows reach past it.
    const lookups = new Map();
    for (const d of decoded) {
        if (typeof d !== 'string' && d.seq <= (heads.get(d.loopId)?.seq ?? 0))
            lookups.set(versionKey(d.loopId, d.seq), [d.loopId, d.seq]);
    }
    const stored = new Map();
    if (lookups.size > 0) {
        for (const v of await state.store.versions([...lookups.values()])) {
            const key = versionKey(v.loopId, v.seq);
            const list = stored.get(key);
            if (list)
                list.push(v);
            else
                stored.set(key, [v]);
        }
    }
    const { batch, count, refuse } = batchBuilder(malformedEnvelopeRow);
    decoded.forEach((d, i) => {
        const record = records[i];
        if (typeof d === 'string') {
            refuse(record, d);
            return;
        }
        const head = heads.get(d.loopId);
        let versions = NO_VERSIONS;
        if (head !== undefined && d.seq <= head.seq) {
            // Durable versions first (they were stored first), then pending ones.
            const durable = stored.get(versionKey(d.loopId, d.seq)) ?? NO_VERSIONS;
            const pending = state.pending(d.loopId, d.seq) ?? NO_VERSIONS;
            versions = pending.length === 0 ? durable : durable.length === 0 ? pending : [...durable, ...pending];
        }
        const result = verifyLink(head, d, versions, options.seqEncoding);
        count(result.verdict);
        let next = head;
        if (result.head !== head && result.head !== undefined) {
            // A head verifyLink has just made is this batch's own: annotate it in place, no copy per envelope.
            next = result.head;
            next.partition = record.partition;
        }
        heads.set(d.loopId, next);
        state.judged(d, result, next);
        // A redelivery is dropped: the first copy is stored already, or pending.
        if (result.verdict === 'duplicate')
            return;
        const first = versions[0];
        const keyNote = keyMismatch(record, d.loopId);
        if (keyNote !== '')
            count(KEY_MISMATCH);
        // Every verdict carries its facts (a fork's or a mismatch's cost is
        // reported apart as unverified): the ledger's SQL decides what counts.
        // Stored folded into the slots its kind uses (rows/envelope-facts.ts).
        const f = foldFacts(d.kindClass ?? '', loopFacts(d));
        // One literal with every column: spreading the facts into it (or it into
        // them) made V8 add the properties one by one, a third of the batch path.
        batch.rows.push({
            loop_id: d.loopId,
            seq: d.seq,
            time: toClickHouseDateTime(d.time),
            time_text: d.timeText,
            kind: d.kind,
            kind_class: d.kindClass ?? '',
            hash: d.hash.toString('hex'),
            computed_hash: result.computedHash?.toString('hex') ?? '',
            payload: d.payloadText,
            verdict: result.verdict,
            detail: withNote(withClamp(withMove(result, head, record), d), keyNote),
            evidence: result.verdict === 'fork' && first
                ? JSON.stringify({ stored: { hash: first.hash.toString('hex'), time: first.timeText, kind: first.kind, payload: first.payload.toString('utf8') } })
                : '',
            s1: f.s1,
            s2: f.s2,
            s3: f.s3,
            s4: f.s4,
            s5: f.s5,
            s6: f.s6,
            n1: f.n1,
            n2: f.n2,
            n3: f.n3,
            n4: f.n4,
            kafka_topic: record.topic,
            kafka_partition: record.partition,
            kafka_offset: record.offset,
            ingested_at: UNSTAMPED,
        });
    });
    return batch;
}
const NO_VERSIONS = [];
/** The envelopes row of a record that is not an envelope (or that the store refused). */
function malformedEnvelopeRow(record, reason) {
    const { key, evidence, ...columns } = malformedColumns(record, reason);
    return {
        ...columns,
        loop_id: key,
        seq: 0,
        time_text: '',
        kind: '',
        kind_class: '',
        hash: '',
        computed_hash: '',
        payload: evidence,
        evidence: '',
        ...NO_SLOTS,
    };
}
/**
 * A violation's detail, plus the likely cause when the loop's head came from
 * another Kafka partition: its key moved, which adding partitions to a live
 * topic does (docs/ingestion.md, "Growing a topic").
 */
function withMove(result, head, record) {
    if (head?.partition === undefined || head.partition === record.partition || !isViolation(result.verdict))
        return result.detail;
    return `${result.detail}; loop seen in partition ${head.partition} before, now in ${record.partition}: its key moved between partitions (were partitions added to a live topic?)`;
}
/** A verdict's detail, plus a note when the Time does not fit a DateTime and is stored clamped. */
function withClamp(detail, env) {
    return outsideDateTime(env.time) ? withNote(detail, clampDetail('Time', env.timeText, env.time)) : detail;
}
const withNote = (detail, note) => (note === '' ? detail : detail === '' ? note : `${detail}; ${note}`);
/**
 * The entry of StreamBatch.verdicts that counts stored envelopes whose Kafka
 * key is not their LoopID (not a verdict: each is also counted by its own).
 */
export const KEY_MISMATCH = 'key_mismatch';
let keyScratch = Buffer.alloc(1024);
/** Characters of a wrong key quoted in the note. */
const KEY_QUOTE = 64;
/**
 * The note for a record whose Kafka key is not its LoopID ('' when it is).
 * Producers key by LoopID so that a loop stays in one partition, in order; a
 * null or other key (a producer bug) lets the default partitioner spread the
 * loop over partitions, and its chain then shows false gaps and regressions.
 * The verdict is still judged by LoopID: the note says why it may be wrong.
 * Compared as bytes, as the partitioner hashes them.
 */
function keyMismatch(record, loopId) {
    const { key } = record;
    if (key !== null && key.length === Buffer.byteLength(loopId, 'utf8')) {
        // Compared in a reused buffer: no copy of the LoopID per record.
        if (key.length > keyScratch.length)
            keyScratch = Buffer.alloc(key.length * 2);
        const n = keyScratch.write(loopId, 0, 'utf8');
        if (key.compare(keyScratch, 0, n) === 0)
            return '';
    }
    return `Kafka key ${key === null ? 'is null' : `${quoteKey(key)} is not the LoopID`}: the producer must key records by LoopID, or a loop is split across partitions and its verdicts may be false`;
}
/** A key's first KEY_QUOTE characters as a JSON string (control characters escaped), and its size. */
function quoteKey(key) {
    // Cut by code points: a cut surrogate pair would leave a lone surrogate, which ClickHouse refuses.
    const chars = [...key.subarray(0, 4 * KEY_QUOTE).toString('utf8')];
    return `${JSON.stringify(chars.slice(0, KEY_QUOTE).join(''))}${chars.length > KEY_QUOTE || key.length > 4 * KEY_QUOTE ? '…' : ''} (${key.length} bytes)`;
}
/** The loop runtime's envelopes topic as a Stream of the ingest loop. */
export class EnvelopeStream {
    topic;
    store;
    options;
    name = 'envelopes';
    state;
    /**
     * `headCacheLoops`: how many durable heads the state keeps in memory
     * (DEFAULT_HEAD_CACHE_ENTRIES when omitted); `observer` hears the cache's
     * hits, misses and evictions.
     */
    constructor(topic, store, options, headCacheLoops, observer) {
        this.topic = topic;
        this.store = store;
        this.options = options;
        this.state = new ChainState(store, headCacheLoops, observer);
    }
    process(records) {
        return processEnvelopeBatch(records, this.state, this.options);
    }
    quarantine(record, reason) {
        return { row: malformedEnvelopeRow(record, reason), deadLetter: { record, reason } };
    }
    seal() {
        return this.state.seal();
    }
    durable(upTo) {
        this.state.flushed(upTo);
    }
    reset() {
        this.state.reset();
    }
}
//# sourceMappingURL=envelopes.js.map