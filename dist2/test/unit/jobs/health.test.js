import assert from 'node:assert/strict';
import { test } from 'node:test';
import { overdueAfterMs, queueReport } from '../../../src/jobs/health.js';
const counts = { waiting: 3, active: 1, delayed: 1, prioritized: 0, failed: 2 };
const NOW = 1_800_000_000_000;
test('a queue without a scheduler: its depth only', () => {
    assert.deepEqual(queueReport('alert-deliveries', counts, undefined, NOW, false), { ok: true, text: 'alert-deliveries: 3 waiting, 1 active, 1 delayed, 0 prioritized, 2 failed' });
});
test('a scheduled queue no worker has started: fine, and said', () => {
    assert.deepEqual(queueReport('alerts', {}, undefined, NOW, true), { ok: true, text: 'alerts: 0 waiting, 0 active, 0 delayed, 0 prioritized, 0 failed; no worker has started yet' });
});
test('a sweep due soon, or late within two intervals and a minute, is fine; later than that fails', () => {
    const every = 30_000;
    assert.equal(overdueAfterMs(every), 120_000);
    assert.deepEqual(queueReport('rollups', counts, { every, next: NOW + 12_000 }, NOW, true).text.endsWith('next sweep in 12 s'), true);
    const edge = queueReport('rollups', counts, { every, next: NOW - 120_000 }, NOW, true);
    assert.deepEqual([edge.ok, edge.text.endsWith('next sweep due 120 s ago')], [true, true]);
    const over = queueReport('rollups', counts, { every, next: NOW - 120_001 }, NOW, true);
    assert.equal(over.ok, false);
    assert.match(over.text, /its sweep was due 120 s ago: is agentledger worker running\?$/);
});
//# sourceMappingURL=health.test.js.map