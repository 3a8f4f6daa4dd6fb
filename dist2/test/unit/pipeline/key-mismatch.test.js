/**
 * Issue 9, finding 10: a record whose Kafka key is not its LoopID (a null key,
 * a producer keying by something else) can split a loop across partitions.
 * Its row says so in its detail and the batch counts it under KEY_MISMATCH,
 * for the metric; the verdict stays what the chain says, judged by LoopID.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULT_DECODE_OPTIONS } from '../../../src/decode/envelope.js';
import { ChainState, KEY_MISMATCH, processEnvelopeBatch } from '../../../src/pipeline/envelopes.js';
import { MemoryEnvelopeTable } from '../../support/memory-tables.js';
const OPTIONS = { ...DEFAULT_DECODE_OPTIONS, seqEncoding: 'binary' };
const LOOP = 'loop-std-08';
const lines = readFileSync(fileURLToPath(new URL('../../../../test/fixtures/envelopes/honest.jsonl', import.meta.url)), 'utf8')
    .split('\n')
    .filter((l) => l.includes(`"LoopID":"${LOOP}"`));
/** The loop's first six envelopes, seq 4 left out (a gap), with the given keys (the LoopID past their end). */
function batch(keys) {
    return [0, 1, 2, 4, 5].map((at, i) => ({
        topic: 'agent.envelopes',
        partition: 0,
        offset: String(i),
        timestamp: '1764504000000',
        key: i < keys.length ? keys[i] : Buffer.from(LOOP),
        value: Buffer.from(lines[at]),
    }));
}
const judge = (records) => processEnvelopeBatch(records, new ChainState(new MemoryEnvelopeTable()), OPTIONS);
test('a null or wrong key is noted in the detail and counted; the right key is not; verdicts are unchanged', async () => {
    const right = await judge(batch([]));
    assert.deepEqual(right.rows.map((r) => [r.verdict, r.detail]), [
        ['ok', ''],
        ['ok', ''],
        ['ok', ''],
        ['gap', 'expected seq 4, got 5'],
        ['ok', ''],
    ]);
    assert.equal(right.verdicts.get(KEY_MISMATCH), undefined);
    // Record 1 has no key, record 3 (the gap) another loop's key, record 4 its LoopID plus a byte.
    const wrong = await judge(batch([Buffer.from(LOOP), null, Buffer.from(LOOP), Buffer.from('loop-std-09\n'), Buffer.from(`${LOOP}\0`)]));
    assert.deepEqual(wrong.rows.map((r) => r.verdict), right.rows.map((r) => r.verdict));
    assert.deepEqual(wrong.rows.map((r) => r.detail), [
        '',
        'Kafka key is null: the producer must key records by LoopID, or a loop is split across partitions and its verdicts may be false',
        '',
        'expected seq 4, got 5; Kafka key "loop-std-09\\n" (12 bytes) is not the LoopID: the producer must key records by LoopID, or a loop is split across partitions and its verdicts may be false',
        'Kafka key "loop-std-08\\u0000" (12 bytes) is not the LoopID: the producer must key records by LoopID, or a loop is split across partitions and its verdicts may be false',
    ]);
    assert.equal(wrong.verdicts.get(KEY_MISMATCH), 3);
    const withoutFlag = new Map(wrong.verdicts);
    withoutFlag.delete(KEY_MISMATCH);
    assert.deepEqual(withoutFlag, right.verdicts);
});
test('a long or binary key is quoted cut to 64 characters, never leaving a lone surrogate', async () => {
    const key = Buffer.from('😀'.repeat(100));
    const out = await judge(batch([key]));
    const detail = out.rows[0].detail;
    assert.equal(detail.startsWith(`Kafka key "${'😀'.repeat(64)}"… (400 bytes) is not the LoopID`), true, detail);
    const binary = await judge(batch([Buffer.from([0xff, 0x00, 0xc3])]));
    assert.match(binary.rows[0].detail, /^Kafka key "\uFFFD\\u0000\uFFFD" \(3 bytes\) is not the LoopID/);
});
//# sourceMappingURL=key-mismatch.test.js.map