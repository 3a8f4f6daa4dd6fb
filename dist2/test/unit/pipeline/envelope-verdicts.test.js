/**
 * Verdicts are a pure function of (durable state, the partition's records in
 * offset order): the consumer's batches, flush timing, rebalances and cache
 * size must not change a single stored row. The reference is MemoryChains,
 * which judges the records one by one (it is what `agentledger verify` runs).
 * Each adversary here broke the consumer once (issue 8, findings 1 and 5).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { decodeEnvelope, DEFAULT_DECODE_OPTIONS } from '../../../src/decode/envelope.js';
import { CacheCounts } from '../../../src/pipeline/cache-observer.js';
import { ChainState, processEnvelopeBatch } from '../../../src/pipeline/envelopes.js';
import { HeadCache } from '../../../src/pipeline/head-cache.js';
import { MemoryChains } from '../../../src/verify/memory-chains.js';
import { MemoryEnvelopeTable } from '../../support/memory-tables.js';
const DIR = fileURLToPath(new URL('../../../../test/fixtures/envelopes/', import.meta.url));
const OPTIONS = { ...DEFAULT_DECODE_OPTIONS, seqEncoding: 'binary' };
const fixture = (file) => readFileSync(`${DIR}${file}`, 'utf8').split('\n').filter((l) => l.length > 0);
/** Keyed by LoopID, as producers must (a record without one gets no key). */
function loopKey(line) {
    const loopId = JSON.parse(line).LoopID;
    return typeof loopId === 'string' ? Buffer.from(loopId) : null;
}
const asRecords = (lines) => lines.map((line, i) => ({ topic: 'agent.envelopes', partition: 0, offset: String(i), timestamp: '1764504000000', key: loopKey(line), value: Buffer.from(line) }));
/** A seeded generator (xorshift32), so a failure names the seed that reproduces it. */
function random(seed) {
    let x = seed >>> 0 || 1;
    return () => {
        x ^= x << 13;
        x >>>= 0;
        x ^= x >>> 17;
        x ^= x << 5;
        x >>>= 0;
        return x / 2 ** 32;
    };
}
/** What the reference stores: every record that is not a redelivery, with its verdict. */
function reference(lines) {
    const chains = new MemoryChains('binary');
    const rows = [];
    lines.forEach((line, i) => {
        const d = decodeEnvelope(Buffer.from(line), OPTIONS);
        if (!d.ok)
            return void rows.push({ offset: String(i), verdict: 'malformed', detail: d.reason });
        const r = chains.verify(d.value);
        if (r.verdict !== 'duplicate')
            rows.push({ offset: String(i), verdict: r.verdict, detail: r.detail });
    });
    return rows;
}
/**
 * The ingest loop's discipline, driven by a random schedule: batches of random
 * size are judged and buffered; a flush inserts the buffer and marks it
 * durable; a rebalance drops the buffer and the state and resumes from the
 * table's progress, as a new owner would.
 */
