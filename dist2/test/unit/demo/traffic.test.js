/**
 * The demo traffic generator against the project's own decoder and verifier:
 * every planted problem gets exactly the verdict `expected` names, nothing
 * else is reported, and every bad record is rejected.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { verifyCommand } from '../../../src/cli/verify.js';
import { parseConfig } from '../../../src/config/index.js';
import { decodeEnvelope } from '../../../src/decode/envelope.js';
import { defaultViolationPlan, formatRfc3339Nano, generateTraffic, malformedRecords, parseUtcNanos, writeTrafficJsonl, } from '../../../src/demo/traffic/index.js';
import { createLogger } from '../../../src/observability/logger.js';
import { isViolation } from '../../../src/verify/chain.js';
import { MemoryChains } from '../../../src/verify/memory-chains.js';
const byKey = (a, b) => a.loopId === b.loopId ? a.seq - b.seq : a.loopId < b.loopId ? -1 : 1;
function verifyAll(opts) {
    const traffic = generateTraffic(opts);
    const chains = new MemoryChains('binary');
    const violations = [];
    const malformed = [];
    const stored = new Map();
    const perLoop = new Map();
    const lastSeq = new Map();
    let records = 0;
    let duplicates = 0;
    let bytes = 0;
    let outOfOrder = 0;
    for (const r of traffic.records) {
        records++;
        bytes += r.value.length;
        const d = decodeEnvelope(r.value);
        if (!d.ok) {
            malformed.push(d.reason);
            continue;
        }
        const e = d.value;
        assert.equal(r.key, e.loopId, 'the record key is the LoopID');
        assert.ok(e.kindClass, `kind ${e.kind} is one the runtime writes`);
        // A seq arriving for the first time after a later one (not a fork's or a redelivery's second copy).
        if (!stored.has(`${e.loopId}\n${e.seq}`) && e.seq < (lastSeq.get(e.loopId) ?? 0))
            outOfOrder++;
        lastSeq.set(e.loopId, Math.max(e.seq, lastSeq.get(e.loopId) ?? 0));
        perLoop.set(e.loopId, (perLoop.get(e.loopId) ?? 0) + 1);
        stored.set(`${e.loopId}\n${e.seq}`, { loopId: e.loopId, seq: e.seq });
        const v = chains.verify(e);
        if (v.verdict === 'duplicate')
            duplicates++;
        if (isViolation(v.verdict))
            violations.push({ loopId: e.loopId, seq: e.seq, verdict: v.verdict });
    }
    violations.sort(byKey);
    return { traffic, violations, malformed, stored: [...stored.values()].sort(byKey), perLoop, records, duplicates, bytes, outOfOrder, loops: chains.loopCount };
}
test('200 loops with planted problems: exactly the expected verdicts, nothing malformed', () => {
    const plan = defaultViolationPlan(200);
    const r = verifyAll({ loops: 200, envelopesPerLoop: [3, 40], seed: 42, payloadBytes: 400, violations: plan });
    const { expected } = r.traffic;
    assert.deepEqual(r.malformed, []);
    assert.deepEqual(r.violations, expected.violations);
    assert.equal(r.duplicates, expected.duplicates);
    assert.equal(r.duplicates, plan.duplicate);
    assert.equal(r.loops, 200);
    assert.equal(r.records, expected.records);
    assert.deepEqual(r.stored, expected.stored);
    assert.equal(expected.stored.length, expected.envelopes);
    for (const l of expected.loops)
        assert.equal(r.perLoop.get(l.loopId), l.records, l.loopId);
    // Every kind of problem is planted, at the first, a middle and the last usable seq.
    const planted = expected.loops.filter((l) => l.planted);
    assert.equal(planted.length, Object.values(plan).reduce((a, b) => a + b, 0));
    for (const kind of Object.keys(plan))
        assert.ok(planted.some((l) => l.planted?.kind === kind), kind);
    assert.ok(planted.some((l) => l.planted?.kind === 'mismatch' && l.planted.seq === 1));
    assert.ok(planted.some((l) => l.planted?.kind === 'mismatch' && l.planted.seq === l.envelopes));
    const verdicts = new Set(expected.violations.map((v) => v.verdict));
    assert.deepEqual([...verdicts].sort(), ['fork', 'gap', 'mismatch', 'regression', 'time_regression']);
    // Only the reordered loops deliver a seq after a later one.
    assert.equal(r.outOfOrder, plan.reorder);
});
test('a clean run has no violation, no duplicate, and every envelope stored once', () => {
    const r = verifyAll({ loops: 200, envelopesPerLoop: [1, 60], seed: 7, payloadBytes: 300 });
    assert.deepEqual(r.malformed, []);
    assert.deepEqual(r.violations, []);
    assert.deepEqual(r.traffic.expected.violations, []);
    assert.equal(r.duplicates, 0);
    assert.equal(r.outOfOrder, 0);
    assert.equal(r.records, r.traffic.expected.envelopes);
    assert.deepEqual(r.stored, r.traffic.expected.stored);
});
test('the records are deterministic and interleaved across loops', () => {
    const opts = { loops: 30, envelopesPerLoop: 20, seed: 5, payloadBytes: 600, violations: defaultViolationPlan(30) };
    const a = [...generateTraffic(opts).records];
    const traffic = generateTraffic(opts);
    const b = [...traffic.records];
    const again = [...traffic.records];
    assert.equal(a.length, b.length);
    assert.ok(a.every((r, i) => r.key === b[i].key && r.value.equals(b[i].value)));
    assert.ok(again.every((r, i) => r.value.equals(b[i].value)), 'iterating twice gives the same records');
    const other = [...generateTraffic({ ...opts, seed: 6 }).records];
    assert.ok(!other[0].value.equals(a[0].value));
    // Interleaved: loops run at the same time, so the topic switches between them far more often than once per loop.
    const switches = a.filter((r, i) => i > 0 && r.key !== a[i - 1].key).length;
    assert.ok(switches > 3 * opts.loops, `only ${switches} loop switches in ${a.length} records`);
});
test('fixed seeds give the bytes they always gave', () => {
    // Pinned from the generator before it was split into files (issue 7): a
    // change to any draw from the PRNG, any JSON byte or any hash shows here.
    const digest = (opts) => {
        const h = createHash('sha256');
        const traffic = generateTraffic(opts);
        for (const r of traffic.records)
            h.update(r.key).update('\n').update(r.value).update('\n');
        return h.update(JSON.stringify(traffic.expected)).digest('hex');
    };
    assert.equal(digest({ loops: 60, envelopesPerLoop: [3, 40], seed: 42, payloadBytes: 700, violations: defaultViolationPlan(60) }), '7ab9863e763ae8647742c765f7f93d5338c61bb2b12b3d1b66ac66796922e97c');
    assert.equal(digest({ loops: 25, envelopesPerLoop: [1, 30], seed: 2026, payloadBytes: 0, startTime: '2026-12-31T23:59:59.5Z' }), '7b0caffcab4bc80ebc3fc454a8b8deb634c2a36a1f13c87bd596046101f3291c');
    const bad = createHash('sha256');
    for (const b of malformedRecords())
        bad.update(b.name).update('\n').update(b.key ?? '<null>').update('\n').update(b.value).update('\n');
    assert.equal(bad.digest('hex'), 'dcac7871199d720feb2536de9e36b9298e3c1b8c0dbcc583f5bdd2ce9abafe59');
});
test('records average about payloadBytes', () => {
    for (const payloadBytes of [1024, 4096]) {
        const r = verifyAll({ loops: 40, envelopesPerLoop: 25, seed: 1, payloadBytes });
        const avg = r.bytes / r.records;
        assert.ok(Math.abs(avg - payloadBytes) / payloadBytes < 0.1, `average ${avg} for ${payloadBytes}`);
    }
});
test('times are Go RFC3339Nano text, built from integer nanoseconds, monotonic per loop', () => {
    assert.equal(formatRfc3339Nano(parseUtcNanos('2026-11-30T10:00:00Z')), '2026-11-30T10:00:00Z');
    assert.equal(formatRfc3339Nano(parseUtcNanos('2026-11-30T10:00:00.123456789Z')), '2026-11-30T10:00:00.123456789Z');
    assert.equal(formatRfc3339Nano(parseUtcNanos('2026-11-30T10:00:00.120Z')), '2026-11-30T10:00:00.12Z');
    assert.equal(formatRfc3339Nano(parseUtcNanos('2026-12-31T23:59:59.999999999Z') + 1n), '2027-01-01T00:00:00Z');
    assert.equal(formatRfc3339Nano(1n), '1970-01-01T00:00:00.000000001Z');
    assert.throws(() => parseUtcNanos('2026-11-30 10:00:00'), RangeError);
    const seen = new Map();
    let whole = 0;
    let equal = 0;
    for (const r of generateTraffic({ loops: 50, envelopesPerLoop: 40, seed: 9, payloadBytes: 0, startTime: '2026-11-30T23:59:00Z' }).records) {
        const { LoopID, Time } = JSON.parse(r.value.toString('utf8'));
        assert.match(Time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z$/);
        const ns = parseUtcNanos(Time);
        const prev = seen.get(LoopID);
        if (prev !== undefined) {
            assert.ok(ns >= prev, `${LoopID}: ${Time} goes back`);
            if (ns === prev)
                equal++;
        }
        if (!Time.includes('.'))
            whole++;
        seen.set(LoopID, ns);
    }
    assert.ok(whole > 0, 'some times are whole seconds');
    assert.ok(equal > 0, 'some consecutive times are equal');
});
test('every malformed record is rejected by decodeEnvelope', () => {
    const bad = malformedRecords();
    assert.ok(bad.length >= 16);
    assert.equal(new Set(bad.map((b) => b.name)).size, bad.length);
    for (const b of bad) {
        const d = decodeEnvelope(b.value);
        assert.equal(d.ok, false, `${b.name} decoded`);
    }
    const huge = bad.find((b) => b.name.includes('10 MB'));
    assert.ok(huge && huge.value.length > (10 * 1024 * 1024 * 4) / 3);
    assert.ok(bad.some((b) => b.value.toString('latin1').includes('"Seq":9007199254740993,')));
});
test('agentledger verify over the JSONL of the traffic reports the expected verdicts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentledger-traffic-'));
    try {
        const traffic = generateTraffic({ loops: 60, envelopesPerLoop: [3, 30], seed: 11, payloadBytes: 500, violations: defaultViolationPlan(60) });
        // Bad records a JSONL line can carry (valid UTF-8, no newline, not empty), in the middle.
        const bad = malformedRecords().filter((b) => b.value.length > 0 && !b.value.includes(0x0a) && isUtf8(b.value));
        const records = [...traffic.records];
        const half = Math.floor(records.length / 2);
        const file = join(dir, 'traffic.jsonl');
        const lines = await writeTrafficJsonl(file, [...records.slice(0, half), ...bad, ...records.slice(half)]);
        assert.equal(lines, records.length + bad.length);
        const out = [];
        const config = parseConfig({});
        const code = await verifyCommand.run([file, '--json'], { config, log: createLogger('error'), out: (l) => out.push(l) });
        assert.equal(code, 1);
        const report = JSON.parse(out.join('\n'));
        assert.equal(report.envelopes, lines);
        assert.equal(report.duplicates, traffic.expected.duplicates);
        const chain = report.violations.filter((v) => v.verdict !== 'malformed').map(({ loopId, seq, verdict }) => ({ loopId, seq, verdict }));
        assert.deepEqual(chain.sort(byKey), traffic.expected.violations);
        assert.equal(report.violations.filter((v) => v.verdict === 'malformed').length, bad.length);
    }
    finally {
        rmSync(dir, { recursive: true, force: true });
    }
});
function isUtf8(b) {
    try {
        new TextDecoder('utf-8', { fatal: true }).decode(b);
        return true;
    }
    catch {
        return false;
    }
}
//# sourceMappingURL=traffic.test.js.map