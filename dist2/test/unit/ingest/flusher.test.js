/**
 * The flush protocol (src/ingest/flusher.ts) without services: a fake
 * stream whose table is an array and whose inserts can fail before or after
 * their rows land, ports that record what was committed and sent. Each test
 * is one rule of the protocol; the last one runs random sequences of failures
 * and demands the rows of the buffer stored exactly once, committed once,
 * after them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentledgerError } from '../../../src/observability/errors.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { Flusher } from '../../../src/ingest/flusher.js';
import { emptyPending } from '../../../src/ingest/pending.js';
const TOPIC = 't';
const transient = () => new AgentledgerError('transient', 'socket hang up');
/** A content refusal, as ClickHouse answers a row it cannot parse. */
const refusal = () => new AgentledgerError('content', 'Cannot parse input');
/** A fake stream that is its own store (Stream.store): its table is an array. */
class FakeStream {
    name = 'fake';
    topic = TOPIC;
    store = this;
    table = [];
    inserts = [];
    derived = [];
    durableCalls = [];
    events;
    /** The outcome of each insert in turn ('ok' once they run out). */
    outcomes = [];
    /** Values the server refuses (the insert and a probe holding one fail with a content error). */
    poison = new Set();
    constructor(events) {
        this.events = events;
    }
    progress(_topic, partition) {
        let next = 0n;
        for (const r of this.table)
            if (r.kafka_partition === partition && BigInt(r.kafka_offset) + 1n > next)
                next = BigInt(r.kafka_offset) + 1n;
        return Promise.resolve(next);
    }
    process() {
        throw new Error('not used by the flusher');
    }
    insert(rows, queryId) {
        this.inserts.push({ rows: rows.length, queryId });
        this.events.push('insert');
        if (rows.some((r) => this.poison.has(r.value)))
            return Promise.reject(refusal());
        const outcome = this.outcomes.shift() ?? 'ok';
        if (outcome === 'fails')
            return Promise.reject(transient());
        this.table.push(...rows.map((r) => ({ ...r })));
        if (outcome === 'lost')
            return Promise.reject(transient());
        if (outcome === 'landed-error')
            return Promise.reject(new AgentledgerError('fatal', 'a view on the table threw'));
        return Promise.resolve();
    }
    probe(rows) {
        return rows.some((r) => this.poison.has(r.value)) ? Promise.reject(refusal()) : Promise.resolve();
    }
    quarantine(record, reason) {
        return {
            row: { kafka_topic: record.topic, kafka_partition: record.partition, kafka_offset: record.offset, ingested_at: '', value: 'malformed' },
            deadLetter: { record, reason },
        };
    }
    derive(rows) {
        this.events.push('derive');
        this.derived.push([...rows]);
        return Promise.resolve();
    }
    rederive() {
        return Promise.resolve();
    }
    derivedLost() {
        return Promise.resolve(false);
    }
    seal() {
        return 0;
    }
    durable(upTo) {
        this.events.push('durable');
        this.durableCalls.push(upTo);
    }
    reset() { }
}
class FakePorts {
    events;
    commits = [];
    sent = [];
    settled = [];
    /** Whether the coordinator still counts this member (else every commit is refused). */
    member = true;
    /** Commits to refuse after the fence (a rebalance between the fence and the commit). */
    refuseAfterFence = false;
    constructor(events) {
        this.events = events;
    }
    commit(positions, what) {
        this.events.push(what.startsWith('ownership') ? 'fence' : 'commit');
        if (!this.member || (this.refuseAfterFence && !what.startsWith('ownership'))) {
            return Promise.reject(Object.assign(new Error('The coordinator is not aware of this member'), { type: 'UNKNOWN_MEMBER_ID' }));
        }
        this.commits.push([...positions]);
        return Promise.resolve();
    }
    sendDeadLetters(letters) {
        this.events.push('dead letters');
        this.sent.push([...letters]);
        return Promise.resolve();
    }
    settle(queryId) {
        this.settled.push(queryId);
        return Promise.resolve();
    }
}
function world() {
    const events = [];
    const stream = new FakeStream(events);
    const ports = new FakePorts(events);
    const fencedCalls = [];
    const durableRows = [];
    const clock = { ms: Date.UTC(2026, 11, 2, 4, 0, 0) };
    const flusher = new Flusher({
        now: () => clock.ms,
        ports,
        metrics: createMetrics(),
        log: createLogger('error', {}, { write: () => undefined }),
        onFenced: () => fencedCalls.push(1),
        onCommitted: () => events.push('committed'),
        onDurable: (rows) => durableRows.push(rows),
    });
    return { events, stream, ports, flusher, fencedCalls, durableRows, clock };
}
const record = (partition, offset, value) => ({
    topic: TOPIC,
    partition,
    offset: String(offset),
    timestamp: '0',
    key: null,
    value: Buffer.from(value),
});
/** A sealed buffer of `n` records over two partitions (offsets from `from`), one row each, and dead letters. */
function buffer(stream, n, options = {}) {
    const p = emptyPending();
    const from = options.from ?? 0;
    const rows = [];
    const records = [];
    for (let i = 0; i < n; i++) {
        const partition = i % 2;
        const offset = from + Math.floor(i / 2);
        const value = options.values?.(i) ?? `v${partition}-${offset}`;
        records.push(record(partition, offset, value));
        rows.push({ kafka_topic: TOPIC, kafka_partition: partition, kafka_offset: String(offset), ingested_at: '', value });
        p.positions.set(`${TOPIC}:${partition}`, { topic: TOPIC, partition, offset: String(offset + 1) });
    }
    p.rows.set(stream, rows);
    p.records.set(stream, records);
    p.sealed.set(stream, 7);
    for (let i = 0; i < (options.deadLetters ?? 0); i++)
        p.deadLetters.push({ record: record(0, 1000 + i, 'bad'), reason: 'not JSON' });
    p.count = n + (options.deadLetters ?? 0);
    return p;
}
/** Flushes `p` as ingest's retry loop does: again after every transient failure, at most `tries` times. */
async function flushRetrying(flusher, p, tries = 10) {
    for (let attempt = 1;; attempt++) {
        try {
            await flusher.flush(p);
            return attempt;
        }
        catch (err) {
            if (attempt >= tries || !(err instanceof AgentledgerError) || err.kind !== 'transient')
                throw err;
        }
    }
}
const stored = (s) => s.table.map((r) => `${r.kafka_partition}:${r.kafka_offset}:${r.value}`).sort();
test('the order: fence, dead letters, one insert per table, derived writes, durable, commit of every position, stamped', async () => {
    const w = world();
    const p = buffer(w.stream, 6, { deadLetters: 2 });
    await w.flusher.flush(p);
    assert.deepEqual(w.events, ['fence', 'dead letters', 'insert', 'derive', 'durable', 'commit', 'committed']);
    assert.equal(w.stream.inserts.length, 1, 'one insert for all six rows');
    assert.equal(w.stream.inserts[0].rows, 6);
    assert.deepEqual(w.stream.durableCalls, [7], 'the sealed buffer number is made durable');
    assert.equal(w.durableRows.length, 1);
    const commit = w.ports.commits.at(-1);
    assert.deepEqual(commit.map((c) => [c.partition, c.offset]), [
        [0, '3'],
        [1, '3'],
    ]);
    assert.ok(commit.every((c) => c.metadata === String(p.stampSeconds)), 'the commit is dated with the flush stamp');
    const stamps = new Set(w.stream.table.map((r) => r.ingested_at));
    assert.equal(stamps.size, 1, 'one ingested_at for the whole insert');
    assert.deepEqual(w.flusher.durable.get(`${TOPIC}:0`)?.offset, '3', 'what the next fence commits again');
});
test('a refused fence: nothing sent, nothing inserted, nothing committed, the owner told to drop its state', async () => {
    const w = world();
    w.ports.member = false;
    const p = buffer(w.stream, 4, { deadLetters: 1 });
    await assert.rejects(w.flusher.flush(p), /not aware of this member/);
    assert.deepEqual(w.events, ['fence']);
    assert.deepEqual(w.stream.table, []);
    assert.deepEqual(w.ports.sent, []);
    assert.equal(w.fencedCalls.length, 1);
    assert.equal(w.flusher.fenced, true, 'no timer flush until the member joins again');
});
test('a buffer already dropped when its fence is refused does not drop the new state again', async () => {
    const w = world();
    w.ports.member = false;
    const p = buffer(w.stream, 2);
    p.dropped = true;
    await assert.rejects(w.flusher.flush(p));
    assert.equal(w.fencedCalls.length, 0);
});
test('dead letters are sent once: a flush whose insert failed after them does not send them again', async () => {
    const w = world();
    w.stream.outcomes = ['fails', 'fails'];
    const p = buffer(w.stream, 4, { deadLetters: 3 });
    assert.equal(await flushRetrying(w.flusher, p), 3);
    assert.equal(w.ports.sent.length, 1);
    assert.equal(w.ports.sent[0].length, 3);
    assert.equal(stored(w.stream).length, 4);
});
test('an insert whose answer was lost: the retry settles that query, finds the rows landed, and does not insert them again', async () => {
    const w = world();
    w.stream.outcomes = ['lost'];
    const p = buffer(w.stream, 6);
    assert.equal(await flushRetrying(w.flusher, p), 2);
    assert.equal(w.stream.inserts.length, 1, 'no second insert');
    assert.deepEqual(w.ports.settled, [w.stream.inserts[0].queryId], 'the lost query settled before asking whether it landed');
    assert.equal(w.stream.table.length, 6, 'stored once');
    assert.equal(w.ports.commits.filter((c) => c.some((x) => x.metadata !== undefined)).length, 1, 'committed once');
});
test('an error answer for rows that landed (a view threw after the part was written): found landed, not repeated, flush goes on', async () => {
    const w = world();
    w.stream.outcomes = ['landed-error'];
    const p = buffer(w.stream, 4);
    await w.flusher.flush(p);
    assert.equal(w.stream.inserts.length, 1);
    assert.equal(w.stream.table.length, 4);
    assert.deepEqual(w.ports.settled, [w.stream.inserts[0].queryId]);
    assert.ok(w.events.includes('commit'));
});
test('an insert that failed before landing is tried again with the same stamp; no commit before the rows are stored', async () => {
    const w = world();
    w.stream.outcomes = ['fails'];
    const p = buffer(w.stream, 4);
    await assert.rejects(w.flusher.flush(p), /socket hang up/);
    const stamp = p.stamp;
    assert.ok(!w.events.includes('commit'), 'nothing committed after a failed insert');
    assert.ok(!w.events.includes('derive'));
    w.clock.ms += 65_000;
    await w.flusher.flush(p);
    assert.equal(p.stamp, stamp, 'a retried insert lands in the partition of the first');
    assert.equal(w.stream.inserts.length, 2);
    assert.equal(w.stream.table.length, 4);
    assert.ok(w.stream.table.every((r) => r.ingested_at === stamp));
});
test('rows the server refuses: found by probing, their records dead-lettered and stored as malformed, the rest stored, the stream rebuilt', async () => {
    const w = world();
    w.stream.poison = new Set(['v1-2']);
    const p = buffer(w.stream, 8);
    await w.flusher.flush(p);
    assert.deepEqual(w.ports.sent.flat().map((d) => `${d.record.partition}:${d.record.offset}`), ['1:2'], 'the refused record dead-lettered, alone');
    assert.equal(w.stream.table.length, 8, 'every record has its row');
    assert.equal(w.stream.table.find((r) => r.kafka_partition === 1 && r.kafka_offset === '2')?.value, 'malformed');
    assert.ok(p.rebuild.has(w.stream), 'the stream state went past the refused row: read back after the flush');
});
test('a content refusal no single row causes is not the data: thrown as it came', async () => {
    const w = world();
    w.stream.insert = () => Promise.reject(refusal());
    await assert.rejects(w.flusher.flush(buffer(w.stream, 4)), /Cannot parse input/);
    assert.deepEqual(w.ports.sent, []);
});
test('a buffer dropped during its insert (a rebalance): its rows are durable, its offsets are not committed by this member', async () => {
    const w = world();
    const p = buffer(w.stream, 4);
    const insert = w.stream.insert.bind(w.stream);
    w.stream.insert = async (rows, queryId) => {
        await insert(rows, queryId);
        p.dropped = true;
    };
    await w.flusher.flush(p);
    assert.equal(w.stream.table.length, 4);
    assert.ok(!w.events.includes('commit'), 'the partitions are another member’s, and so is their commit');
});
test('a commit refused after the rows are durable: no failure (progress is in ClickHouse), the member is fenced', async () => {
    const w = world();
    w.ports.refuseAfterFence = true;
    await w.flusher.flush(buffer(w.stream, 4));
    assert.equal(w.stream.table.length, 4);
    assert.equal(w.flusher.fenced, true);
    assert.ok(!w.events.includes('committed'));
});
test('the fence commits again exactly the durable positions of the buffer’s partitions', async () => {
    const w = world();
    await w.flusher.flush(buffer(w.stream, 4));
    await w.flusher.flush(buffer(w.stream, 4, { from: 2 }));
    // The commits: fence 1 (nothing durable yet), commit 1, fence 2 (commit 1's positions again), commit 2.
    assert.equal(w.ports.commits.length, 4);
    assert.deepEqual(w.ports.commits[0], []);
    assert.deepEqual(w.ports.commits[2], w.ports.commits[1]);
});
test('random failures across retries: every row stored exactly once, derived once, committed once after it (500 sequences)', async () => {
    let seed = 20261202;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const choices = ['ok', 'fails', 'lost', 'landed-error'];
    for (let run = 0; run < 500; run++) {
        const w = world();
        w.stream.outcomes = Array.from({ length: Math.floor(next() * 5) }, () => choices[Math.floor(next() * choices.length)]);
        const n = 1 + Math.floor(next() * 12);
        if (next() < 0.3)
            w.stream.poison = new Set([`v${Math.floor(next() * 2)}-${Math.floor((next() * n) / 2)}`]);
        const p = buffer(w.stream, n, { deadLetters: Math.floor(next() * 3) });
        const expected = p.rows.get(w.stream).map((r) => `${r.kafka_partition}:${r.kafka_offset}`).sort();
        await flushRetrying(w.flusher, p, 20);
        const keys = w.stream.table.map((r) => `${r.kafka_partition}:${r.kafka_offset}`).sort();
        assert.deepEqual(keys, expected, `run ${run}: each record's row stored once (${w.stream.outcomes.join(',')})`);
        assert.equal(w.stream.derived.length, 1, `run ${run}: derived once`);
        const commits = w.events.filter((e) => e === 'commit').length;
        assert.equal(commits, 1, `run ${run}: committed once`);
        assert.ok(w.events.lastIndexOf('insert') < w.events.indexOf('commit'), `run ${run}: the commit after the last insert`);
        assert.equal(w.ports.sent.flat().filter((d) => d.reason === 'not JSON').length, p.count - n, `run ${run}: dead letters sent once`);
    }
});
//# sourceMappingURL=flusher.test.js.map