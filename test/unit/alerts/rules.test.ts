/**
 * The alert rules of issue 11 at their edges: each threshold just below, at
 * and just above, each window boundary (both ends inside, see rules.ts), and
 * the cases the issue names: a backfill of old loops does not page, an
 * interrupted loop waits its own clock, craze cancels are not failures, a
 * gap gets its grace, budgets beyond 2^64 picodollars stay exact.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  chainIntegrity,
  convergence,
  DEFAULT_ALERT_RULE_CONFIG,
  ratePpm,
  spendBudget,
  stalledLoop,
  stuckLoop,
  subagentFailureRate,
  waitingOnHuman,
} from '../../../src/alerts/rules.js';
import type { AlertCondition } from '../../../src/alerts/condition.js';
import type { ChainFindingRow, ConvergenceWarning, SubAgentOutcomeRow } from '../../../src/alerts/rule-rows.js';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const MIN = 60_000;
const HOUR = 3_600_000;
const CFG = DEFAULT_ALERT_RULE_CONFIG;

/** The one condition of `subject`; fails when there is none or more than one. */
function of(conditions: readonly AlertCondition[], subject: string): AlertCondition {
  const found = conditions.filter((c) => c.subject === subject);
  assert.equal(found.length, 1, `one condition for ${subject}, got ${found.length}`);
  return found[0]!;
}

const warning = (time: number, detector = 'oscillation', reason = 'flips between plan A and plan B', count = 1): ConvergenceWarning => ({
  time,
  detector,
  reason,
  count,
});

test('the defaults are the issue\'s', () => {
  assert.deepEqual(CFG, {
    windowMs: 3_600_000,
    convergenceMinWarnings: 3,
    convergenceCount: 5,
    stalledAfterMs: 900_000,
    maxAgeMs: 86_400_000,
    humanWaitMs: 1_800_000,
    subagentFailureRate: 0.25,
    subagentMinOutcomes: 20,
    gapGraceMs: 300_000,
  });
});

// ---------------------------------------------------------------- stuck_loop

test('stuck_loop fires, critical, for a loop finished Stuck or reported Stuck by its parent, with its warnings as context', () => {
  const conditions = stuckLoop([
    { loopId: 'L-finished', finishedOutcome: 'Stuck', warnings: [warning(NOW - 2 * HOUR, 'zero-progress', 'no new facts in 6 iterations', 6), warning(NOW - MIN, 'depth', 'recursion depth 9 > 8', 1)] },
    { loopId: 'L-child', stuckByParent: true, warnings: [] },
    { loopId: 'L-done', finishedOutcome: 'Completed', warnings: [warning(NOW)] },
    { loopId: 'L-failed', finishedOutcome: 'Failed', stuckByParent: false, warnings: [] },
    { loopId: 'L-running', warnings: [warning(NOW), warning(NOW), warning(NOW)] },
  ]);
  assert.deepEqual(
    conditions.map((c) => [c.subject, c.rule, c.firing, c.severity]),
    [
      ['L-finished', 'stuck_loop', true, 'critical'],
      ['L-child', 'stuck_loop', true, 'critical'],
      ['L-done', 'stuck_loop', false, 'info'],
      ['L-failed', 'stuck_loop', false, 'info'],
      ['L-running', 'stuck_loop', false, 'info'],
    ],
  );
  assert.equal(
    of(conditions, 'L-finished').detail,
    'finished Stuck; convergence warnings: depth: recursion depth 9 > 8 (1 warning(s), count up to 1); zero-progress: no new facts in 6 iterations (1 warning(s), count up to 6)',
  );
  assert.equal(of(conditions, 'L-child').detail, 'reported Stuck by its parent; no convergence warnings');
  assert.equal(of(conditions, 'L-failed').detail, 'finished Failed');
});

