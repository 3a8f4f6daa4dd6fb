/**
 * Alert rules (issue 11): pure functions from rows read out of ClickHouse to
 * one condition per subject a rule looked at. `firing: false` says "this
 * subject is fine now", which is what lets the state machine (state.ts)
 * resolve an alert; a subject a rule was not given gets no condition at all.
 *
 * Conventions shared by every rule, so each edge is decided once:
 * - Times are Unix milliseconds and `now` is an argument, never read here:
 *   the same rows and `now` give the same conditions on every worker.
 * - A window `[now - windowMs, now]` includes both ends; a row stamped after
 *   `now` is outside it (the reading query bounds its rows by `now` as well).
 * - A wait of D (stalled, interrupted, unanswered, gap grace) is reached once
 *   `now - since >= D`; a loop is too old to look at once `now - lastTime > maxAgeMs`.
 * - Severity: `critical` when something has already gone wrong and will not
 *   heal by itself (a loop gave up, recorded history contradicts itself, money
 *   is spent beyond its budget); `warning` when it may still heal (a loop may
 *   converge or resume, a human may answer, a gap may fill, a failure rate may
 *   drop). A condition that is not firing carries `info`.
 * - Details are bounded (MAX_DETAIL characters, MAX_ITEMS items listed) so a
 *   loop with ten thousand warnings still makes a readable notification.
 */
import type { AlertRuleSettings } from '../config/index.js';
import type { AlertCondition } from './condition.js';
import { counts, duration, fire, listed, ok, percent, usd, warningSummary } from './detail.js';
import type { ChainFindingRow, HumanRequestRow, LoopActivityRow, LoopWarningsRow, SpendBudget, SpendRow, SubAgentOutcomeRow } from './rule-rows.js';

/** Thresholds of every rule: the settings' shape (AGENTLEDGER_ALERT_*, docs/configuration.md), one definition in config/. */
export type AlertRuleConfig = AlertRuleSettings;

export const DEFAULT_ALERT_RULE_CONFIG: AlertRuleConfig = {
  windowMs: 3_600_000,
  convergenceMinWarnings: 3,
  convergenceCount: 5,
  stalledAfterMs: 900_000,
  maxAgeMs: 86_400_000,
  humanWaitMs: 1_800_000,
  subagentFailureRate: 0.25,
  subagentMinOutcomes: 20,
  gapGraceMs: 300_000,
};

// ---------------------------------------------------------------- rules

/**
 * `stuck_loop`: the loop finished Stuck, or its parent reported it Stuck.
 * Fires at once, with the loop's convergence warnings (all of them, not only
 * the window's) as the context of why it got stuck.
 */
export function stuckLoop(rows: readonly LoopWarningsRow[]): AlertCondition[] {
  return rows.map((row) => {
    if (!isStuck(row)) return ok('stuck_loop', row.loopId, row.finishedOutcome === undefined ? 'running' : `finished ${row.finishedOutcome}`);
    const why = row.finishedOutcome === 'Stuck' ? 'finished Stuck' : 'reported Stuck by its parent';
    const context = row.warnings.length === 0 ? 'no convergence warnings' : `convergence warnings: ${warningSummary(row.warnings)}`;
    return fire('stuck_loop', row.loopId, 'critical', `${why}; ${context}`);
  });
}

/**
 * `convergence`: at least `convergenceMinWarnings` warnings inside the window,
 * or one of them with a count of `convergenceCount` or more. A loop that
 * finished Completed has converged after all; a stuck loop is `stuck_loop`'s
 * (finished Stuck or reported so by its parent), so it does not page twice.
 */
export function convergence(
  rows: readonly LoopWarningsRow[],
  now: number,
  config: Pick<AlertRuleConfig, 'windowMs' | 'convergenceMinWarnings' | 'convergenceCount'>,
): AlertCondition[] {
  return rows.map((row) => {
    if (row.finishedOutcome === 'Completed') return ok('convergence', row.loopId, 'finished Completed');
    if (isStuck(row)) return ok('convergence', row.loopId, 'stuck: raised as stuck_loop');
    const recent = row.warnings.filter((w) => inWindow(w.time, now, config.windowMs));
    if (recent.length === 0) return ok('convergence', row.loopId, `no warning in the last ${duration(config.windowMs)}`);
    const highest = recent.reduce((max, w) => Math.max(max, w.count), -Infinity);
    const firing = recent.length >= config.convergenceMinWarnings || highest >= config.convergenceCount;
    const detail =
      `${recent.length} warning(s) in the last ${duration(config.windowMs)} (fires at ${config.convergenceMinWarnings}), ` +
      `highest count ${highest} (fires at ${config.convergenceCount}): ${warningSummary(recent)}`;
    return firing ? fire('convergence', row.loopId, 'warning', detail) : ok('convergence', row.loopId, detail);
  });
}

