/**
 * The envelope pipeline's glue (decode -> verify -> rows) without services:
 * processEnvelopeBatch over the Go-generated fixtures, flushed into an
 * in-memory envelopes table after each batch, gives the planted verdicts for
 * any batch size, with or without a rebalance (a fresh head cache) between
 * batches; malformed records become a dead letter and an evidence row.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { NO_SLOTS } from '../../../src/rows/envelope-facts.js';
import { ChainState, processEnvelopeBatch } from '../../../src/pipeline/envelopes.js';
import { DEFAULT_DECODE_OPTIONS } from '../../../src/decode/envelope.js';
import { MemoryEnvelopeTable } from '../../support/memory-tables.js';
const DIR = fileURLToPath(new URL('../../../../test/fixtures/envelopes/', import.meta.url));
const expected = JSON.parse(readFileSync(`${DIR}expected.json`, 'utf8'));
const records = (lines, topic = 'agent.envelopes') => lines.map((line, i) => ({ topic, partition: 0, offset: String(i), timestamp: '1764504000000', key: Buffer.from('k'), value: Buffer.from(line) }));
async function run(lines, options, batchSize, rebalanceEachBatch) {
    const table = new MemoryEnvelopeTable();
    const state = new ChainState(table);
    const all = records(lines);
    const verdicts = new Map();
    for (let i = 0; i < all.length; i += batchSize) {
        if (rebalanceEachBatch)
            state.reset();
        const out = await processEnvelopeBatch(all.slice(i, i + batchSize), state, options);
        await table.insert(out.rows);
        state.flushed();
        for (const [v, n] of out.verdicts)
            verdicts.set(v, (verdicts.get(v) ?? 0) + n);
    }
    return { table, verdicts };
}
const violationsOf = (rows) => rows
    .filter((r) => r.verdict !== 'ok')
    .map((r) => ({ loopId: r.loop_id, seq: r.seq, verdict: r.verdict }))
    .sort((a, b) => (a.loopId === b.loopId ? a.seq - b.seq : a.loopId < b.loopId ? -1 : 1));
for (const want of expected) {
    test(`${want.file}: the planted verdicts for every batch size, with and without rebalances`, async () => {
        const lines = readFileSync(`${DIR}${want.file}`, 'utf8').split('\n').filter((l) => l.length > 0);
        assert.equal(lines.length, want.envelopes);
        const options = { ...DEFAULT_DECODE_OPTIONS, seqEncoding: want.seqEncoding };
        for (const batchSize of [1, 7, 64, lines.length]) {
            for (const rebalance of [false, true]) {
                const { table, verdicts } = await run(lines, options, batchSize, rebalance);
                const label = `batch ${batchSize}${rebalance ? ', rebalance each batch' : ''}`;
                assert.deepEqual(violationsOf(table.rows), want.violations, label);
                // Every record is a row or a dropped duplicate, never both, never neither.
                assert.equal(table.rows.length + (verdicts.get('duplicate') ?? 0), lines.length, label);
                assert.equal(new Set(table.rows.map((r) => r.kafka_offset)).size, table.rows.length, label);
            }
        }
    });
}
test('a row carries the envelope verbatim: hashes as hex, Time text, payload text, Kafka position', async () => {
    const line = readFileSync(`${DIR}honest.jsonl`, 'utf8').split('\n')[0];
    const value = JSON.parse(line);
    const table = new MemoryEnvelopeTable();
    const out = await processEnvelopeBatch(records([line], 'topic-x'), new ChainState(table), { ...DEFAULT_DECODE_OPTIONS, seqEncoding: 'binary' });
    assert.equal(out.rows.length, 1);
    const row = out.rows[0];
    assert.equal(row.loop_id, value.LoopID);
    assert.equal(row.seq, 1);
    assert.equal(row.time_text, value.Time);
    assert.equal(row.kind, value.Kind);
    assert.equal(row.kind_class, 'LoopStarted');
    assert.equal(row.hash, Buffer.from(value.Hash).toString('hex'));
    assert.equal(row.computed_hash, row.hash);
    assert.equal(row.payload, Buffer.from(value.Payload, 'base64').toString('utf8'));
    assert.equal(row.verdict, 'ok');
    assert.deepEqual([row.kafka_topic, row.kafka_partition, row.kafka_offset, row.ingested_at], ['topic-x', 0, '0', '']);
    assert.deepEqual(out.deadLetters, []);
});
test('a malformed record is a dead letter with its reason and a malformed row keeping its key and raw bytes', async () => {
    const raw = Buffer.from('{"LoopID": 7, "this is": "not an envelope"}');
    const record = { topic: 't', partition: 3, offset: '41', timestamp: '1764504000000', key: Buffer.from('loop-key'), value: raw };
    const out = await processEnvelopeBatch([record], new ChainState(new MemoryEnvelopeTable()), { ...DEFAULT_DECODE_OPTIONS, seqEncoding: 'binary' });
    assert.equal(out.deadLetters.length, 1);
    assert.equal(out.deadLetters[0].record, record);
    assert.ok(out.deadLetters[0].reason.length > 0);
    assert.deepEqual(out.rows, [
        {
            loop_id: 'loop-key',
            seq: 0,
            // The record's Kafka timestamp: the same whichever member judges it.
            time: '2025-11-30 12:00:00',
            time_text: '',
            kind: '',
            kind_class: '',
            hash: '',
            computed_hash: '',
            payload: raw.toString('base64'),
            verdict: 'malformed',
            detail: out.deadLetters[0].reason,
            evidence: '',
            // No payload facts: every slot at its default (pinned by test/unit/rows/envelope-facts.test.ts).
            ...NO_SLOTS,
            kafka_topic: 't',
            kafka_partition: 3,
            kafka_offset: '41',
            // The flush's, set right before the insert.
            ingested_at: '',
        },
    ]);
    assert.deepEqual([...out.verdicts], [['malformed', 1]]);
});
test('judging the next batches while the previous one is in flight (sealed, not yet durable) gives the verdicts of one flush per batch, redeliveries included', async () => {
    for (const want of expected) {
        const lines = readFileSync(`${DIR}${want.file}`, 'utf8').split('\n').filter((l) => l.length > 0);
        const options = { ...DEFAULT_DECODE_OPTIONS, seqEncoding: want.seqEncoding };
        for (const batchSize of [1, 7, 64]) {
            const serial = await run(lines, options, batchSize, false);
            // The same records, then a redelivery of a stretch of them (a rebalance's), judged while two buffers are pending at once.
            const all = records([...lines, ...lines.slice(3, 3 + 2 * batchSize)]);
            const table = new MemoryEnvelopeTable();
            const state = new ChainState(table);
            let inFlight;
            for (let i = 0; i < all.length; i += batchSize) {
                const out = await processEnvelopeBatch(all.slice(i, i + batchSize), state, options);
                const buffer = state.seal();
                // The previous buffer's insert lands only now, after this batch was judged.
                if (inFlight) {
                    await table.insert(inFlight.rows);
                    state.flushed(inFlight.buffer);
                }
                inFlight = { rows: out.rows, buffer };
            }
            if (inFlight) {
                await table.insert(inFlight.rows);
                state.flushed(inFlight.buffer);
            }
            const key = (r) => `${r.loop_id}/${r.seq}/${r.verdict}/${r.hash}`;
            assert.deepEqual(table.rows.map(key).sort(), serial.table.rows.map(key).sort(), `${want.file}, batches of ${batchSize}`);
        }
    }
});
test('a buffer that lands while the next batch reads the store back keeps its versions pending for that batch: a redelivery in it is still a duplicate', async () => {
    const lines = readFileSync(`${DIR}honest.jsonl`, 'utf8').split('\n').filter((l) => l.length > 0).slice(0, 40);
    const options = { ...DEFAULT_DECODE_OPTIONS, seqEncoding: 'binary' };
    const table = new MemoryEnvelopeTable();
    const state = new ChainState(table);
    const all = records(lines);
    const first = await processEnvelopeBatch(all.slice(0, 30), state, options);
    const buffer = state.seal();
    // The next batch redelivers the first one's records 20-29 (a producer retry) before it lands.
    const redelivered = all.slice(20, 30).map((r, i) => ({ ...r, offset: String(40 + i) }));
    const read = table.versions.bind(table);
    table.versions = async (keys) => {
        const answer = await read(keys); // read before the first batch's insert lands…
        await table.insert(first.rows); // …which lands now, while this batch is being judged
        state.flushed(buffer);
        return answer;
    };
    const second = await processEnvelopeBatch([...redelivered, ...all.slice(30)], state, options);
    assert.equal(second.verdicts.get('duplicate'), redelivered.length, JSON.stringify([...second.verdicts]));
    assert.deepEqual(second.rows.map((r) => r.kafka_offset), all.slice(30).map((r) => r.offset));
});
test('heads are read from the store once per loop, then served from the cache', async () => {
    const lines = readFileSync(`${DIR}tampered-payload.jsonl`, 'utf8').split('\n').filter((l) => l.length > 0);
    const table = new MemoryEnvelopeTable();
    const state = new ChainState(table);
    const all = records(lines);
    const options = { ...DEFAULT_DECODE_OPTIONS, seqEncoding: 'binary' };
    for (let i = 0; i < all.length; i += 10) {
        await table.insert((await processEnvelopeBatch(all.slice(i, i + 10), state, options)).rows);
        state.flushed();
    }
    const asked = table.reads.heads.flat();
    assert.equal(asked.length, new Set(asked).size, 'no loop asked twice');
    assert.equal(new Set(asked).size, 5);
});
//# sourceMappingURL=envelopes.test.js.map