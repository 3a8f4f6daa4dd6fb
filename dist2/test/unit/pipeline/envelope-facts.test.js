/**
 * processEnvelopeBatch fills the payload facts (migration 0008) on the row of
 * every verdict but malformed: a fork's second version and a mismatch carry
 * theirs, so unverified spend can be reported. A record whose cost no Int64
 * holds is refused by the decoder like any undecodable one (a dead letter and
 * a malformed row with the default facts), before it is judged: the chain
 * does not move past it, and the next envelope of its loop is a gap.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { DEFAULT_DECODE_OPTIONS } from '../../../src/decode/envelope.js';
import { ChainState, processEnvelopeBatch } from '../../../src/pipeline/envelopes.js';
import { MemoryEnvelopeTable } from '../../support/memory-tables.js';
import { NO_SLOTS, SLOT_NAMES, unfoldSlots } from '../../../src/rows/envelope-facts.js';
const OPTIONS = { ...DEFAULT_DECODE_OPTIONS, seqEncoding: 'binary' };
const LOOP = 'loop-facts';
/** A link's hash as docs/input-contracts.md §1 defines it, written here apart from src/verify. */
function linkHash(prev, seq, time, kind, payload) {
    const seqBytes = Buffer.alloc(8);
    seqBytes.writeBigUInt64BE(BigInt(seq));
    return createHash('sha256').update(Buffer.concat([prev, Buffer.from(LOOP), seqBytes, Buffer.from(time), Buffer.from(kind), Buffer.from(payload)])).digest();
}
/** Go's encoding/json form of an envelope chained onto `prev`; returns the record value and its hash. */
function envelope(prev, link) {
    const time = `2026-11-30T10:00:${String(link.seq).padStart(2, '0')}.5Z`;
    const hash = linkHash(prev, link.seq, time, link.kind, link.payload);
    const carried = link.tampered ? Buffer.alloc(32, 7) : hash;
    const value = JSON.stringify({ LoopID: LOOP, Seq: link.seq, Time: time, Kind: link.kind, Payload: Buffer.from(link.payload).toString('base64'), Hash: [...carried] });
    return { value, hash };
}
const records = (values) => values.map((v, i) => ({ topic: 'agent.envelopes', partition: 0, offset: String(i), timestamp: '1764504000000', key: Buffer.from(LOOP), value: Buffer.from(v) }));
const model = (cost) => `{"model":"m1","provider":"p1","usage":{"cost_usd":${cost},"in":10,"out":20}}`;
test('every verdict but malformed carries its facts; a cost beyond Int64 is malformed before it is judged', async () => {
    const zero = Buffer.alloc(32);
    const s1 = envelope(zero, { seq: 1, kind: 'LoopStarted', payload: '{"config_hash":"h","depth":1,"name":"child","parent_id":"loop-root","seed":5}' });
    const s2 = envelope(s1.hash, { seq: 2, kind: 'ModelCalled', payload: model('1e-7') });
    // Seq 2 again with other content: a fork (second version) whose cost is unverified.
    const s2b = envelope(s1.hash, { seq: 2, kind: 'ModelCalled', payload: model('2.5e-12') });
    const s3 = envelope(s2.hash, { seq: 3, kind: 'ModelCalled', payload: model('9300000') });
    const s4 = envelope(s3.hash, { seq: 4, kind: 'BudgetCharged', payload: '{"action_type":"model","tokens":30,"usd":1e-7}' });
    const s5 = envelope(s4.hash, { seq: 5, kind: 'ModelCalled', payload: model('3.5e-12'), tampered: true });
    const s6 = envelope(s5.hash, { seq: 6, kind: 'SomethingNew', payload: '{"usage":{"cost_usd":1}}' });
    const table = new MemoryEnvelopeTable();
    const out = await processEnvelopeBatch(records([s1.value, s2.value, s2b.value, s3.value, 'not json', s4.value, s5.value, s6.value]), new ChainState(table), OPTIONS);
    await table.insert(out.rows);
    // As JSONEachRow carries them (the memory table stores rows through JSON).
    const rows = table.rows;
    // The facts as the table's ALIAS columns read them from the stored slots.
    const pick = (row) => {
        const r = unfoldSlots(row.kind_class, row);
        return [row.seq, row.verdict, row.kind_class, r.model_provider, r.cost_pico, r.cost_usd_text, r.input_tokens, r.budget_pico, r.budget_tokens, r.loop_name, r.parent_loop_id, r.depth];
    };
    assert.equal(rows.length, 8);
    assert.deepEqual(rows.slice(0, 7).map(pick), [
        [1, 'ok', 'LoopStarted', '', '0', '', '0', '0', '0', 'child', 'loop-root', '1'],
        [2, 'ok', 'ModelCalled', 'p1', '100000', '1e-7', '10', '0', '0', '', '', '0'],
        [2, 'fork', 'ModelCalled', 'p1', '2', '2.5e-12', '10', '0', '0', '', '', '0'],
        // The refused record (seq 3) and the record that is not JSON: seq 0, no facts.
        [0, 'malformed', '', '', '0', '', '0', '0', '0', '', '', '0'],
        [0, 'malformed', '', '', '0', '', '0', '0', '0', '', '', '0'],
        // The refused seq 3 did not move the chain: seq 4 is a gap, and still carries its facts.
        [4, 'gap', 'BudgetCharged', '', '0', '', '0', '100000', '30', '', '', '0'],
        [5, 'mismatch', 'ModelCalled', 'p1', '4', '3.5e-12', '10', '0', '0', '', '', '0'],
    ]);
    assert.equal(rows[5].detail, 'expected seq 3, got 4');
    // The unknown kind is stored, with every fact at its default.
    const unknown = rows[7];
    assert.deepEqual([unknown.kind, unknown.kind_class], ['SomethingNew', '']);
    assert.deepEqual(SLOT_NAMES.map((slot) => unknown[slot]), SLOT_NAMES.map((slot) => NO_SLOTS[slot]));
    // One dead letter per malformed row, the refused cost named in its reason.
    assert.equal(out.deadLetters.length, 2);
    assert.match(out.deadLetters[0].reason, /^ModelCalled payload: usage\.cost_usd: 9300000 USD is 9300000000000000000 picodollars, beyond Int64/);
    assert.equal(out.deadLetters[0].record.offset, '3');
    assert.equal(rows[3].detail, out.deadLetters[0].reason);
    assert.equal(out.verdicts.get('malformed'), 2);
});
//# sourceMappingURL=envelope-facts.test.js.map