/**
 * `stalled_loop`: started, not finished, and no envelope for `stalledAfterMs`.
 * An interrupted loop is waiting by design, so its clock runs from the
 * interruption instead. Loops quiet for more than `maxAgeMs` get no
 * condition: replaying last month's journals must not page for every loop in it.
 */
export function stalledLoop(
  rows: readonly LoopActivityRow[],
  now: number,
  config: Pick<AlertRuleConfig, 'stalledAfterMs' | 'maxAgeMs'>,
): AlertCondition[] {
  return rows.filter((row) => now - row.lastTime <= config.maxAgeMs).map((row) => stalledCondition(row, now, config.stalledAfterMs));
}

function stalledCondition(row: LoopActivityRow, now: number, stalledAfterMs: number): AlertCondition {
  if (!row.started) return ok('stalled_loop', row.loopId, 'no LoopStarted');
  if (row.finished) return ok('stalled_loop', row.loopId, 'finished');
  const interrupted = row.interruptedSince !== undefined;
  const quiet = now - (row.interruptedSince ?? row.lastTime);
  const detail = `${interrupted ? 'interrupted' : 'no envelope'} for ${duration(quiet)} (stalled at ${duration(stalledAfterMs)})`;
  return quiet >= stalledAfterMs ? fire('stalled_loop', row.loopId, 'warning', detail) : ok('stalled_loop', row.loopId, detail);
}

/**
 * `waiting_on_human`, per loop: a HumanRequested with no HumanResponded of the
 * same action_id for `humanWaitMs`. Rows of one action are paired here too
 * (answered if any row has a response, waiting since the earliest request),
 * so the rule does not depend on the query having merged them.
 */
export function waitingOnHuman(
  rows: readonly HumanRequestRow[],
  now: number,
  config: Pick<AlertRuleConfig, 'humanWaitMs'>,
): AlertCondition[] {
  const loops = new Map<string, Map<string, { requestedAt: number; answered: boolean }>>();
  for (const row of rows) {
    const actions = loops.get(row.loopId) ?? new Map<string, { requestedAt: number; answered: boolean }>();
    loops.set(row.loopId, actions);
    const seen = actions.get(row.actionId);
    actions.set(row.actionId, {
      requestedAt: Math.min(seen?.requestedAt ?? Infinity, row.requestedAt),
      answered: (seen?.answered ?? false) || row.respondedAt !== undefined,
    });
  }
  return [...loops].map(([loopId, actions]) => {
    const open = [...actions].filter(([, a]) => !a.answered).sort(([, a], [, b]) => a.requestedAt - b.requestedAt);
    const overdue = open.filter(([, a]) => now - a.requestedAt >= config.humanWaitMs);
    if (overdue.length === 0) {
      return ok('waiting_on_human', loopId, `${open.length} request(s) unanswered, none for ${duration(config.humanWaitMs)}`);
    }
    const waits = overdue.map(([actionId, a]) => `action ${actionId} waiting ${duration(now - a.requestedAt)}`);
    return fire('waiting_on_human', loopId, 'warning', `${overdue.length} request(s) unanswered for ${duration(config.humanWaitMs)} or more: ${listed(waits)}`);
  });
}

/**
 * A failure rate as an integer number of parts per million, converted once so
 * the comparison is exact: `0.1 + 0.2` is 300000 ppm, and 3 failures of 10
 * outcomes reach it. Throws a RangeError outside 0..1 (a configuration error).
 */
export function ratePpm(rate: number): number {
  if (!(rate >= 0 && rate <= 1)) throw new RangeError(`a failure rate must be between 0 and 1, got ${rate}`);
  return Math.round(rate * 1_000_000);
}

/** What one outcome counts as in a failure rate. */
type OutcomeClass = 'success' | 'failure' | 'apart';

/**
 * runtime: every outcome_kind but Completed is a failure. craze: only
 * `failed` is; `cancelled` and `abandoned` say someone stopped the sub-agent,
 * not that it failed, so they are set apart: outside the rate (counted as
 * successes they would dilute it) and listed in the detail. An unknown craze
 * status is set apart the same way rather than guessed at.
 */
function classify(row: SubAgentOutcomeRow): OutcomeClass {
  if (row.source === 'runtime') return row.outcome === 'Completed' ? 'success' : 'failure';
  if (row.outcome === 'completed') return 'success';
  return row.outcome === 'failed' ? 'failure' : 'apart';
}

interface OutcomeTally {
  outcomes: number;
  failures: number;
  readonly failed: Map<string, number>;
  readonly apart: Map<string, number>;
}

/**
 * `subagent_failure_rate`, per sub-agent kind (`runtime:<definition>`,
 * `craze:<type>`) over the window: fires when failures / outcomes reaches
 * `subagentFailureRate` and at least `subagentMinOutcomes` outcomes count
 * (never with none). Every kind in the rows gets a condition, one whose
 * outcomes all fell out of the window included, so its alert can resolve.
 */
