/**
 * The stall watchdog alone, on a fake clock: it fires once, only when no
 * progress was made for its whole period while records wait (or Kafka does
 * not answer), and never while ingest is idle with nothing to do.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StallWatchdog } from '../../../src/ingest/stall-watchdog.js';
function harness(waiting, lastFailure) {
    const state = { now: 1_000_000, progress: 1_000_000, observed: [], stalls: [], idles: 0 };
    const ports = {
        stallMs: 60_000,
        now: () => state.now,
        lastProgress: () => state.progress,
        idle: () => {
            state.idles++;
            state.progress = state.now;
        },
        waiting,
        lastFailure: () => lastFailure,
        observe: (s) => state.observed.push(s),
        stalled: (why) => state.stalls.push(why),
    };
    return { state, dog: new StallWatchdog(ports) };
}
test('records waiting and no progress for the whole period: one stall, saying how many wait and the last failure', async () => {
    let asked = 0;
    const { state, dog } = harness(() => {
        asked++;
        return Promise.resolve(42n);
    }, 'ECONNRESET from ClickHouse');
    state.now += 59_999;
    await dog.check();
    assert.equal(asked, 0, 'not asked before the period is over');
    assert.deepEqual(state.stalls, []);
    state.now += 1;
    await dog.check();
    assert.equal(state.stalls.length, 1);
    assert.match(state.stalls[0] ?? '', /^no rows made durable for 60 s while 42 record\(s\) wait in this member's partitions; last failure: ECONNRESET from ClickHouse$/);
    state.now += 120_000;
    await dog.check();
    assert.equal(state.stalls.length, 1, 'said once');
    assert.deepEqual(state.observed, [59, 60]);
});
test('nothing waiting is idleness, not a stall: the clock starts again', async () => {
    const { state, dog } = harness(() => Promise.resolve(0n));
    state.now += 61_000;
    await dog.check();
    assert.deepEqual(state.stalls, []);
    assert.equal(state.idles, 1);
    state.now += 59_000;
    await dog.check();
    assert.deepEqual(state.stalls, [], 'the period counts from the idle check');
});
test('progress made meanwhile, or Kafka not answering the check', async () => {
    const late = harness(() => Promise.resolve(5n));
    late.state.now += 30_000;
    late.state.progress = late.state.now;
    late.state.now += 59_000;
    await late.dog.check();
    assert.deepEqual(late.state.stalls, [], 'progress 59 s ago is no stall');
    const racing = harness(() => {
        racing.state.progress = racing.state.now; // a flush landed while the check ran
        return Promise.resolve(7n);
    });
    racing.state.now += 70_000;
    await racing.dog.check();
    assert.deepEqual(racing.state.stalls, []);
    const away = harness(() => Promise.reject(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:9092')));
    away.state.now += 60_000;
    await away.dog.check();
    assert.equal(away.state.stalls.length, 1);
    assert.match(away.state.stalls[0] ?? '', /while Kafka did not answer the lag check \(Connection error: connect ECONNREFUSED/);
});
//# sourceMappingURL=stall-watchdog.test.js.map