/**
 * The craze pipeline's glue (decode -> order -> account -> rows) without
 * services: the sample journals as Kafka records, flushed into an in-memory
 * craze_events table after each batch, give the hand-computed spend per
 * session for any batch size and through rebalances (a fresh pipeline that
 * restores its accounting from stored rows); order verdicts and malformed
 * records are what verify/craze-seq.ts and the DLQ promise.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CacheCounts } from '../../../src/pipeline/cache-observer.js';
import { CrazeStream } from '../../../src/pipeline/craze.js';
import { completeLines, crazeRecordValue, JournalParser } from '../../../src/sources/craze-journal.js';
import { MemoryCrazeTable } from '../../support/memory-tables.js';
const FIXTURES = fileURLToPath(new URL('../../../../test/fixtures/craze/', import.meta.url));
const TOPIC = 'craze.events';
function journalValues() {
    return journalFiles().flat();
}
/** The sample journals' records, one list per journal file (one incarnation each), in file order. */
function journalFiles() {
    const files = [];
    const root = join(FIXTURES, 'journal');
    for (const dir of readdirSync(root).sort()) {
        for (const name of readdirSync(join(root, dir)).sort()) {
            const file = join(root, dir, name);
            const parser = new JournalParser();
            const events = completeLines(readFileSync(file, 'utf8')).lines.flatMap((l) => parser.line(l));
            files.push(events.map((e) => crazeRecordValue(parser.sessionId, parser.meta, e, name)));
        }
    }
    return files;
}
const asRecords = (values) => values.map((v, i) => ({ topic: TOPIC, partition: 0, offset: String(i), timestamp: '1764504000000', key: null, value: Buffer.from(v) }));
const event = (sessionId, incarnation, seq, body = { type: 'status', at: '2026-11-30T10:00:00Z' }) => JSON.stringify({ sessionId, incarnation, seq, event: body });
async function run(values, batchSize, rebalanceEachBatch, table = new MemoryCrazeTable()) {
    let stream = new CrazeStream(TOPIC, table);
    const all = asRecords(values);
    const verdicts = new Map();
    for (let i = 0; i < all.length; i += batchSize) {
        if (rebalanceEachBatch)
            stream = new CrazeStream(TOPIC, table);
        const out = await stream.process(all.slice(i, i + batchSize));
        await table.insert(out.rows);
        for (const [v, n] of out.verdicts)
            verdicts.set(v, (verdicts.get(v) ?? 0) + n);
    }
    return { table, verdicts };
}
function spendBySession(rows) {
    const spend = new Map();
    for (const r of rows)
        if (r.report === 1)
            spend.set(r.session_id, (spend.get(r.session_id) ?? 0n) + BigInt(r.cost_pico));
    return spend;
}
const withoutState = (rows) => rows.map(({ account_state: _state, ...rest }) => rest);
test('the sample journals give the hand-computed spend per session for every batch size, with and without rebalances', async () => {
    const expected = JSON.parse(readFileSync(join(FIXTURES, 'expected.json'), 'utf8'));
    const values = journalValues();
    const reference = await run(values, values.length, false);
    assert.deepEqual([...spendBySession(reference.table.rows)].sort(), expected.sessions.map((s) => [s.sessionId, BigInt(s.costPicoUsd)]).sort());
    for (const batchSize of [1, 5, 33]) {
        for (const rebalance of [false, true]) {
            const { table } = await run(values, batchSize, rebalance);
            assert.deepEqual(withoutState(table.rows), withoutState(reference.table.rows), `batch ${batchSize}${rebalance ? ', rebalance each batch' : ''}`);
        }
    }
});
test('order verdicts: ok, gap, late; a redelivery is dropped whether it comes in the same batch or a later one', async () => {
    const table = new MemoryCrazeTable();
    const stream = new CrazeStream(TOPIC, table);
    const first = await stream.process(asRecords([event('s', 'i', 1), event('s', 'i', 2), event('s', 'i', 2), event('s', 'i', 5)]));
    assert.deepEqual(first.rows.map((r) => [r.seq, r.verdict, r.detail]), [
        [1, 'ok', ''],
        [2, 'ok', ''],
        [5, 'gap', 'expected seq 3, got 5'],
    ]);
    assert.equal(first.verdicts.get('duplicate'), 1);
    await table.insert(first.rows);
    // Later, in a new pipeline (after a restart): a late seq, and redeliveries of stored ones.
    const later = await new CrazeStream(TOPIC, table).process(asRecords([event('s', 'i', 3), event('s', 'i', 1), event('s', 'i', 5), event('s', 'i', 6)]));
    assert.deepEqual(later.rows.map((r) => [r.seq, r.verdict, r.detail]), [
        [3, 'late', 'seq 3 arrived after seq 5; stored, not used for spend'],
        [6, 'ok', ''],
    ]);
    assert.equal(later.verdicts.get('duplicate'), 2);
    // Another incarnation of the same session starts from 1 on its own.
    const other = await stream.process(asRecords([event('s', 'j', 1)]));
    assert.deepEqual(other.rows.map((r) => [r.incarnation, r.seq, r.verdict]), [['j', 1, 'ok']]);
});
test('a malformed craze record is a dead letter with its reason and a malformed row keeping its key and raw bytes', async () => {
    const raw = Buffer.from('{"sessionId":"s","incarnation":"i","seq":0,"event":{}}');
    const record = { topic: TOPIC, partition: 2, offset: '9', timestamp: '1764504000000', key: Buffer.from('s'), value: raw };
    const out = await new CrazeStream(TOPIC, new MemoryCrazeTable()).process([record]);
    assert.equal(out.deadLetters.length, 1);
    assert.equal(out.deadLetters[0].record, record);
    const row = out.rows[0];
    assert.deepEqual([row.session_id, row.incarnation, row.seq, row.verdict, row.detail, row.event, row.at, row.kafka_partition, row.kafka_offset], ['s', '', 0, 'malformed', out.deadLetters[0].reason, raw.toString('base64'), '2025-11-30 12:00:00', 2, '9']);
    assert.equal(row.report, 0);
    assert.equal(row.cost_pico, '0');
});
test('a redelivery that arrives in a later batch before the flush is a duplicate, not a late second copy', async () => {
    const table = new MemoryCrazeTable();
    const stream = new CrazeStream(TOPIC, table);
    const first = await stream.process(asRecords([event('s', 'i', 1), event('s', 'i', 2), event('s', 'i', 3)]));
    // Nothing flushed yet: seq 2 comes again in the next Kafka batch.
    const again = await stream.process(asRecords([event('s', 'i', 2)]));
    assert.deepEqual(first.rows.map((r) => r.verdict), ['ok', 'ok', 'ok']);
    assert.deepEqual(again.rows, []);
    assert.deepEqual([...again.verdicts], [['duplicate', 1]]);
    // A late seq judged before the flush is not stored twice either.
    const late = await stream.process(asRecords([event('s', 'i', 5), event('s', 'i', 4)]));
    const lateAgain = await stream.process(asRecords([event('s', 'i', 4)]));
    assert.deepEqual(late.rows.map((r) => [r.seq, r.verdict]), [[5, 'gap'], [4, 'late']]);
    assert.deepEqual(lateAgain.rows, []);
});
test('random batches, flushes, rebalances and redeliveries store exactly the rows of one pass', async () => {
    const values = journalValues();
    const reference = (await run(values, values.length, false)).table.rows;
    const strip = (rows) => rows.map(({ account_state: _s, ingested_at: _i, kafka_offset: _o, ...rest }) => JSON.stringify(rest)).sort();
    for (const seed of [11, 12, 13, 14]) {
        let x = seed;
        const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
        const withCopies = [...values];
        for (let k = 0; k < 60; k++) {
            const at = 1 + Math.floor(rnd() * withCopies.length);
            withCopies.splice(at, 0, withCopies[Math.floor(rnd() * at)]);
        }
        const records = asRecords(withCopies);
        const table = new MemoryCrazeTable();
        let stream = new CrazeStream(TOPIC, table);
        let buffer = [];
        let next = 0;
        while (next < records.length) {
            const size = 1 + Math.floor(rnd() * 25);
            buffer.push(...(await stream.process(records.slice(next, next + size))).rows);
            next = Math.min(records.length, next + size);
            const dice = rnd();
            if (dice < 0.3 || next === records.length) {
                await table.insert(buffer);
                stream.durable();
                buffer = [];
            }
            else if (dice < 0.4) {
                buffer = [];
                stream = new CrazeStream(TOPIC, table);
                next = Number(await table.progress(TOPIC, 0));
            }
        }
        assert.deepEqual(strip(table.rows), strip(reference), `seed ${seed}`);
    }
});
test('a usage growth beyond Int64 is refused with its reason, never stored wrapped', async () => {
    // JSON text by hand: the costs are beyond what a JavaScript number holds exactly.
    const spend = (cost) => `{"input":0,"output":0,"reasoning":0,"cacheRead":0,"cacheCreation":0,"costPicoUsd":${cost},"unpriced":false}`;
    const usage = (seq, cost) => `{"sessionId":"s","incarnation":"i","seq":${seq},"event":{"type":"meta","at":"2026-11-30T10:00:00Z","state":{"usage":{"contextTokens":0,"contextWindow":0,"session":${spend(cost)},"turn":${spend('0')}}}}}`;
    // Session cost -9e18, then +9e18: a growth of 1.8e19, beyond Int64's 9.22e18.
    const out = await new CrazeStream(TOPIC, new MemoryCrazeTable()).process(asRecords([usage(1, '-9000000000000000000'), usage(2, '9000000000000000000'), usage(3, '9000000000000000001')]));
    assert.deepEqual(out.rows.map((r) => [r.seq, r.verdict, r.report, r.cost_pico]), [
        [1, 'ok', 1, '0'],
        [2, 'ok', 0, '0'],
        [3, 'ok', 1, '1'],
    ]);
    assert.match(out.rows[1].detail, /costPicoUsd 18000000000000000000 exceeds Int64; counted as 0/);
    assert.deepEqual(out.deadLetters.map((d) => [d.record.offset, d.reason]), [['1', out.rows[1].detail]]);
});
test('incarnations whose ids hold the key separator do not collide: ("a\\0b", "c") and ("a", "b\\0c") are two', async () => {
    const table = new MemoryCrazeTable();
    const out = await new CrazeStream(TOPIC, table).process(asRecords([event('a\u0000b', 'c', 1), event('a', 'b\u0000c', 1)]));
    assert.deepEqual(out.rows.map((r) => [r.session_id, r.incarnation, r.verdict]), [
        ['a\u0000b', 'c', 'ok'],
        ['a', 'b\u0000c', 'ok'],
    ]);
    await table.insert(out.rows);
    // After a restart both are read back apart: a redelivery of each is a duplicate, the next seq of each is ok.
    const again = await new CrazeStream(TOPIC, table).process(asRecords([event('a', 'b\u0000c', 1), event('a\u0000b', 'c', 2), event('a', 'b\u0000c', 2)]));
    assert.deepEqual(again.rows.map((r) => [r.session_id, r.seq, r.verdict]), [['a\u0000b', 2, 'ok'], ['a', 2, 'ok']]);
    assert.equal(again.verdicts.get('duplicate'), 1);
});
/** The journals' records interleaved at random across files (each file's own order kept), as a topic of many sessions carries them. */
function interleaved(rnd) {
    const queues = journalFiles().map((f) => [...f]);
    const out = [];
    for (let left = queues.filter((q) => q.length > 0); left.length > 0; left = left.filter((q) => q.length > 0)) {
        const q = left[Math.floor(rnd() * left.length)];
        out.push(...q.splice(0, 1 + Math.floor(rnd() * 4)));
    }
    return out;
}
test('a session cache of 1 or 2, evicting between seal and durable, through rebalances and redeliveries, stores exactly the rows of one pass', async () => {
    const strip = (rows) => rows.map(({ ingested_at: _i, kafka_offset: _o, ...rest }) => JSON.stringify(rest)).sort();
    for (const seed of [31, 32, 33, 34, 35, 36]) {
        let x = seed;
        const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
        const values = interleaved(rnd);
        for (let k = 0; k < 60; k++) {
            const at = 1 + Math.floor(rnd() * values.length);
            values.splice(at, 0, values[Math.floor(rnd() * at)]);
        }
        // The reference: one batch, one flush, a cache holding every session.
        const reference = (await run(values, values.length, false)).table.rows;
        const cacheSessions = 1 + (seed % 2);
        const counts = new CacheCounts();
        const records = asRecords(values);
        const table = new MemoryCrazeTable();
        let stream = new CrazeStream(TOPIC, table, cacheSessions, counts);
        let buffer = [];
        // ingest with overlap: a sealed buffer lands only after the next batch was judged.
        let inFlight;
        const land = async () => {
            if (!inFlight)
                return;
            await table.insert(inFlight.rows);
            stream.durable(inFlight.number);
            inFlight = undefined;
        };
        let next = 0;
        while (next < records.length) {
            const size = 1 + Math.floor(rnd() * 8);
            buffer.push(...(await stream.process(records.slice(next, next + size))).rows);
            next = Math.min(records.length, next + size);
            await land();
            const dice = rnd();
            if (dice < 0.35) {
                inFlight = { rows: buffer, number: stream.seal() };
                buffer = [];
            }
            else if (dice < 0.4) {
                buffer = [];
                inFlight = undefined;
                stream = new CrazeStream(TOPIC, table, cacheSessions, counts);
                next = Number(await table.progress(TOPIC, 0));
            }
        }
        await land();
        await table.insert(buffer);
        // Spend, outcomes and the accounting state of every row, as one pass has them.
        assert.deepEqual(strip(table.rows), strip(reference), `seed ${seed}, cache ${cacheSessions}`);
        assert.ok(counts.evictions > 5, `seed ${seed}: ${counts.evictions} evictions`);
        assert.ok(counts.misses > 3 * 3, `seed ${seed}: ${counts.misses} misses (3 sessions)`);
    }
});
const usage = (seq, sessionCost, turnCost) => {
    const spend = (cost) => ({ input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheCreation: 0, costPicoUsd: cost, unpriced: false });
    return { type: 'meta', at: '2026-11-30T10:00:00Z', state: { usage: { contextTokens: 0, contextWindow: 0, session: spend(sessionCost), turn: spend(turnCost) } } };
};
test('a session evicted once durable goes on from its stored state; one with rows in a buffer is never evicted', async () => {
    const table = new MemoryCrazeTable();
    const counts = new CacheCounts();
    const stream = new CrazeStream(TOPIC, table, 1, counts);
    let offset = 0;
    const batch = (values) => stream.process(asRecords(values).map((r) => ({ ...r, offset: String(offset++) })));
    // Session s: two usage reports, not flushed yet.
    const first = await batch([event('s', 'i', 1, usage(1, 100, 100)), event('s', 'i', 2, usage(2, 250, 150))]);
    // Session t fills the only entry while s's rows are still buffered: s stays.
    const other = await batch([event('t', 'k', 1)]);
    assert.equal(stream.cachedSessions, 2, 'a session with buffered rows is kept beyond the budget');
    assert.equal(counts.evictions, 0);
    const number = stream.seal();
    await table.insert([...first.rows, ...other.rows]);
    stream.durable(number);
    // Durable now: the next batch (of session u) evicts s and t to make room for it.
    await batch([event('u', 'm', 1)]);
    assert.equal(stream.cachedSessions, 1);
    assert.equal(counts.evictions, 2);
    const missesBefore = counts.misses;
    // s comes back: read from its stored head rows. A redelivery is a duplicate, the next report grows from the stored one.
    const again = await batch([event('s', 'i', 2, usage(2, 250, 150)), event('s', 'i', 3, usage(3, 400, 300))]);
    assert.equal(counts.misses, missesBefore + 1, 's read back once');
    assert.equal(again.verdicts.get('duplicate'), 1);
    assert.deepEqual(again.rows.map((r) => [r.seq, r.verdict, r.cost_pico]), [[3, 'ok', '150']]);
    // A new incarnation of the evicted session (a --continue or --resume) starts on its own.
    const resumed = await batch([event('s', 'j', 1, usage(1, 500, 100))]);
    assert.deepEqual(resumed.rows.map((r) => [r.incarnation, r.seq, r.verdict, r.cost_pico]), [['j', 1, 'ok', '500']]);
});
//# sourceMappingURL=craze.test.js.map