test('stuck_loop context is bounded: repeated warnings are grouped, many groups are cut with a count, long reasons clipped', () => {
  const repeated = Array.from({ length: 50 }, (_, i) => warning(NOW - i, 'oscillation', 'A/B', i % 8));
  const [grouped] = stuckLoop([{ loopId: 'L', finishedOutcome: 'Stuck', warnings: repeated }]);
  assert.equal(grouped?.detail, 'finished Stuck; convergence warnings: oscillation: A/B (50 warning(s), count up to 7)');

  const many = Array.from({ length: 200 }, (_, i) => warning(NOW - i, `detector-${i}`, 'x'.repeat(10_000), 1));
  const [cut] = stuckLoop([{ loopId: 'L', finishedOutcome: 'Stuck', warnings: many }]);
  assert.ok(cut!.detail.length <= 1000, `detail of ${cut!.detail.length} characters`);
  assert.match(cut!.detail, /^finished Stuck; convergence warnings: detector-0: x+…; detector-1: x+…; /);
  assert.match(cut!.detail, /; \+195 more$/);
});

// ---------------------------------------------------------------- convergence

test('convergence fires at convergenceMinWarnings warnings inside the window, not one fewer', () => {
  const rows = [
    { loopId: 'two', warnings: [warning(NOW - 10 * MIN), warning(NOW - 5 * MIN)] },
    { loopId: 'three', warnings: [warning(NOW - 10 * MIN), warning(NOW - 5 * MIN, 'zero-progress', 'stalled facts'), warning(NOW)] },
    { loopId: 'four', warnings: [warning(NOW - 3), warning(NOW - 2), warning(NOW - 1), warning(NOW)] },
  ];
  const conditions = convergence(rows, NOW, CFG);
  assert.deepEqual(
    conditions.map((c) => [c.subject, c.firing, c.severity]),
    [
      ['two', false, 'info'],
      ['three', true, 'warning'],
      ['four', true, 'warning'],
    ],
  );
  assert.equal(
    of(conditions, 'three').detail,
    '3 warning(s) in the last 60 min (fires at 3), highest count 1 (fires at 5): ' +
      'oscillation: flips between plan A and plan B (2 warning(s), count up to 1); zero-progress: stalled facts (1 warning(s), count up to 1)',
  );
});

test('convergence window [now - windowMs, now] includes both ends and nothing outside them', () => {
  const two = [warning(NOW - 30 * MIN), warning(NOW - 20 * MIN)];
  const firing = (third: number) => convergence([{ loopId: 'L', warnings: [...two, warning(third)] }], NOW, CFG)[0]!.firing;
  assert.equal(firing(NOW - HOUR), true, 'exactly windowMs old: inside');
  assert.equal(firing(NOW - HOUR - 1), false, '1 ms older: outside');
  assert.equal(firing(NOW), true, 'at now: inside');
  assert.equal(firing(NOW + 1), false, 'after now: outside');
});

test('convergence fires on one warning whose count reaches convergenceCount, inside the window only', () => {
  const at = (count: number, time = NOW - MIN) => convergence([{ loopId: 'L', warnings: [warning(time, 'zero-progress', 'no progress', count)] }], NOW, CFG)[0]!;
  assert.equal(at(4).firing, false);
  assert.equal(at(5).firing, true);
  assert.equal(at(6).firing, true);
  assert.match(at(5).detail, /highest count 5 \(fires at 5\): zero-progress: no progress/);
  assert.equal(at(5, NOW - HOUR).firing, true);
  const old = at(50, NOW - HOUR - 1);
  assert.equal(old.firing, false);
  assert.equal(old.detail, 'no warning in the last 60 min');
});

