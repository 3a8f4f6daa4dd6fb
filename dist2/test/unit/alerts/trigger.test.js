import assert from 'node:assert/strict';
import { beforeEach, afterEach, mock, test } from 'node:test';
import { AlertTrigger, newsOf } from '../../../src/alerts/trigger.js';
import { createLogger } from '../../../src/observability/logger.js';
const env = (loop_id, kind_class, verdict = 'ok') => ({ loop_id, kind_class, verdict });
const log = createLogger('error');
test('news: the loops a rule without a clock reads, and whether sub-agent outcomes came', () => {
    const news = newsOf([
        env('a', 'IterationStarted'),
        env('b', 'LoopFinished'),
        env('c', 'ConvergenceWarning'),
        env('d', 'HumanResponded'),
        env('e', 'IterationStarted', 'mismatch'),
        env('f', 'IterationStarted', 'gap'),
        env('g', 'ModelCalled'),
        env('h', 'SubAgentCompleted', 'malformed'),
    ]);
    assert.deepEqual([...news.loops].sort(), ['b', 'c', 'd', 'e']);
    assert.equal(news.rates, false, 'a malformed report is no outcome');
    assert.equal(newsOf([env('p', 'SubAgentCompleted')]).rates, true);
    assert.deepEqual([...newsOf([env('p', 'SubAgentCompleted')]).loops], ['p'], 'its parent may have reported a Stuck child');
    assert.equal(newsOf([{ subagent_change: 'finished', verdict: 'ok' }]).rates, true, 'a craze sub-agent finished');
    assert.equal(newsOf([{ subagent_change: 'spawned', verdict: 'ok' }]).rates, false);
});
/** A send whose calls settle when the test says. */
function heldQueue() {
    const calls = [];
    const releases = [];
    return {
        calls,
        release: (err) => releases.shift()(err),
        send: (loops, rates) => {
            calls.push({ loops, rates });
            return new Promise((resolve, reject) => releases.push((err) => (err ? reject(err) : resolve())));
        },
    };
}
/**
 * The trigger's timers and clock are node:test's mock ones. `tick(ms)` lets
 * what is pending settle (a released add schedules the next timer), moves
 * the clock on by `ms`, running the timers due by then, and lets what they
 * set going settle (setImmediate is not mocked).
 */
beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
afterEach(() => mock.timers.reset());
const settle = () => new Promise((r) => setImmediate(r));
const tick = async (ms = 0) => {
    await settle();
    mock.timers.tick(ms);
    await settle();
};
test('flushes that come while an add is in flight are coalesced into the next add', async () => {
    const q = heldQueue();
    const counted = [];
    const trigger = new AlertTrigger(q.send, log, (result, n) => counted.push(`${result} ${n}`), 0);
    trigger.durable([env('a', 'LoopFinished')]);
    await tick();
    assert.equal(q.calls.length, 1);
    for (const l of ['b', 'c', 'b'])
        trigger.durable([env(l, 'LoopFinished'), env('x', 'IterationStarted')]);
    await tick();
    assert.equal(q.calls.length, 1, 'one add at a time');
    q.release();
    await tick();
    assert.equal(q.calls.length, 2);
    assert.deepEqual(q.calls, [
        { loops: ['a'], rates: false },
        { loops: ['b', 'c'], rates: false },
    ]);
    q.release();
    await trigger.close();
    assert.deepEqual(counted, ['queued 1', 'queued 1']);
});
test('a failed add is counted and left to the sweep; the next news is added again; close adds what is noted', async () => {
    const q = heldQueue();
    const counted = [];
    const trigger = new AlertTrigger(q.send, log, (result, n) => counted.push(`${result} ${n}`), 0);
    trigger.durable([env('a', 'LoopFinished')]);
    await tick();
    q.release(new Error('Connection is closed.'));
    await tick();
    assert.equal(trigger.failed, 1);
    trigger.durable([env('b', 'SubAgentCompleted')]);
    await tick();
    q.release();
    await tick();
    assert.deepEqual(q.calls[1], { loops: ['b'], rates: true }, 'the failed loops are not carried over: the sweep has them');
    // Noted within the gap: close adds it at once.
    const gapped = new AlertTrigger(q.send, log, undefined, 60_000);
    gapped.durable([env('c', 'LoopFinished')]);
    await tick();
    q.release();
    gapped.durable([env('d', 'LoopFinished')]);
    await tick(59_999);
    assert.equal(q.calls.length, 3, 'within the gap: nothing added yet');
    const closing = gapped.close();
    await tick();
    q.release();
    await closing;
    assert.deepEqual(q.calls[3], { loops: ['d'], rates: false });
    assert.deepEqual(counted, ['failed 1', 'queued 1']);
});
test('the next add waits out the gap since the last add, to the millisecond', async () => {
    const q = heldQueue();
    const trigger = new AlertTrigger(q.send, log, undefined, 5000);
    trigger.durable([env('a', 'LoopFinished')]);
    await tick();
    assert.equal(q.calls.length, 1, 'the first add is at once');
    await tick(1000);
    q.release();
    trigger.durable([env('b', 'LoopFinished')]);
    await tick(3999);
    assert.equal(q.calls.length, 1, '4,999 ms after the last add: not yet');
    await tick(1);
    assert.equal(q.calls.length, 2, '5,000 ms after the last add');
    assert.deepEqual(q.calls[1], { loops: ['b'], rates: false });
    q.release();
    await trigger.close();
});
//# sourceMappingURL=trigger.test.js.map