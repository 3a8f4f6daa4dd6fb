/**
 * The coordinator watch alone, on a fake clock: a member joins again once,
 * only when a request to the coordinator failed and nothing it acknowledged
 * came for a whole session timeout since, and only while it holds a
 * generation.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoordinatorWatch } from '../../../src/kafka/coordinator-watch.js';

const SESSION = 30_000;

function harness() {
  const state = { now: 1_000_000, settled: true, rejoins: [] as string[], release: undefined as (() => void) | undefined };
  const watch = new CoordinatorWatch({
    silenceMs: SESSION,
    now: () => state.now,
    settled: () => state.settled,
    rejoin: (why) => {
      state.rejoins.push(why);
      return state.release === undefined ? Promise.resolve() : new Promise((resolve) => (state.release = resolve));
    },
  });
  return { state, watch };
}

const refused = new Error('Connection error: connect ECONNREFUSED 127.0.0.1:19093');

test('a failed request and no answer for a session timeout: one rejoin, saying how long and the last failure', async () => {
  const { state, watch } = harness();
  watch.failed(refused);
  state.now += SESSION - 1;
  await watch.check();
  assert.deepEqual(state.rejoins, [], 'not before the session timeout is over');
  state.now += 1;
  watch.failed(new Error('offset commit: no answer from Kafka in 30000 ms'));
  await watch.check();
  assert.equal(state.rejoins.length, 1);
  assert.match(state.rejoins[0]!, /has not answered for 30000 ms, longer than the session timeout \(last failure: offset commit: no answer/);
  state.now += 10 * SESSION;
  await watch.check();
  assert.equal(state.rejoins.length, 1, 'once per silence: the next needs a new failure');
  watch.failed(refused);
  state.now += SESSION;
  await watch.check();
  assert.equal(state.rejoins.length, 2);
});

test('an answer after the failure (a heartbeat, a commit, a join) starts nothing: the coordinator is there', async () => {
  const { state, watch } = harness();
  watch.failed(refused);
  state.now += SESSION / 2;
  watch.answered();
  state.now += SESSION;
  await watch.check();
  assert.deepEqual(state.rejoins, []);
  // The silence is measured from the first failure after the last answer.
  watch.failed(refused);
  state.now += SESSION / 2;
  watch.failed(refused);
  state.now += SESSION / 2;
  await watch.check();
  assert.equal(state.rejoins.length, 1);
});

test('silence without a failure (a join waiting for the other members, an idle member) starts nothing', async () => {
  const { state, watch } = harness();
  state.now += 100 * SESSION;
  await watch.check();
  assert.deepEqual(state.rejoins, []);
});

test('a member between generations (kafkajs joining or restarting already) is left alone until it holds one', async () => {
  const { state, watch } = harness();
  state.settled = false;
  watch.failed(refused);
  state.now += 3 * SESSION;
  await watch.check();
  assert.deepEqual(state.rejoins, []);
  state.settled = true;
  await watch.check();
  assert.equal(state.rejoins.length, 1, 'the silence still stands once it is settled');
});

test('checks while a rejoin is under way start no second one', async () => {
  const { state, watch } = harness();
  state.release = () => undefined;
  watch.failed(refused);
  state.now += SESSION;
  const first = watch.check();
  assert.equal(watch.busy, true);
  watch.failed(refused);
  state.now += SESSION;
  await watch.check();
  assert.equal(state.rejoins.length, 1);
  state.release();
  await first;
  assert.equal(watch.busy, false);
});