test('convergence resolves when the loop finishes Completed; a stuck loop is left to stuck_loop; other ends still fire', () => {
  const noisy = [warning(NOW - 3), warning(NOW - 2), warning(NOW - 1, 'depth', 'too deep', 9)];
  const conditions = convergence(
    [
      { loopId: 'completed', finishedOutcome: 'Completed', warnings: noisy },
      { loopId: 'stuck', finishedOutcome: 'Stuck', warnings: noisy },
      { loopId: 'stuck-by-parent', stuckByParent: true, warnings: noisy },
      { loopId: 'failed', finishedOutcome: 'Failed', warnings: noisy },
      { loopId: 'quiet', warnings: [] },
    ],
    NOW,
    CFG,
  );
  assert.deepEqual(
    conditions.map((c) => [c.subject, c.firing, c.detail]),
    [
      ['completed', false, 'finished Completed'],
      ['stuck', false, 'stuck: raised as stuck_loop'],
      ['stuck-by-parent', false, 'stuck: raised as stuck_loop'],
      [
        'failed',
        true,
        '3 warning(s) in the last 60 min (fires at 3), highest count 9 (fires at 5): ' +
          'depth: too deep (1 warning(s), count up to 9); oscillation: flips between plan A and plan B (2 warning(s), count up to 1)',
      ],
      ['quiet', false, 'no warning in the last 60 min'],
    ],
  );
});

// ---------------------------------------------------------------- stalled_loop

test('stalled_loop fires once a started, unfinished loop has been quiet for stalledAfterMs', () => {
  const at = (lastTime: number) => stalledLoop([{ loopId: 'L', started: true, finished: false, lastTime }], NOW, CFG)[0]!;
  assert.equal(at(NOW - 15 * MIN + 1).firing, false);
  assert.equal(at(NOW - 15 * MIN).firing, true);
  assert.equal(at(NOW - 15 * MIN - 1).firing, true);
  assert.equal(at(NOW - 15 * MIN).severity, 'warning');
  assert.equal(at(NOW - 15 * MIN).detail, 'no envelope for 15 min (stalled at 15 min)');
  assert.equal(at(NOW + MIN).firing, false, 'a last envelope stamped after now is not stalled');
});

test('stalled_loop: a finished or never-started loop is fine', () => {
  const old = NOW - 2 * HOUR;
  const conditions = stalledLoop(
    [
      { loopId: 'finished', started: true, finished: true, lastTime: old },
      { loopId: 'unstarted', started: false, finished: false, lastTime: old },
    ],
    NOW,
    CFG,
  );
  assert.deepEqual(
    conditions.map((c) => [c.subject, c.firing, c.detail]),
    [
      ['finished', false, 'finished'],
      ['unstarted', false, 'no LoopStarted'],
    ],
  );
});

test('stalled_loop gives no condition at all for a loop quiet for more than maxAgeMs (a backfill does not page)', () => {
  const row = (loopId: string, lastTime: number) => ({ loopId, started: true, finished: false, lastTime });
  const conditions = stalledLoop([row('at-max-age', NOW - 24 * HOUR), row('older', NOW - 24 * HOUR - 1), row('ancient', 0)], NOW, CFG);
  assert.deepEqual(
    conditions.map((c) => [c.subject, c.firing]),
    [['at-max-age', true]],
  );
});

test('stalled_loop: an interrupted loop is stalled only once interrupted for stalledAfterMs, however old its last envelope', () => {
  const at = (interruptedSince: number, lastTime = NOW - 2 * HOUR) =>
    stalledLoop([{ loopId: 'L', started: true, finished: false, lastTime, interruptedSince }], NOW, CFG)[0]!;
  assert.equal(at(NOW - 15 * MIN + 1).firing, false);
  assert.equal(at(NOW - 15 * MIN + 1).detail, 'interrupted for 14 min (stalled at 15 min)');
  assert.equal(at(NOW - 15 * MIN).firing, true);
  assert.equal(at(NOW - 15 * MIN).detail, 'interrupted for 15 min (stalled at 15 min)');
  assert.equal(at(NOW - 15 * MIN, NOW - 15 * MIN).firing, true, 'the Interrupted envelope as the last one');
  assert.deepEqual(
    stalledLoop([{ loopId: 'L', started: true, finished: false, lastTime: NOW - 25 * HOUR, interruptedSince: NOW - 25 * HOUR }], NOW, CFG),
    [],
    'max age still applies',
  );
});

