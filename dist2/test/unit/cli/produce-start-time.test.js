/**
 * produce-demo --start-time: an RFC 3339 UTC time as given, `now` and
 * `now-N<s|m|h|d>` relative to the clock (whole seconds), anything else a
 * usage error naming the option; the generated loops start there.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../../src/cli/command.js';
import { startTimeOf } from '../../../src/cli/produce.js';
import { generateTraffic } from '../../../src/demo/traffic/index.js';
const NOW = new Date('2026-12-01T14:30:15.750Z');
test('now and now-N take whole seconds back from the clock', () => {
    assert.equal(startTimeOf('now', NOW), '2026-12-01T14:30:15Z');
    assert.equal(startTimeOf('now-20m', NOW), '2026-12-01T14:10:15Z');
    assert.equal(startTimeOf('now-90s', NOW), '2026-12-01T14:28:45Z');
    assert.equal(startTimeOf('now-2h', NOW), '2026-12-01T12:30:15Z');
    assert.equal(startTimeOf('now-1d', NOW), '2026-11-30T14:30:15Z');
});
test('an RFC 3339 UTC time is taken as written', () => {
    assert.equal(startTimeOf('2026-11-30T10:00:00Z', NOW), '2026-11-30T10:00:00Z');
    assert.equal(startTimeOf('2026-11-30T10:00:00.123456789Z', NOW), '2026-11-30T10:00:00.123456789Z');
});
test('anything else is a usage error that names --start-time', () => {
    for (const bad of ['', 'yesterday', 'now-', 'now-5', 'now+5m', 'now-5w', '2026-11-30 10:00:00Z', '2026-11-30T10:00:00+01:00', '2026-11-30T10:00:00']) {
        assert.throws(() => startTimeOf(bad, NOW), (e) => e instanceof UsageError && /--start-time/.test(e.message), bad);
    }
});
test('the generated loops start at the start time, not before', () => {
    const start = Date.parse('2026-12-01T14:10:15Z');
    const traffic = generateTraffic({ loops: 20, envelopesPerLoop: 4, seed: 3, startTime: '2026-12-01T14:10:15Z' });
    const times = [...traffic.records].map((r) => Date.parse(JSON.parse(r.value.toString('utf8')).Time));
    assert.ok(times.length > 0);
    assert.ok(times.every((t) => t >= start && t < start + 3_600_000), 'every envelope within an hour of the start');
});
//# sourceMappingURL=produce-start-time.test.js.map