export function subagentFailureRate(
  rows: readonly SubAgentOutcomeRow[],
  now: number,
  config: Pick<AlertRuleConfig, 'windowMs' | 'subagentFailureRate' | 'subagentMinOutcomes'>,
): AlertCondition[] {
  const ppm = ratePpm(config.subagentFailureRate);
  const kinds = new Map<string, OutcomeTally>();
  for (const row of rows) {
    const subject = `${row.source}:${row.kind}`;
    const tally = kinds.get(subject) ?? { outcomes: 0, failures: 0, failed: new Map<string, number>(), apart: new Map<string, number>() };
    kinds.set(subject, tally);
    if (!inWindow(row.time, now, config.windowMs)) continue;
    const cls = classify(row);
    if (cls === 'apart') {
      increment(tally.apart, row.outcome);
      continue;
    }
    tally.outcomes++;
    if (cls === 'failure') {
      tally.failures++;
      increment(tally.failed, row.outcome);
    }
  }
  return [...kinds].map(([subject, t]) => {
    const firing =
      t.outcomes > 0 && t.outcomes >= config.subagentMinOutcomes && BigInt(t.failures) * 1_000_000n >= BigInt(ppm) * BigInt(t.outcomes);
    const rate = t.outcomes === 0 ? 'no rate' : percent((t.failures * 1_000_000) / t.outcomes);
    let detail =
      `${t.failures} of ${t.outcomes} outcome(s) failed in the last ${duration(config.windowMs)} (${rate}; ` +
      `fires at ${percent(ppm)} with at least ${config.subagentMinOutcomes})`;
    if (t.failed.size > 0) detail += `: ${counts(t.failed)}`;
    if (t.apart.size > 0) detail += `; set apart: ${counts(t.apart)}`;
    return firing ? fire('subagent_failure_rate', subject, 'warning', detail) : ok('subagent_failure_rate', subject, detail);
  });
}

/** Verdicts that prove a chain wrong the moment they are stored. */
const BROKEN_CHAIN = new Set(['mismatch', 'fork', 'regression', 'time_regression']);

/**
 * `chain_integrity`, per loop: a mismatch, fork, regression or time
 * regression fires at once and is critical; a gap is usually a late
 * envelope, so it fires (as a warning) only when still unfilled `gapGraceMs`
 * after it was stored. Other verdicts are not this rule's. A loop given with
 * nothing that fires is reported fine.
 */
export function chainIntegrity(
  rows: readonly ChainFindingRow[],
  now: number,
  config: Pick<AlertRuleConfig, 'gapGraceMs'>,
): AlertCondition[] {
  const loops = new Map<string, ChainFindingRow[]>();
  for (const row of rows) {
    const found = loops.get(row.loopId) ?? [];
    loops.set(row.loopId, found);
    found.push(row);
  }
  return [...loops].map(([loopId, found]) => {
    const broken = found.filter((r) => BROKEN_CHAIN.has(r.verdict));
    const gaps = found.filter((r) => r.verdict === 'gap' && r.filled !== true);
    const lateGaps = gaps.filter((r) => now - r.time >= config.gapGraceMs);
    const firing = [...broken, ...lateGaps].sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
    if (firing.length === 0) {
      return ok('chain_integrity', loopId, gaps.length === 0 ? 'no violation, no unfilled gap' : `${gaps.length} gap(s) within the ${duration(config.gapGraceMs)} grace`);
    }
    const detail = listed(firing.map((r) => `${r.verdict} at seq ${r.seq}${r.detail === '' ? '' : `: ${r.detail}`}`));
    return fire('chain_integrity', loopId, broken.length > 0 ? 'critical' : 'warning', detail);
  });
}

/**
 * `spend_budget`: one condition per configured budget (subject
 * `<kind>:<key>`), firing when its spend is strictly above the limit. Two
 * budgets of one scope: the stricter holds. Amounts stay bigint picodollars
 * down to the detail text.
 */
export function spendBudget(budgets: readonly SpendBudget[], spend: readonly SpendRow[]): AlertCondition[] {
  const spent = new Map<string, bigint>();
  for (const row of spend) spent.set(`${row.kind}:${row.key}`, (spent.get(`${row.kind}:${row.key}`) ?? 0n) + row.spentPico);
  const limits = new Map<string, bigint>();
  for (const b of budgets) {
    const subject = `${b.kind}:${b.key}`;
    const other = limits.get(subject);
    limits.set(subject, other !== undefined && other < b.limitPico ? other : b.limitPico);
  }
  return [...limits].map(([subject, limit]) => {
    const used = spent.get(subject) ?? 0n;
    const detail = `spent $${usd(used)} of a $${usd(limit)} budget`;
    return used > limit ? fire('spend_budget', subject, 'critical', `${detail}, $${usd(used - limit)} over`) : ok('spend_budget', subject, detail);
  });
}

// ---------------------------------------------------------------- helpers

const isStuck = (row: LoopWarningsRow): boolean => row.finishedOutcome === 'Stuck' || row.stuckByParent === true;

const inWindow = (time: number, now: number, windowMs: number): boolean => time <= now && now - time <= windowMs;

function increment(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}