async function consume(lines, rnd, cacheLimit) {
    const records = asRecords(lines);
    const table = new MemoryEnvelopeTable();
    const state = new ChainState(table, cacheLimit);
    let buffer = [];
    let next = 0;
    while (next < records.length) {
        const size = 1 + Math.floor(rnd() * 40);
        const out = await processEnvelopeBatch(records.slice(next, next + size), state, OPTIONS);
        buffer.push(...out.rows);
        next = Math.min(records.length, next + size);
        const dice = rnd();
        if (dice < 0.3 || next === records.length) {
            await table.insert(buffer);
            state.flushed();
            buffer = [];
        }
        else if (dice < 0.4) {
            buffer = [];
            state.reset();
            next = Number(await table.progress('agent.envelopes', 0));
        }
    }
    return table.rows;
}
test('a redelivery that arrives in a later batch before the flush is a duplicate, not a regression', async () => {
    const loop = fixture('honest.jsonl').filter((l) => l.includes('"LoopID":"loop-std-08"')).slice(0, 10);
    const table = new MemoryEnvelopeTable();
    const state = new ChainState(table);
    const first = await processEnvelopeBatch(asRecords(loop), state, OPTIONS);
    // Seq 3 again, two seconds later: the first copy is still in the buffer.
    const again = await processEnvelopeBatch(asRecords([loop[2]]), state, OPTIONS);
    assert.deepEqual(first.rows.map((r) => r.verdict), Array(10).fill('ok'));
    assert.deepEqual(again.rows, []);
    assert.deepEqual([...again.verdicts], [['duplicate', 1]]);
});
test('a second version that arrives before the flush is a fork, with the first version as evidence', async () => {
    const lines = fixture('tampered-fork.jsonl');
    const rows = await consume(lines, () => 0.99, 1000); // never flushed until the end, batches of 40
    const forks = rows.filter((r) => r.verdict === 'fork');
    assert.equal(forks.length, 3);
    for (const f of forks) {
        const evidence = JSON.parse(f.evidence);
        const original = rows.find((r) => r.loop_id === f.loop_id && r.seq === f.seq && r.verdict !== 'fork');
        assert.equal(evidence.stored.hash, original?.hash);
    }
});
test('a fork redelivered is a duplicate of the fork, whether the fork is durable or still buffered', async () => {
    const lines = fixture('tampered-fork.jsonl');
    const forkIndex = reference(lines).find((r) => r.verdict === 'fork').offset;
    const withCopy = [...lines, lines[Number(forkIndex)]];
    for (const flushBefore of [true, false]) {
        const table = new MemoryEnvelopeTable();
        const state = new ChainState(table);
        const all = asRecords(withCopy);
        const out = await processEnvelopeBatch(all.slice(0, lines.length), state, OPTIONS);
        if (flushBefore) {
            await table.insert(out.rows);
            state.flushed();
        }
        const copy = await processEnvelopeBatch(all.slice(lines.length), state, OPTIONS);
        assert.deepEqual(copy.rows, [], flushBefore ? 'fork durable' : 'fork buffered');
        assert.deepEqual([...copy.verdicts], [['duplicate', 1]]);
    }
});
test('a head cache far smaller than the loops never loses a buffered head', async () => {
    const lines = fixture('honest.jsonl');
    const rows = await consume(lines, () => 0.95, 2); // no flush before the end: every head is pending
    assert.deepEqual(rows.map((r) => r.verdict), Array(lines.length).fill('ok'));
});
test('random batches, flushes, rebalances, redeliveries and a tiny cache store exactly what the one-by-one reference stores', async () => {
    const base = [
        ...fixture('honest.jsonl').slice(0, 600),
        ...fixture('tampered-fork.jsonl'),
        ...fixture('tampered-reordered.jsonl'),
        ...fixture('tampered-payload.jsonl'),
        ...fixture('tampered-deleted.jsonl'),
        ...fixture('tampered-time-regression.jsonl'),
        '{"not":"an envelope"}',
    ];
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
        const rnd = random(seed);
        // Redeliveries of earlier records (forks and malformed ones included), at random later places.
        const lines = [...base];
        for (let k = 0; k < 150; k++) {
            const at = 1 + Math.floor(rnd() * lines.length);
            lines.splice(at, 0, lines[Math.floor(rnd() * at)]);
        }
        const want = reference(lines);
        const got = (await consume(lines, rnd, seed % 2 === 0 ? 3 : 100_000))
            .map((r) => ({ offset: r.kafka_offset, verdict: r.verdict, detail: r.detail }))
            .sort((a, b) => Number(a.offset) - Number(b.offset));
        const firstDiff = got.findIndex((g, i) => JSON.stringify(g) !== JSON.stringify(want[i]));
        assert.deepEqual(got, want, `seed ${seed}: first difference at row ${firstDiff}: got ${JSON.stringify(got[firstDiff])}, want ${JSON.stringify(want[firstDiff])}`);
    }
});
test('a violation of a loop whose key moved to another partition names the likely cause', async () => {
    const loop = fixture('honest.jsonl').filter((l) => l.includes('"LoopID":"loop-std-08"'));
    const state = new ChainState(new MemoryEnvelopeTable());
    const onPartition = (lines, partition, from) => lines.map((line, i) => ({ topic: 'agent.envelopes', partition, offset: String(from + i), timestamp: '0', key: loopKey(line), value: Buffer.from(line) }));
    await processEnvelopeBatch(onPartition(loop.slice(0, 3), 1, 0), state, OPTIONS);
    // Seq 5 arrives on partition 2 (seq 4 still on its way through partition 1): a gap, explained.
    const moved = await processEnvelopeBatch(onPartition(loop.slice(4, 5), 2, 0), state, OPTIONS);
    assert.equal(moved.rows[0]?.verdict, 'gap');
    assert.match(moved.rows[0].detail, /^expected seq 4, got 5; loop seen in partition 1 before, now in 2: its key moved between partitions/);
    // An ok link on the new partition says nothing more.
    const next = await processEnvelopeBatch(onPartition(loop.slice(5, 6), 2, 1), state, OPTIONS);
    assert.deepEqual([next.rows[0]?.verdict, next.rows[0]?.detail], ['ok', '']);
});
/**
 * consume() as ingest runs it with overlap (AGENTLEDGER_BATCH_OVERLAP): a
 * buffer is sealed and its flush lands only after the next batch was judged,
 * so the next batch's read-backs (and the evictions they cause in a tiny
 * cache) happen between a buffer's seal and its durability. A rebalance
 * drops both buffers, the one in flight included.
 */