// ---------------------------------------------------------------- waiting_on_human

test('waiting_on_human fires per loop once a request has gone unanswered for humanWaitMs', () => {
  const conditions = waitingOnHuman(
    [
      { loopId: 'just-below', actionId: 'a1', requestedAt: NOW - 30 * MIN + 1 },
      { loopId: 'at', actionId: 'a1', requestedAt: NOW - 30 * MIN },
      { loopId: 'above', actionId: 'a1', requestedAt: NOW - 30 * MIN - 1 },
      { loopId: 'answered', actionId: 'a1', requestedAt: NOW - 5 * HOUR, respondedAt: NOW - 4 * HOUR },
    ],
    NOW,
    CFG,
  );
  assert.deepEqual(
    conditions.map((c) => [c.subject, c.firing, c.severity]),
    [
      ['just-below', false, 'info'],
      ['at', true, 'warning'],
      ['above', true, 'warning'],
      ['answered', false, 'info'],
    ],
  );
  assert.equal(of(conditions, 'at').detail, '1 request(s) unanswered for 30 min or more: action a1 waiting 30 min');
  assert.equal(of(conditions, 'just-below').detail, '1 request(s) unanswered, none for 30 min');
});

test('waiting_on_human pairs by action_id: one answered action does not hide another, and an answer row closes its request', () => {
  const conditions = waitingOnHuman(
    [
      { loopId: 'L', actionId: 'answered', requestedAt: NOW - 3 * HOUR, respondedAt: NOW - 2 * HOUR },
      { loopId: 'L', actionId: 'open-new', requestedAt: NOW - MIN },
      { loopId: 'L', actionId: 'open-old', requestedAt: NOW - 2 * HOUR },
      { loopId: 'L', actionId: 'open-mid', requestedAt: NOW - 40 * MIN },
      { loopId: 'M', actionId: 'x', requestedAt: NOW - 2 * HOUR },
      { loopId: 'M', actionId: 'x', requestedAt: NOW - 2 * HOUR, respondedAt: NOW - HOUR },
    ],
    NOW,
    CFG,
  );
  assert.equal(of(conditions, 'L').firing, true);
  assert.equal(of(conditions, 'L').detail, '2 request(s) unanswered for 30 min or more: action open-old waiting 2 h; action open-mid waiting 40 min');
  assert.equal(of(conditions, 'M').firing, false);
  assert.equal(of(conditions, 'M').detail, '0 request(s) unanswered, none for 30 min');
});

// ---------------------------------------------------------------- subagent_failure_rate

const outcomes = (source: 'runtime' | 'craze', kind: string, spec: Record<string, number>, time = NOW - MIN): SubAgentOutcomeRow[] =>
  Object.entries(spec).flatMap(([outcome, n]) => Array.from({ length: n }, () => ({ source, kind, outcome, time })));

test('subagent_failure_rate: 40% failures of 20 fires with the failures broken down, 10% does not', () => {
  const conditions = subagentFailureRate(
    [
      ...outcomes('runtime', 'researcher', { Completed: 12, Failed: 5, Stuck: 2, BudgetExceeded: 1 }),
      ...outcomes('runtime', 'writer', { Completed: 18, PolicyDenied: 1, Interrupted: 1 }),
    ],
    NOW,
    CFG,
  );
  assert.deepEqual(
    conditions.map((c) => [c.subject, c.firing, c.severity, c.detail]),
    [
      ['runtime:researcher', true, 'warning', '8 of 20 outcome(s) failed in the last 60 min (40%; fires at 25% with at least 20): Failed 5, Stuck 2, BudgetExceeded 1'],
      ['runtime:writer', false, 'info', '2 of 20 outcome(s) failed in the last 60 min (10%; fires at 25% with at least 20): Interrupted 1, PolicyDenied 1'],
    ],
  );
});

