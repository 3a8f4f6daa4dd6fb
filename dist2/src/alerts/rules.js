import { picoToUsdText } from '../money/picodollars.js';
export const RULE_IDS = [
    'stuck_loop',
    'convergence',
    'stalled_loop',
    'waiting_on_human',
    'subagent_failure_rate',
    'chain_integrity',
    'spend_budget',
];
export const DEFAULT_ALERT_RULE_CONFIG = {
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
export function stuckLoop(rows) {
    return rows.map((row) => {
        if (!isStuck(row))
            return ok('stuck_loop', row.loopId, row.finishedOutcome === undefined ? 'running' : `finished ${row.finishedOutcome}`);
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
export function convergence(rows, now, config) {
    return rows.map((row) => {
        if (row.finishedOutcome === 'Completed')
            return ok('convergence', row.loopId, 'finished Completed');
        if (isStuck(row))
            return ok('convergence', row.loopId, 'stuck: raised as stuck_loop');
        const recent = row.warnings.filter((w) => inWindow(w.time, now, config.windowMs));
        if (recent.length === 0)
            return ok('convergence', row.loopId, `no warning in the last ${duration(config.windowMs)}`);
        const highest = recent.reduce((max, w) => Math.max(max, w.count), -Infinity);
        const firing = recent.length >= config.convergenceMinWarnings || highest >= config.convergenceCount;
        const detail = `${recent.length} warning(s) in the last ${duration(config.windowMs)} (fires at ${config.convergenceMinWarnings}), ` +
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
export function stalledLoop(rows, now, config) {
    return rows.filter((row) => now - row.lastTime <= config.maxAgeMs).map((row) => stalledCondition(row, now, config.stalledAfterMs));
}
function stalledCondition(row, now, stalledAfterMs) {
    if (!row.started)
        return ok('stalled_loop', row.loopId, 'no LoopStarted');
    if (row.finished)
        return ok('stalled_loop', row.loopId, 'finished');
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
export function waitingOnHuman(rows, now, config) {
    const loops = new Map();
    for (const row of rows) {
        const actions = loops.get(row.loopId) ?? new Map();
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
export function ratePpm(rate) {
    if (!(rate >= 0 && rate <= 1))
        throw new RangeError(`a failure rate must be between 0 and 1, got ${rate}`);
    return Math.round(rate * 1_000_000);
}
/**
 * runtime: every outcome_kind but Completed is a failure. craze: only
 * `failed` is; `cancelled` and `abandoned` say someone stopped the sub-agent,
 * not that it failed, so they are set apart: outside the rate (counted as
 * successes they would dilute it) and listed in the detail. An unknown craze
 * status is set apart the same way rather than guessed at.
 */
function classify(row) {
    if (row.source === 'runtime')
        return row.outcome === 'Completed' ? 'success' : 'failure';
    if (row.outcome === 'completed')
        return 'success';
    return row.outcome === 'failed' ? 'failure' : 'apart';
}
/**
 * `subagent_failure_rate`, per sub-agent kind (`runtime:<definition>`,
 * `craze:<type>`) over the window: fires when failures / outcomes reaches
 * `subagentFailureRate` and at least `subagentMinOutcomes` outcomes count
 * (never with none). Every kind in the rows gets a condition, one whose
 * outcomes all fell out of the window included, so its alert can resolve.
 */
export function subagentFailureRate(rows, now, config) {
    const ppm = ratePpm(config.subagentFailureRate);
    const kinds = new Map();
    for (const row of rows) {
        const subject = `${row.source}:${row.kind}`;
        const tally = kinds.get(subject) ?? { outcomes: 0, failures: 0, failed: new Map(), apart: new Map() };
        kinds.set(subject, tally);
        if (!inWindow(row.time, now, config.windowMs))
            continue;
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
        const firing = t.outcomes > 0 && t.outcomes >= config.subagentMinOutcomes && BigInt(t.failures) * 1000000n >= BigInt(ppm) * BigInt(t.outcomes);
        const rate = t.outcomes === 0 ? 'no rate' : percent((t.failures * 1_000_000) / t.outcomes);
        let detail = `${t.failures} of ${t.outcomes} outcome(s) failed in the last ${duration(config.windowMs)} (${rate}; ` +
            `fires at ${percent(ppm)} with at least ${config.subagentMinOutcomes})`;
        if (t.failed.size > 0)
            detail += `: ${counts(t.failed)}`;
        if (t.apart.size > 0)
            detail += `; set apart: ${counts(t.apart)}`;
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
export function chainIntegrity(rows, now, config) {
    const loops = new Map();
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
export function spendBudget(budgets, spend) {
    const spent = new Map();
    for (const row of spend)
        spent.set(`${row.kind}:${row.key}`, (spent.get(`${row.kind}:${row.key}`) ?? 0n) + row.spentPico);
    const limits = new Map();
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
const MAX_DETAIL = 1000;
const MAX_ITEMS = 5;
const MAX_ITEM = 160;
function fire(rule, subject, severity, detail) {
    return { rule, subject, firing: true, severity, detail: clip(detail, MAX_DETAIL) };
}
function ok(rule, subject, detail) {
    return { rule, subject, firing: false, severity: 'info', detail: clip(detail, MAX_DETAIL) };
}
const isStuck = (row) => row.finishedOutcome === 'Stuck' || row.stuckByParent === true;
const inWindow = (time, now, windowMs) => time <= now && now - time <= windowMs;
/** Cuts text to `max` characters with an ellipsis, never between the halves of a surrogate pair. */
function clip(text, max) {
    if (text.length <= max)
        return text;
    let end = max - 1;
    const last = text.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff)
        end--;
    return `${text.slice(0, end)}…`;
}
/** The first MAX_ITEMS items, each clipped, and how many more there were. */
function listed(items) {
    const shown = items.slice(0, MAX_ITEMS).map((i) => clip(i, MAX_ITEM));
    const more = items.length - shown.length;
    return more > 0 ? `${shown.join('; ')}; +${more} more` : shown.join('; ');
}
/**
 * Warnings grouped by (detector, reason), newest group first: a detector
 * repeating itself a hundred times is one line with its number, not a hundred.
 */
function warningSummary(warnings) {
    const groups = new Map();
    for (const w of warnings) {
        const key = JSON.stringify([w.detector, w.reason]);
        const g = groups.get(key) ?? { detector: w.detector, reason: w.reason, warnings: 0, highest: -Infinity, latest: -Infinity };
        groups.set(key, { ...g, warnings: g.warnings + 1, highest: Math.max(g.highest, w.count), latest: Math.max(g.latest, w.time) });
    }
    const sorted = [...groups.values()].sort((a, b) => b.latest - a.latest);
    return listed(sorted.map((g) => `${g.detector}: ${g.reason} (${g.warnings} warning(s), count up to ${g.highest})`));
}
function increment(map, key) {
    map.set(key, (map.get(key) ?? 0) + 1);
}
/** `Failed 3, Stuck 1`: most frequent first, then by name, so the text is stable. */
function counts(map) {
    return [...map]
        .sort(([ka, a], [kb, b]) => b - a || (ka < kb ? -1 : ka > kb ? 1 : 0))
        .map(([k, n]) => `${k} ${n}`)
        .join(', ');
}
/** Parts per million as a percentage with up to 4 decimals, truncated: 250000 -> `25%`, 333333.3 -> `33.3333%`. */
function percent(ppm) {
    const units = Math.floor(ppm);
    const whole = Math.floor(units / 10_000);
    const frac = String(units % 10_000).padStart(4, '0').replace(/0+$/, '');
    return frac === '' ? `${whole}%` : `${whole}.${frac}%`;
}
/** `90 s`, `15 min`, `25 h`: detail text only, rounded down. */
function duration(ms) {
    if (ms < 60_000)
        return `${Math.floor(ms / 1000)} s`;
    if (ms < 7_200_000)
        return `${Math.floor(ms / 60_000)} min`;
    return `${Math.floor(ms / 3_600_000)} h`;
}
/** Exact USD text of picodollars, trailing zeros dropped down to cents: `12.50`, `0.000123`, `1.000000000001`. */
function usd(pico) {
    return picoToUsdText(pico).replace(/(\.\d\d\d*?)0+$/, '$1');
}
//# sourceMappingURL=rules.js.map