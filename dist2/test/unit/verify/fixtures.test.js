/**
 * Cross-language proof: chains written by a Go program (test/fixtures/envelopes/gen,
 * standard library only, the seed's types verbatim) verify in TypeScript, and
 * each planted tampering yields exactly the expected verdicts — no more, no less.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { decodeEnvelope, DEFAULT_DECODE_OPTIONS } from '../../../src/decode/envelope.js';
import { isViolation } from '../../../src/verify/chain.js';
import { MemoryChains } from '../../../src/verify/memory-chains.js';
const DIR = fileURLToPath(new URL('../../../../test/fixtures/envelopes/', import.meta.url));
const expected = JSON.parse(readFileSync(`${DIR}expected.json`, 'utf8'));
function run(file, seqEncoding) {
    const chains = new MemoryChains(seqEncoding);
    const lines = readFileSync(`${DIR}${file}`, 'utf8').split('\n').filter((l) => l.length > 0);
    const violations = [];
    let duplicates = 0;
    for (const line of lines) {
        const decoded = decodeEnvelope(Buffer.from(line), DEFAULT_DECODE_OPTIONS);
        assert.ok(decoded.ok, `${file}: ${decoded.ok ? '' : decoded.reason}`);
        const r = chains.verify(decoded.value);
        if (r.verdict === 'duplicate')
            duplicates++;
        if (isViolation(r.verdict))
            violations.push({ loopId: decoded.value.loopId, seq: decoded.value.seq, verdict: r.verdict });
    }
    violations.sort((a, b) => (a.loopId === b.loopId ? a.seq - b.seq : a.loopId < b.loopId ? -1 : 1));
    return { lines: lines.length, loops: chains.loopCount, violations, duplicates };
}
for (const e of expected) {
    test(`${e.file}: exactly the planted verdicts`, () => {
        const r = run(e.file, e.seqEncoding);
        assert.equal(r.lines, e.envelopes);
        assert.equal(r.loops, e.loops);
        assert.deepEqual(r.violations, e.violations);
        if (e.file === 'tampered-duplicate.jsonl')
            assert.equal(r.duplicates, 3);
    });
}
test('a decimal-Seq producer fails every loop at Seq 1 under the default setting, with a hint', () => {
    const r = run('honest-seq-decimal.jsonl', 'binary');
    const firsts = r.violations.filter((v) => v.seq === 1);
    assert.equal(firsts.length, r.loops);
    assert.ok(firsts.every((v) => v.verdict === 'mismatch'));
    const chains = new MemoryChains('binary');
    const line = readFileSync(`${DIR}honest-seq-decimal.jsonl`, 'utf8').split('\n')[0];
    const d = decodeEnvelope(Buffer.from(line));
    assert.ok(d.ok);
    assert.match(chains.verify(d.value).detail, /AGENTLEDGER_SEQ_ENCODING=decimal/);
});
test('int64 and USD fields of the Go payloads are read exactly', () => {
    const lines = readFileSync(`${DIR}honest.jsonl`, 'utf8').split('\n').filter((l) => l.length > 0);
    let seeds = 0;
    let costs = 0;
    for (const line of lines) {
        const d = decodeEnvelope(Buffer.from(line));
        assert.ok(d.ok);
        const body = d.value.body;
        if (body?.kind === 'LoopStarted') {
            // The seed is an int64 beyond 2^53: its digits must survive.
            const digits = /"seed":(-?\d+)/.exec(d.value.payloadText)?.[1];
            assert.equal(body.seed.toString(), digits);
            seeds++;
        }
        if (body?.kind === 'ModelCalled') {
            const text = /"cost_usd":([^,}]+)/.exec(d.value.payloadText.slice(d.value.payloadText.lastIndexOf('"usage"')))?.[1];
            assert.equal(body.usage.cost_usd.text, text);
            costs++;
        }
    }
    assert.ok(seeds > 40 && costs > 100, `${seeds} seeds, ${costs} costs`);
});
//# sourceMappingURL=fixtures.test.js.map