test('subagent_failure_rate fires at the rate exactly, not just below; and not before subagentMinOutcomes outcomes', () => {
  const firing = (spec: Record<string, number>) => subagentFailureRate(outcomes('runtime', 'k', spec), NOW, CFG)[0]!.firing;
  assert.equal(firing({ Completed: 16, Failed: 4 }), false, '20%');
  assert.equal(firing({ Completed: 15, Failed: 5 }), true, '25% exactly');
  assert.equal(firing({ Completed: 14, Failed: 6 }), true, '30%');
  assert.equal(firing({ Completed: 60, Failed: 19 }), false, '19 of 79 is 24.05%');
  assert.equal(firing({ Completed: 60, Failed: 20 }), true, '20 of 80 is 25%');
  assert.equal(firing({ Completed: 9, Failed: 10 }), false, '53% of 19 outcomes: one short of the minimum');
  assert.equal(firing({ Failed: 20 }), true, '100% of 20');
});

test('subagent_failure_rate compares in integer parts per million: 0.1 + 0.2 is reached by 3 of 10', () => {
  assert.equal(3 / 10 >= 0.1 + 0.2, false, 'the float comparison this avoids');
  assert.equal(ratePpm(0.1 + 0.2), 300_000);
  assert.equal(ratePpm(0.25), 250_000);
  assert.equal(ratePpm(0), 0);
  assert.equal(ratePpm(1), 1_000_000);
  for (const bad of [-0.01, 1.01, Number.NaN, Number.POSITIVE_INFINITY]) assert.throws(() => ratePpm(bad), RangeError, String(bad));
  const [c] = subagentFailureRate(outcomes('runtime', 'k', { Completed: 7, Failed: 3 }), NOW, { ...CFG, subagentFailureRate: 0.1 + 0.2, subagentMinOutcomes: 10 });
  assert.equal(c?.firing, true);
  assert.match(c.detail, /\(30%; fires at 30% with at least 10\)/);
});

test('subagent_failure_rate never fires without an outcome, even with a zero minimum and rate', () => {
  const [c] = subagentFailureRate(outcomes('craze', 'explore', { cancelled: 3 }), NOW, { ...CFG, subagentFailureRate: 0, subagentMinOutcomes: 0 });
  assert.equal(c?.firing, false);
  assert.equal(c?.detail, '0 of 0 outcome(s) failed in the last 60 min (no rate; fires at 0% with at least 0); set apart: cancelled 3');
});

test('subagent_failure_rate, craze: only failed is a failure; cancelled and abandoned are outside the rate and listed apart', () => {
  const conditions = subagentFailureRate(
    [
      ...outcomes('craze', 'explore', { completed: 16, failed: 4, cancelled: 10, abandoned: 5 }),
      ...outcomes('craze', 'review', { completed: 15, failed: 5, cancelled: 1 }),
      ...outcomes('craze', 'plan', { completed: 10, failed: 5, abandoned: 30 }),
      ...outcomes('craze', 'odd', { completed: 20, failed: 6, running: 2 }),
    ],
    NOW,
    CFG,
  );
  assert.deepEqual(
    conditions.map((c) => [c.subject, c.firing, c.detail]),
    [
      ['craze:explore', false, '4 of 20 outcome(s) failed in the last 60 min (20%; fires at 25% with at least 20): failed 4; set apart: cancelled 10, abandoned 5'],
      ['craze:review', true, '5 of 20 outcome(s) failed in the last 60 min (25%; fires at 25% with at least 20): failed 5; set apart: cancelled 1'],
      ['craze:plan', false, '5 of 15 outcome(s) failed in the last 60 min (33.3333%; fires at 25% with at least 20): failed 5; set apart: abandoned 30'],
      ['craze:odd', false, '6 of 26 outcome(s) failed in the last 60 min (23.0769%; fires at 25% with at least 20): failed 6; set apart: running 2'],
    ],
  );
});

