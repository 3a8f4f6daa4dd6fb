/**
 * The Alertmanager mapping and backoff (src/alerts/alertmanager.ts): the
 * labels depend on the rule, subject and severity only (so every sweep and
 * worker posts the same alert) and carry the subject as it is; a firing
 * alert ends four resend intervals (at least a minute each) ahead, a
 * resolved one when it resolved; the backoff doubles from 500 ms, is capped
 * at the resend interval, and starts over after a success.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  afterFailure,
  afterSuccess,
  amAlertOf,
  amLabels,
  BACKOFF_FIRST_MS,
  firingHorizonMs,
  FRESH,
  isDue,
  subjectUrl,
  type Target,
} from '../../../src/alerts/alertmanager.js';
import type { AlertState } from '../../../src/alerts/state.js';

const T0 = Date.UTC(2026, 11, 1, 6, 0, 0);

const firing = (over: Partial<AlertState> = {}): AlertState => ({
  rule: 'stuck_loop',
  subject: 'loop-7f3a',
  state: 'firing',
  severity: 'critical',
  firedAt: T0,
  lastNotifiedAt: T0,
  notifications: 1,
  detail: 'LoopFinished Stuck',
  ...over,
});

test('labels: alertname, severity, subject; root, loop_name or definition where the subject names one', () => {
  assert.deepEqual(amLabels('stuck_loop', 'loop-7f3a', 'critical'), { alertname: 'stuck_loop', severity: 'critical', subject: 'loop-7f3a' });
  // A loop id with a colon is a loop id, not a kind.
  assert.deepEqual(amLabels('convergence', 'root:1', 'warning'), { alertname: 'convergence', severity: 'warning', subject: 'root:1' });
  assert.deepEqual(amLabels('spend_budget', 'root:loop-1', 'critical').root, 'loop-1');
  assert.deepEqual(amLabels('spend_budget', 'name:triage:v2', 'critical').loop_name, 'triage:v2');
  assert.deepEqual(amLabels('spend_budget', 'day:2026-12-01', 'critical'), { alertname: 'spend_budget', severity: 'critical', subject: 'day:2026-12-01' });
  assert.deepEqual(amLabels('subagent_failure_rate', 'runtime:planner', 'warning').definition, 'planner');
  assert.deepEqual(amLabels('subagent_failure_rate', 'craze:Explore', 'warning').definition, 'Explore');
});

test('a hostile subject is the label value as it is, and the label set does not depend on the detail or the time', () => {
  const hostile = 'id\u001b]0;pwned\u0007\u001b[2J\r\nrow\u0000\u009b\u2028\\end\'"{}=,';
  const a = amAlertOf(firing({ subject: hostile, detail: 'one' }), T0 + 1000, { resendMs: 30_000 });
  const b = amAlertOf(firing({ subject: hostile, detail: 'two', lastNotifiedAt: T0 + 5000 }), T0 + 90_000, { resendMs: 30_000 });
  assert.equal(a.labels.subject, hostile);
  assert.deepEqual(a.labels, b.labels);
  assert.equal((JSON.parse(JSON.stringify(a)) as typeof a).labels.subject, hostile, 'survives JSON');
});

test('firing: startsAt when it fired, endsAt four resend intervals ahead (a minute at least); resolved: endsAt when it resolved', () => {
  assert.equal(firingHorizonMs(30_000), 240_000);
  assert.equal(firingHorizonMs(120_000), 480_000);
  const now = T0 + 10_000;
  const f = amAlertOf(firing(), now, { resendMs: 30_000 });
  assert.equal(f.startsAt, new Date(T0).toISOString());
  assert.equal(f.endsAt, new Date(now + 240_000).toISOString());
  assert.deepEqual(f.annotations, { summary: 'stuck_loop: loop-7f3a', description: 'LoopFinished Stuck' });
  assert.equal(f.generatorURL, undefined, 'no link without the page\'s address');
  const r = amAlertOf(firing({ state: 'resolved', resolvedAt: T0 + 5000, detail: 'finished Completed' }), now, { resendMs: 30_000, pageUrl: 'https://ledger.example.com/' });
  assert.equal(r.endsAt, new Date(T0 + 5000).toISOString());
  assert.equal(r.annotations.description, 'finished Completed');
  assert.equal(r.generatorURL, 'https://ledger.example.com/api/loops?id-prefix=loop-7f3a');
});

test('the link: a loop rule links its loop, the others their rule\'s alerts; the subject is encoded', () => {
  assert.equal(subjectUrl('http://h:8080', 'chain_integrity', 'a b&c=d'), 'http://h:8080/api/loops?id-prefix=a%20b%26c%3Dd');
  assert.equal(subjectUrl('http://h:8080/ledger/', 'spend_budget', 'root:x'), 'http://h:8080/ledger/api/alerts?rule=spend_budget');
});

test('backoff: 500 ms doubled per failure in a row, capped at the resend interval, fresh after a success', () => {
  let t: Target = FRESH;
  assert.ok(isDue(t, 0));
  const waits: number[] = [];
  for (let i = 0; i < 8; i++) {
    t = afterFailure(t, 1000, 30_000);
    waits.push(t.retryAt - 1000);
  }
  assert.deepEqual(waits, [BACKOFF_FIRST_MS, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
  assert.equal(t.failures, 8);
  assert.ok(!isDue(t, 30_999));
  assert.ok(isDue(t, 31_000));
  // However many failures, the wait stays finite and capped.
  for (let i = 0; i < 100; i++) t = afterFailure(t, 0, 1000);
  assert.equal(t.retryAt, 1000);
  t = afterSuccess();
  assert.deepEqual(t, FRESH);
  assert.equal(afterFailure(t, 0, 30_000).retryAt, BACKOFF_FIRST_MS, 'a new outage starts from the first wait again');
});
