/**
 * The per-(rule, subject) state machine of issue 11 through a whole life:
 * fire, stay quiet before the reminder interval, remind at it, resolve, fire
 * again; and transition keys that never collide, whatever a subject holds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AlertCondition } from '../../../src/alerts/condition.js';
import { notificationKey, step, transitionKey, type AlertState } from '../../../src/alerts/state.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const RENOTIFY = 3_600_000;

const cond = (firing: boolean, detail: string, severity: AlertCondition['severity'] = firing ? 'warning' : 'info'): AlertCondition => ({
  rule: 'stalled_loop',
  subject: 'loop-1',
  firing,
  severity,
  detail,
});

test('fire -> no reminder before the interval -> reminder at it -> resolve -> quiet -> fire again', () => {
  const fired = step(undefined, cond(true, 'quiet for 15 min'), T0, RENOTIFY);
  assert.equal(fired.notify, 'fired');
  const s1: AlertState = {
    rule: 'stalled_loop',
    subject: 'loop-1',
    state: 'firing',
    severity: 'warning',
    firedAt: T0,
    lastNotifiedAt: T0,
    notifications: 1,
    detail: 'quiet for 15 min',
  };
  assert.deepEqual(fired.next, s1);

  const early = step(s1, cond(true, 'quiet for 74 min', 'critical'), T0 + RENOTIFY - 1, RENOTIFY);
  assert.equal(early.notify, undefined, 'one ms before the interval: nothing');
  assert.deepEqual(early.next, { ...s1, severity: 'critical', detail: 'quiet for 74 min' }, 'detail and severity follow silently');

  const reminded = step(early.next, cond(true, 'quiet for 75 min'), T0 + RENOTIFY, RENOTIFY);
  assert.equal(reminded.notify, 'renotified');
  const s2: AlertState = { ...s1, lastNotifiedAt: T0 + RENOTIFY, notifications: 2, detail: 'quiet for 75 min' };
  assert.deepEqual(reminded.next, s2);

  const notYet = step(s2, cond(true, 'quiet for 2 h'), T0 + 2 * RENOTIFY - 1, RENOTIFY);
  assert.equal(notYet.notify, undefined, 'the interval runs from the last reminder, not from the fire');
  assert.equal(notYet.next?.lastNotifiedAt, T0 + RENOTIFY);

  const resolvedAt = T0 + 2 * RENOTIFY + 7;
  const resolved = step(notYet.next, cond(false, 'finished'), resolvedAt, RENOTIFY);
  assert.equal(resolved.notify, 'resolved');
  const s3: AlertState = { ...s2, state: 'resolved', resolvedAt, lastNotifiedAt: resolvedAt, notifications: 3, detail: 'finished' };
  assert.deepEqual(resolved.next, s3);

  const stillOk = step(s3, cond(false, 'finished'), resolvedAt + 10 * RENOTIFY, RENOTIFY);
  assert.equal(stillOk.notify, undefined);
  assert.equal(stillOk.next, s3, 'resolved + fine: the same state, untouched');

  const refireAt = resolvedAt + 11 * RENOTIFY;
  const again = step(s3, cond(true, 'quiet again'), refireAt, RENOTIFY);
  assert.equal(again.notify, 'fired');
  assert.deepEqual(again.next, {
    rule: 'stalled_loop',
    subject: 'loop-1',
    state: 'firing',
    severity: 'warning',
    firedAt: refireAt,
    lastNotifiedAt: refireAt,
    notifications: 1,
    detail: 'quiet again',
  });
  assert.equal(again.next !== undefined && 'resolvedAt' in again.next, false, 'a new episode carries no resolvedAt');
});

test('a subject that never fired and is fine stays without state', () => {
  assert.deepEqual(step(undefined, cond(false, 'fine'), T0, RENOTIFY), { next: undefined });
});

test('a reminder is due every renotifyMs while firing, and never when the clock reads earlier than the last one', () => {
  let state = step(undefined, cond(true, 'x'), T0, RENOTIFY).next;
  const notified: (string | undefined)[] = [];
  for (let t = T0 + RENOTIFY / 2; t <= T0 + 3 * RENOTIFY; t += RENOTIFY / 2) {
    const s = step(state, cond(true, 'x'), t, RENOTIFY);
    notified.push(s.notify);
    state = s.next;
  }
  assert.deepEqual(notified, [undefined, 'renotified', undefined, 'renotified', undefined, 'renotified']);
  assert.equal(state?.notifications, 4);
  assert.equal(step(state, cond(true, 'x'), T0, RENOTIFY).notify, undefined, 'a worker with a clock behind');
});

test('stepping one subject\'s state with another subject\'s or rule\'s condition is refused', () => {
  const state = step(undefined, cond(true, 'x'), T0, RENOTIFY).next;
  assert.throws(() => step(state, { ...cond(true, 'x'), subject: 'loop-2' }, T0, RENOTIFY), /stepped with a condition of stalled_loop "loop-2"/);
  assert.throws(() => step(state, { ...cond(false, 'x'), rule: 'stuck_loop' }, T0, RENOTIFY), /stepped with a condition of stuck_loop/);
});

test('transitionKey is 64 hex digits, the same for the same transition, and free of ":" (BullMQ job ids)', () => {
  const key = transitionKey('chain_integrity', 'loop:1', 'fired', T0);
  assert.match(key, /^[0-9a-f]{64}$/);
  assert.equal(transitionKey('chain_integrity', 'loop:1', 'fired', T0), key);
  // Pins the encoding (SHA-256 over uint32-BE length + UTF-16LE of the domain tag,
  // rule, subject, kind and at; checked once with Python's hashlib): a change
  // would let old and new workers notify the same transition twice.
  assert.equal(transitionKey('stalled_loop', 'loop-1', 'fired', 0), '00f771021b32c90a64b555beac58394e3ae3afa5115dfdaae712296d9c8d5d33');
});

test('transitionKey differs whenever any part differs, separators, empty parts and lone surrogates included', () => {
  const cases: [Parameters<typeof transitionKey>, string][] = [
    [['spend_budget', 'project:/a', 'fired', 1], 'base'],
    [['spend_budget', 'project:/a', 'fired', 2], 'at'],
    [['spend_budget', 'project:/a', 'fired', 12], 'at, one more digit'],
    [['spend_budget', 'project:/a', 'resolved', 1], 'kind'],
    [['spend_budget', 'project:/a', 'renotified', 1], 'kind'],
    [['chain_integrity', 'project:/a', 'fired', 1], 'rule'],
    [['spend_budget', 'project:/a1', 'fired', 1], 'subject absorbing a digit of at'],
    [['spend_budget', 'project:/afired', 'fired', 1], 'subject absorbing the kind'],
    [['spend_budget', 'project:/a:fired:1', 'fired', 1], 'subject holding a ":"-joined tail'],
    [['spend_budget', 'project:/a|fired|1', 'fired', 1], 'subject holding a "|"-joined tail'],
    [['spend_budget', 'project:/a\u0000', 'fired', 1], 'subject with NUL'],
    [['spend_budget', '', 'fired', 1], 'empty subject'],
    [['spend_budget', '\ud800', 'fired', 1], 'lone high surrogate'],
    [['spend_budget', '\udfff', 'fired', 1], 'lone low surrogate'],
    [['spend_budget', '\ufffd', 'fired', 1], 'the replacement character'],
  ];
  const keys = new Map<string, string>();
  for (const [args, label] of cases) {
    const key = transitionKey(...args);
    assert.equal(keys.get(key), undefined, `${label} collides with ${keys.get(key)}`);
    keys.set(key, `${label} ${JSON.stringify(args)}`);
  }
  assert.equal(keys.size, cases.length);
  assert.deepEqual(Buffer.from('\ud800', 'utf8'), Buffer.from('\udfff', 'utf8'), 'as UTF-8 the two lone surrogates are the same bytes');
});

test('notificationKey is the transition key at the notification\'s own time, distinct across an episode', () => {
  const fired = step(undefined, cond(true, 'x'), T0, RENOTIFY).next!;
  const reminded = step(fired, cond(true, 'x'), T0 + RENOTIFY, RENOTIFY).next!;
  const resolved = step(reminded, cond(false, 'ok'), T0 + RENOTIFY + 1, RENOTIFY).next!;
  const keys = [notificationKey(fired, 'fired'), notificationKey(reminded, 'renotified'), notificationKey(resolved, 'resolved')];
  assert.deepEqual(keys, [
    transitionKey('stalled_loop', 'loop-1', 'fired', T0),
    transitionKey('stalled_loop', 'loop-1', 'renotified', T0 + RENOTIFY),
    transitionKey('stalled_loop', 'loop-1', 'resolved', T0 + RENOTIFY + 1),
  ]);
  assert.equal(new Set(keys).size, 3);
});