test('subagent_failure_rate: runtime and craze kinds of one name are apart; a runtime outcome_kind in lower case is still a failure', () => {
  const conditions = subagentFailureRate(
    [...outcomes('runtime', 'explore', { Completed: 15, completed: 5 }), ...outcomes('craze', 'explore', { completed: 15, failed: 5 })],
    NOW,
    CFG,
  );
  assert.deepEqual(
    conditions.map((c) => [c.subject, c.firing]),
    [
      ['runtime:explore', true],
      ['craze:explore', true],
    ],
  );
});

test('subagent_failure_rate window includes now - windowMs and now; a kind with no outcome left in it still gets a condition', () => {
  const rows = [
    ...outcomes('runtime', 'k', { Completed: 15, Failed: 4 }),
    ...outcomes('runtime', 'k', { Failed: 1 }, NOW - HOUR),
    ...outcomes('runtime', 'k', { Failed: 10 }, NOW - HOUR - 1),
    ...outcomes('runtime', 'k', { Failed: 10 }, NOW + 1),
    ...outcomes('runtime', 'gone', { Failed: 40 }, NOW - 2 * HOUR),
  ];
  const conditions = subagentFailureRate(rows, NOW, CFG);
  assert.equal(of(conditions, 'runtime:k').firing, true);
  assert.match(of(conditions, 'runtime:k').detail, /^5 of 20 outcome\(s\) failed/);
  assert.equal(of(conditions, 'runtime:gone').firing, false);
  assert.match(of(conditions, 'runtime:gone').detail, /^0 of 0 outcome\(s\)/);
});

// ---------------------------------------------------------------- chain_integrity

const finding = (loopId: string, seq: bigint, verdict: string, time = NOW, filled?: boolean): ChainFindingRow => ({
  loopId,
  seq,
  verdict,
  time,
  detail: verdict === 'gap' ? `expected seq ${seq - 2n}, got ${seq}` : '',
  ...(filled === undefined ? {} : { filled }),
});

test('chain_integrity: mismatch, fork, regression and time_regression fire at once, critical', () => {
  for (const verdict of ['mismatch', 'fork', 'regression', 'time_regression']) {
    const [c] = chainIntegrity([finding('L', 7n, verdict)], NOW, CFG);
    assert.deepEqual([c?.subject, c?.firing, c?.severity, c?.detail], ['L', true, 'critical', `${verdict} at seq 7`], verdict);
  }
});

test('chain_integrity: an unfilled gap fires, as a warning, once gapGraceMs old; a filled gap never', () => {
  const at = (time: number, filled?: boolean) => chainIntegrity([finding('L', 9n, 'gap', time, filled)], NOW, CFG)[0]!;
  const within = at(NOW - 5 * MIN + 1);
  assert.deepEqual([within.firing, within.severity, within.detail], [false, 'info', '1 gap(s) within the 5 min grace']);
  const late = at(NOW - 5 * MIN);
  assert.deepEqual([late.firing, late.severity, late.detail], [true, 'warning', 'gap at seq 9: expected seq 7, got 9']);
  assert.equal(at(NOW - 5 * MIN - 1).firing, true);
  assert.equal(at(NOW - 5 * MIN - 1, false).firing, true);
  const filled = at(NOW - 5 * HOUR, true);
  assert.deepEqual([filled.firing, filled.detail], [false, 'no violation, no unfilled gap']);
});

test('chain_integrity per loop: findings listed by seq, critical if any is; loops with only other verdicts are fine', () => {
  const big = 2n ** 63n + 5n;
  const conditions = chainIntegrity(
    [
      finding('A', big, 'mismatch'),
      finding('A', 4n, 'gap', NOW - HOUR),
      finding('A', 12n, 'gap', NOW),
      finding('B', 3n, 'duplicate'),
      finding('B', 4n, 'malformed'),
      finding('C', 2n, 'gap', NOW - HOUR),
    ],
    NOW,
    CFG,
  );
  assert.deepEqual(
    conditions.map((c) => [c.subject, c.firing, c.severity, c.detail]),
    [
      ['A', true, 'critical', `gap at seq 4: expected seq 2, got 4; mismatch at seq ${big}`],
      ['B', false, 'info', 'no violation, no unfilled gap'],
      ['C', true, 'warning', 'gap at seq 2: expected seq 0, got 2'],
    ],
  );
  assert.equal(`${big}`, '9223372036854775813');
});