async function consumeOverlapped(lines, rnd, cacheLimit, counts) {
    const records = asRecords(lines);
    const table = new MemoryEnvelopeTable();
    const state = new ChainState(table, cacheLimit, counts);
    let buffer = [];
    let inFlight;
    const land = async () => {
        if (!inFlight)
            return;
        await table.insert(inFlight.rows);
        state.flushed(inFlight.number);
        inFlight = undefined;
    };
    let next = 0;
    while (next < records.length) {
        const size = 1 + Math.floor(rnd() * 12);
        const out = await processEnvelopeBatch(records.slice(next, next + size), state, OPTIONS);
        buffer.push(...out.rows);
        next = Math.min(records.length, next + size);
        // The previous flush lands only now, after this batch was judged against it as pending.
        await land();
        const dice = rnd();
        if (dice < 0.35) {
            inFlight = { rows: buffer, number: state.seal() };
            buffer = [];
        }
        else if (dice < 0.42) {
            buffer = [];
            inFlight = undefined;
            state.reset();
            next = Number(await table.progress('agent.envelopes', 0));
        }
    }
    await land();
    await table.insert(buffer);
    state.flushed();
    return table.rows;
}
test('a head cache of 1 to 3 entries, evicting between seal and durable, stores exactly what the one-by-one reference stores', async () => {
    const base = [
        ...fixture('honest.jsonl').slice(0, 500),
        ...fixture('tampered-fork.jsonl'),
        ...fixture('tampered-reordered.jsonl'),
        ...fixture('tampered-payload.jsonl'),
        ...fixture('tampered-hash.jsonl'),
        ...fixture('tampered-deleted.jsonl'),
        ...fixture('tampered-time-regression.jsonl'),
        '{"not":"an envelope"}',
    ];
    for (const seed of [21, 22, 23, 24, 25, 26]) {
        const rnd = random(seed);
        // Redeliveries of earlier records (forks, and envelopes of loops long evicted), at random later places.
        const lines = [...base];
        for (let k = 0; k < 200; k++) {
            const at = 1 + Math.floor(rnd() * lines.length);
            lines.splice(at, 0, lines[Math.floor(rnd() * at)]);
        }
        const want = reference(lines);
        const cacheLimit = 1 + (seed % 3);
        const counts = new CacheCounts();
        const got = (await consumeOverlapped(lines, rnd, cacheLimit, counts))
            .map((r) => ({ offset: r.kafka_offset, verdict: r.verdict, detail: r.detail }))
            .sort((a, b) => Number(a.offset) - Number(b.offset));
        const firstDiff = got.findIndex((g, i) => JSON.stringify(g) !== JSON.stringify(want[i]));
        assert.deepEqual(got, want, `seed ${seed}, cache ${cacheLimit}: first difference at row ${firstDiff}: got ${JSON.stringify(got[firstDiff])}, want ${JSON.stringify(want[firstDiff])}`);
        // Not vacuous: heads were evicted, and evicted loops read back.
        assert.ok(counts.evictions > 300, `seed ${seed}: ${counts.evictions} evictions`);
        assert.ok(counts.misses > 2 * new Set(lines.map(loopKey).map(String)).size, `seed ${seed}: ${counts.misses} misses`);
        assert.ok(counts.entries <= cacheLimit + 12, `seed ${seed}: ${counts.entries} entries`);
    }
});
/** One loop's envelopes (honest fixture), flushed, then its head evicted from a cache of 1 by another loop's. */
async function evictedLoop() {
    const honest = fixture('honest.jsonl');
    const mine = honest.filter((l) => l.includes('"LoopID":"loop-std-08"'));
    const other = honest.filter((l) => l.includes('"LoopID":"loop-std-25"'));
    const table = new MemoryEnvelopeTable();
    const counts = new CacheCounts();
    const state = new ChainState(table, 1, counts);
    let offset = 0;
    const batch = async (lines) => {
        const recs = asRecords(lines).map((r) => ({ ...r, offset: String(offset++) }));
        const out = await processEnvelopeBatch(recs, state, OPTIONS);
        await table.insert(out.rows);
        state.flushed();
        return out;
    };
    await batch(mine.slice(0, 5));
    await batch(other.slice(0, 3));
    await batch(other.slice(3, 4)); // settles the previous flush: loop-std-25's head takes the only entry
    assert.equal(counts.evictions, 1, 'loop-std-08 evicted');
    return { mine, batch, counts, table };
}
test('an evicted loop is read back from the store: its redelivery is a duplicate, its next envelope ok', async () => {
    const { mine, batch, counts } = await evictedLoop();
    const missesBefore = counts.misses;
    const again = await batch([mine[2], mine[4], mine[5]]);
    assert.equal(counts.misses, missesBefore + 1, 'its head read back once');
    assert.deepEqual([...again.verdicts].sort(), [['duplicate', 2], ['ok', 1]]);
    assert.deepEqual(again.rows.map((r) => [r.seq, r.verdict]), [[6, 'ok']]);
});
test('a second version of an evicted head is a fork, with the stored first version as evidence', async () => {
    const { mine, batch } = await evictedLoop();
    const head = JSON.parse(mine[4]);
    const forked = mine[4].replace(head.Time, '2027-01-01T00:00:00Z');
    const out = await batch([forked, mine[5]]);
    assert.deepEqual(out.rows.map((r) => [r.seq, r.verdict]), [[5, 'fork'], [6, 'ok']]);
    const evidence = JSON.parse(out.rows[0].evidence);
    assert.equal(evidence.stored.time, head.Time);
});
test('HeadCache: at most its limit, least recently used out first, its evictions counted', () => {
    const counts = new CacheCounts();
    const cache = new HeadCache(2, counts);
    const head = (seq) => ({
        seq,
        hash: Buffer.from(Array.from({ length: 32 }, (_, i) => (i + seq) % 256)),
        computedHash: seq % 2 === 0 ? undefined : Buffer.alloc(32, seq),
        timeText: `2026-11-30T10:00:0${seq}Z`,
        time: { seconds: 1_796_032_800 + seq, nanos: 0 },
        mismatched: seq === 3,
        partition: seq,
    });
    cache.set('a', head(1));
    cache.set('b', head(2));
    assert.ok(cache.get('a'), 'a used: b is now the oldest');
    cache.set('c', head(3));
    assert.equal(cache.size, 2);
    assert.equal(cache.get('b'), undefined);
    assert.equal(counts.evictions, 1);
    assert.deepEqual(cache.get('c'), head(3));
    cache.set('none', null);
    assert.equal(cache.get('none'), null, 'no envelope stored is cached too');
    assert.equal(cache.get('a'), undefined);
    assert.throws(() => new HeadCache(0), RangeError);
});
test('cached heads keep none of the pool slabs their hashes were decoded into', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc');
    const loops = 20_000;
    const payload = Buffer.alloc(3000, 7).toString('base64');
    const hashOf = (i) => Buffer.from(Array.from({ length: 32 }, (_, k) => (i + k) % 256));
    /** Array-buffer bytes still held after `keep` took a head per loop, decoded as decoding does it. */
    const held = (keep) => {
        gc();
        const before = process.memoryUsage().arrayBuffers;
        for (let i = 0; i < loops; i++) {
            // A payload (dropped once its row is built), then the hash: both slices of Node's shared 8 KiB pool.
            Buffer.from(payload, 'base64');
            const hash = hashOf(i);
            keep(`loop-${i}`, { seq: 1, hash, computedHash: hash, timeText: '2026-11-30T10:00:00Z', time: { seconds: 1_796_032_800, nanos: 0 }, mismatched: false });
        }
        gc();
        return process.memoryUsage().arrayBuffers - before;
    };
    // The cache first: backing stores a gc() frees are not all gone when it returns, and would blur what follows.
    const cache = new HeadCache(loops);
    const cached = held((loopId, head) => cache.set(loopId, head));
    const asBuffers = new Map();
    const control = held((loopId, head) => asBuffers.set(loopId, head));
    assert.equal(asBuffers.size, loops);
    const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
    // The control shows the mechanism: each head kept as decoded keeps its slab (two payloads' worth).
    assert.ok(control > 40e6, `control: ${mb(control)}`);
    assert.ok(cached < control / 4, `${loops} cached heads hold ${mb(cached)} of array buffers; kept as decoded, ${mb(control)}`);
    assert.deepEqual(cache.get('loop-7')?.hash, hashOf(7));
});
//# sourceMappingURL=envelope-verdicts.test.js.map