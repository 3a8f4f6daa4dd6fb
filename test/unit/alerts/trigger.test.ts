import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AlertTrigger, evaluationJobs, newsOf } from '../../../src/alerts/trigger.js';
import { ALERT_EVALUATE_JOB, alertEvaluatePayload, EVALUATE_MAX_LOOPS } from '../../../src/jobs/queues.js';
import { createLogger } from '../../../src/observability/logger.js';

const env = (loop_id: string, kind_class: string, verdict = 'ok'): object => ({ loop_id, kind_class, verdict });
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

test('jobs: loops in chunks under the payload limit, the rates read once, none for no news', () => {
  assert.deepEqual(evaluationJobs([], false), []);
  assert.deepEqual(evaluationJobs([], true), [{ loops: [], rates: true }]);
  const loops = Array.from({ length: 2 * EVALUATE_MAX_LOOPS + 1 }, (_, i) => `loop-${i}`);
  const jobs = evaluationJobs(loops, true);
  assert.equal(jobs.length, 3);
  assert.deepEqual(jobs.flatMap((j) => j.loops), loops);
  assert.deepEqual(jobs.map((j) => j.rates), [true, false, false]);
  for (const j of jobs) alertEvaluatePayload.parse(j);
});

/** A queue whose adds settle when the test says. */
function heldQueue() {
  const calls: { name: string; data: unknown }[][] = [];
  const releases: ((err?: Error) => void)[] = [];
  return {
    calls,
    release: (err?: Error) => releases.shift()!(err),
    queue: {
      addBulk: (jobs: { name: string; data: unknown }[]) => {
        calls.push(jobs);
        return new Promise<never[]>((resolve, reject) => releases.push((err) => (err ? reject(err) : resolve([]))));
      },
    },
  };
}
const tick = (ms = 5): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('flushes that come while an add is in flight are coalesced into the next add', async () => {
  const q = heldQueue();
  const counted: string[] = [];
  const trigger = new AlertTrigger(q.queue as never, log, (result, n) => counted.push(`${result} ${n}`), 0);
  trigger.durable([env('a', 'LoopFinished')]);
  await tick();
  assert.equal(q.calls.length, 1);
  for (const l of ['b', 'c', 'b']) trigger.durable([env(l, 'LoopFinished'), env('x', 'IterationStarted')]);
  await tick();
  assert.equal(q.calls.length, 1, 'one add at a time');
  q.release();
  await tick();
  assert.equal(q.calls.length, 2);
  assert.deepEqual(
    q.calls.map((c) => c.map((j) => [j.name, j.data])),
    [[[ALERT_EVALUATE_JOB, { loops: ['a'], rates: false }]], [[ALERT_EVALUATE_JOB, { loops: ['b', 'c'], rates: false }]]],
  );
  q.release();
  await trigger.close();
  assert.deepEqual(counted, ['queued 1', 'queued 1']);
});

test('a failed add is counted and left to the sweep; the next news is added again; close adds what is noted', async () => {
  const q = heldQueue();
  const counted: string[] = [];
  const trigger = new AlertTrigger(q.queue as never, log, (result, n) => counted.push(`${result} ${n}`), 0);
  trigger.durable([env('a', 'LoopFinished')]);
  await tick();
  q.release(new Error('Connection is closed.'));
  await tick();
  assert.equal(trigger.failed, 1);
  trigger.durable([env('b', 'SubAgentCompleted')]);
  await tick();
  q.release();
  await tick();
  assert.deepEqual(q.calls[1]!.map((j) => j.data), [{ loops: ['b'], rates: true }], 'the failed loops are not carried over: the sweep has them');
  // Noted within the gap: close adds it at once.
  const gapped = new AlertTrigger(q.queue as never, log, undefined, 60_000);
  gapped.durable([env('c', 'LoopFinished')]);
  await tick();
  q.release();
  gapped.durable([env('d', 'LoopFinished')]);
  await tick();
  assert.equal(q.calls.length, 3, 'within the gap: nothing added yet');
  const closing = gapped.close();
  await tick();
  q.release();
  await closing;
  assert.deepEqual(q.calls[3]!.map((j) => j.data), [{ loops: ['d'], rates: false }]);
  assert.deepEqual(counted, ['failed 1', 'queued 1']);
});