// ---------------------------------------------------------------- spend_budget

const USD = 1_000_000_000_000n;

test('spend_budget fires strictly above the limit, per root, name, project and day', () => {
  const conditions = spendBudget(
    [
      { kind: 'root', key: 'loop-1', limitPico: 10n * USD },
      { kind: 'name', key: 'researcher', limitPico: 10n * USD },
      { kind: 'project', key: '/home/me/repo:with:colons', limitPico: 10n * USD },
      { kind: 'day', key: '2026-11-30', limitPico: 100n * USD },
    ],
    [
      { kind: 'root', key: 'loop-1', spentPico: 10n * USD },
      { kind: 'name', key: 'researcher', spentPico: 10n * USD + 1n },
      { kind: 'project', key: '/home/me/repo:with:colons', spentPico: 10n * USD - 1n },
      { kind: 'day', key: '2026-11-30', spentPico: 60n * USD },
      { kind: 'day', key: '2026-11-30', spentPico: 40n * USD + 500_000_000_000n },
      { kind: 'day', key: '2026-11-29', spentPico: 1000n * USD },
    ],
  );
  assert.deepEqual(
    conditions.map((c) => [c.subject, c.firing, c.severity, c.detail]),
    [
      ['root:loop-1', false, 'info', 'spent $10.00 of a $10.00 budget'],
      ['name:researcher', true, 'critical', 'spent $10.000000000001 of a $10.00 budget, $0.000000000001 over'],
      ['project:/home/me/repo:with:colons', false, 'info', 'spent $9.999999999999 of a $10.00 budget'],
      ['day:2026-11-30', true, 'critical', 'spent $100.50 of a $100.00 budget, $0.50 over'],
    ],
  );
});

test('spend_budget stays exact above 2^64 picodollars (about $18.4M), where a float would not', () => {
  const limit = 2n ** 64n;
  const [over] = spendBudget([{ kind: 'root', key: 'r', limitPico: limit }], [{ kind: 'root', key: 'r', spentPico: limit + 1n }]);
  assert.equal(over?.firing, true);
  assert.equal(over?.detail, 'spent $18446744.073709551617 of a $18446744.073709551616 budget, $0.000000000001 over');
  assert.equal(Number(limit + 1n) === Number(limit), true, 'as floats the two amounts are equal');
  const [at] = spendBudget([{ kind: 'root', key: 'r', limitPico: limit * 1000n }], [{ kind: 'root', key: 'r', spentPico: limit * 1000n }]);
  assert.deepEqual([at?.firing, at?.detail], [false, 'spent $18446744073.709551616 of a $18446744073.709551616 budget']);
});

test('spend_budget: a budget without spend is fine, spend without a budget is ignored, two budgets of one scope keep the stricter', () => {
  const conditions = spendBudget(
    [
      { kind: 'name', key: 'idle', limitPico: USD },
      { kind: 'root', key: 'r', limitPico: 5n * USD },
      { kind: 'root', key: 'r', limitPico: 2n * USD },
      { kind: 'root', key: 'r', limitPico: 3n * USD },
    ],
    [
      { kind: 'root', key: 'r', spentPico: 2n * USD + 1n },
      { kind: 'project', key: 'unbudgeted', spentPico: 1000n * USD },
    ],
  );
  assert.deepEqual(
    conditions.map((c) => [c.subject, c.firing, c.detail]),
    [
      ['name:idle', false, 'spent $0.00 of a $1.00 budget'],
      ['root:r', true, 'spent $2.000000000001 of a $2.00 budget, $0.000000000001 over'],
    ],
  );
});
