import { queryRows, querySql, renderSql } from '../sink/clickhouse/sql.js';
import { enqueueNotices } from './delivery.js';
import { budgetSpend, budgetsAt } from './budgets.js';
import { evaluate, heardSince, stuckChildren } from './evaluate.js';
import { RULE_IDS, spendBudget } from './rules.js';
import { notificationKey, step } from './state.js';
import { noticeOf } from './webhook.js';
/**
 * Loops evaluated per chunk: a chunk's reads, conditions and transitions
 * take about a second on 18.16, so a stop waits for one chunk at most, and
 * a sweep over a backlog of 100,000 loops moves its cursor 50 times.
 */
export const ALERT_CHUNK_LOOPS = 2000;
const rows = queryRows;
const stateKey = (prefix) => `${prefix}:alerts:state`;
/** Where the sweep in progress is (SweepCursor as JSON): absent between sweeps. */
const cursorKey = (prefix) => `${prefix}:alerts:sweep-cursor`;
const seededKey = (prefix) => `${prefix}:alerts:seeded`;
const field = (rule, subject) => JSON.stringify([rule, subject]);
/** Sets a hash field only if it still holds `expected` ('' for absent): the compare-and-set of step 1. */
const CAS = `
local current = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if current ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1`;
async function compareAndSet(redis, prefix, f, expected, next) {
    return (await redis.eval(CAS, 1, stateKey(prefix), f, expected, next)) === 1;
}
/**
 * Refills Redis from the `alerts` table when it has lost the states (no
 * seeded mark): each (rule, subject)'s latest transition is its state.
 */
async function seed(deps, now) {
    const { redis, prefix } = deps;
    if ((await redis.exists(seededKey(prefix))) === 1)
        return;
    const held = await rows(deps.ch, 'alert_states');
    for (const r of held) {
        if (!RULE_IDS.includes(r.rule))
            continue;
        // One resolved long ago is as good as none (see prune()).
        if (r.state !== 'firing' && now - Number(r.resolved_at_ms) > PRUNE_RESOLVED_AFTER_MS)
            continue;
        const state = {
            rule: r.rule,
            subject: r.subject,
            state: r.state === 'firing' ? 'firing' : 'resolved',
            severity: r.severity,
            firedAt: Number(r.fired_at_ms),
            ...(Number(r.resolved_at_ms) > 0 ? { resolvedAt: Number(r.resolved_at_ms) } : {}),
            lastNotifiedAt: Number(r.last_notified_at_ms),
            notifications: Number(r.notifications),
            detail: r.detail,
        };
        // A state a worker stepped since (a newer one in Redis) stays.
        await redis.hsetnx(stateKey(prefix), field(r.rule, r.subject), JSON.stringify(state));
    }
    await redis.set(seededKey(prefix), String(held.length));
    if (held.length > 0)
        deps.log.info('alert states rebuilt from the alerts table', { states: held.length });
}
/**
 * Resolved states are kept this long, then dropped from Redis: a resolved
 * state steps exactly as no state does, so what is left is the firing ones
 * and the recent past, not every alert ever. Not at once: a racing sweep
 * that read the field empty before the alert fired could then set it again
 * (compare-and-set sees the same empty field), and notify a second time.
 */
export const PRUNE_RESOLVED_AFTER_MS = 24 * 3600 * 1000;
/** Deletes a hash field only if it still holds ARGV[2]. */
const CAD = `
if (redis.call('HGET', KEYS[1], ARGV[1]) or '') ~= ARGV[2] then return 0 end
return redis.call('HDEL', KEYS[1], ARGV[1])`;
/** Drops the states resolved more than PRUNE_RESOLVED_AFTER_MS before `now`, each only if unchanged; how many. */
async function prune(deps, held, now) {
    let n = 0;
    for (const [f, text] of Object.entries(held)) {
        const s = JSON.parse(text);
        if (s.state !== 'resolved' || s.pending !== undefined || now - (s.resolvedAt ?? now) <= PRUNE_RESOLVED_AFTER_MS)
            continue;
        n += Number(await deps.redis.eval(CAD, 1, stateKey(deps.prefix), f, text));
    }
    return n;
}
/** Transition rows per insert: one insert, one part, however many alerts a sweep raises. */
const RECORD_ROWS = 500;
/**
 * Step 2 for all of a sweep's transitions: their rows in one insert per
 * RECORD_ROWS, then their delivery jobs in one addBulk, each keyed by its
 * transition (a repeat collapses in the table and is a no-op in the queue).
 * One insert per transition made a part each: with a burst of alerts ingest
 * ran at 0.85 of its speed without alerting, against 0.91 now (bench:alerts).
 */
async function recordAndQueue(deps, transitions) {
    if (transitions.length === 0)
        return;
    const [head, tuple] = querySql('alert_record').split(/\bVALUES\b/);
    if (head === undefined || tuple === undefined)
        throw new Error('alert_record.sql is one INSERT … VALUES (…)');
    for (let i = 0; i < transitions.length; i += RECORD_ROWS) {
        const values = transitions.slice(i, i + RECORD_ROWS).map(({ state, kind }) => renderSql(tuple, {
            rule: state.rule,
            subject: state.subject,
            transition_key: notificationKey(state, kind),
            notification: kind,
            state: state.state,
            severity: state.severity,
            fired_at_ms: BigInt(state.firedAt),
            resolved_at_ms: BigInt(state.resolvedAt ?? 0),
            at_ms: BigInt(state.lastNotifiedAt),
            notifications: state.notifications,
            detail: state.detail,
        }).trim());
        await deps.ch.command({ query: `${head.trim()} VALUES ${values.join(', ')}` });
    }
    await enqueueNotices(deps.deliveries, transitions.map(({ state, kind }) => noticeOf(state, kind)));
}
const withoutPending = ({ pending: _pending, ...state }) => state;
/** Finishes what a dead sweep left marked pending. */
async function finishPending(deps) {
    const all = await deps.redis.hgetall(stateKey(deps.prefix));
    const marked = [];
    for (const [f, text] of Object.entries(all)) {
        const stored = JSON.parse(text);
        if (stored.pending !== undefined)
            marked.push({ f, text, stored, pending: stored.pending });
    }
    await recordAndQueue(deps, marked.map((m) => ({ state: withoutPending(m.stored), kind: m.pending })));
    let n = 0;
    for (const m of marked)
        if (await compareAndSet(deps.redis, deps.prefix, m.f, m.text, JSON.stringify(withoutPending(m.stored))))
            n++;
    return n;
}
/**
 * Conditions resolving the firing alerts of these rules whose subject the
 * evaluation no longer reports: a sub-agent kind without an outcome in the
 * window, a day that is over, a budget taken out of the file. (The rules only
 * see the subjects with rows or budgets.)
 */
function gone(held, conditions, rules) {
    const seen = new Set(conditions.map((c) => field(c.rule, c.subject)));
    const quiet = [];
    for (const [f, text] of Object.entries(held)) {
        const s = JSON.parse(text);
        if (rules.includes(s.rule) && s.state === 'firing' && !seen.has(f)) {
            quiet.push({ rule: s.rule, subject: s.subject, firing: false, severity: 'info', detail: s.rule === 'spend_budget' ? 'no longer budgeted (a day over, or the budget removed)' : 'no outcome in the window' });
        }
    }
    return quiet;
}
/** The `spend_budget` conditions at `now`: each budget in force against its spend so far. */
async function budgetConditions(deps, now) {
    if (deps.budgets === undefined)
        return [];
    const inForce = budgetsAt(deps.budgets, now);
    return inForce.length === 0 ? [] : spendBudget(inForce, await budgetSpend(deps.ch, inForce, now));
}
/** Alerts firing now per rule, as the states in Redis hold them (every rule listed, 0 when none). */
export async function firingByRule(redis, prefix) {
    const counts = new Map(RULE_IDS.map((r) => [r, 0]));
    for (const text of await redis.hvals(stateKey(prefix))) {
        const s = JSON.parse(text);
        if (s.state === 'firing' && counts.has(s.rule))
            counts.set(s.rule, counts.get(s.rule) + 1);
    }
    return counts;
}
/** Reads what a sweep starts from: what a worker checks at start (the tables exist, the user may read them). */
export async function alertWatermark(ch) {
    await rows(ch, 'alert_watermark');
}
/** Moves the cursor only if it still holds what this sweep read (two sweeps handed one job never skip a chunk). */
const SET_IF = `
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
return 1`;
async function moveCursor(deps, from, to) {
    return (await deps.redis.eval(SET_IF, 1, cursorKey(deps.prefix), from, to)) === 1;
}
/** The cursor of the sweep in progress, or a new one begun at `now` (written only when the first chunk is done). */
async function currentCursor(deps, now) {
    const text = (await deps.redis.get(cursorKey(deps.prefix))) ?? '';
    if (text !== '')
        return { cursor: JSON.parse(text), text };
    const [mark] = await rows(deps.ch, 'alert_watermark');
    const sweptThrough = Number(mark?.swept_through ?? 0);
    return {
        cursor: {
            began: now,
            storedThrough: Number(mark?.stored_through ?? 0),
            sinceAge: Math.max(0, Math.floor((now - deps.rules.maxAgeMs) / 1000)),
            sinceNew: sweptThrough === 0 ? 0 : Math.max(0, sweptThrough - Math.ceil(deps.lateMs / 1000)),
            after: '',
        },
        text: '',
    };
}
/**
 * One sweep at `now` (ms): every loop with news, unfinished, gapped or
 * firing, a chunk of loops at a time in loop_id order, each chunk's
 * transitions made before the cursor moves past it; then the sub-agent
 * rates and the budgets, and the sweep is recorded. Stopped by the signal,
 * it returns `stopped` with its cursor kept: the next sweep goes on from
 * there (with the watermarks this one began with, so nothing stored
 * meanwhile is taken as seen). A chunk redone after a kill notifies nothing
 * twice: each state steps by compare-and-set.
 */
export async function alertSweep(deps, now) {
    const { ch, redis, prefix } = deps;
    await seed(deps, now);
    let notified = await finishPending(deps);
    let { cursor, text } = await currentCursor(deps, now);
    const candidates = (await rows(ch, 'alert_candidate_loops', { since_age: cursor.sinceAge, since_new: cursor.sinceNew })).map((r) => r.loop_id);
    const all = [...new Set([...candidates, ...firingLoops(await redis.hgetall(stateKey(prefix)))])].sort();
    const size = deps.chunkLoops ?? ALERT_CHUNK_LOOPS;
    let evaluated = 0;
    let todo = all.filter((l) => l > cursor.after);
    // A child reported Stuck by a parent in another chunk is still judged as such.
    const reported = todo.length > 0 ? await stuckChildren(ch, all) : new Set();
    while (todo.length > 0) {
        if (deps.signal?.aborted)
            return { evaluated, notified, stopped: true };
        const chunk = todo.slice(0, size);
        const held = await redis.hgetall(stateKey(prefix));
        notified += await apply(deps, held, await evaluate(ch, chunk, now, deps.rules, deps.lateMs, false, reported), now);
        evaluated += chunk.length;
        const next = { ...cursor, after: chunk[chunk.length - 1] };
        const nextText = JSON.stringify(next);
        if (await moveCursor(deps, text, nextText)) {
            cursor = next;
            text = nextText;
        }
        else {
            // Another sweep (a job handed on while this one ran) moved it: go on from where it is.
            const got = await currentCursor(deps, now);
            if (got.text === '')
                return { evaluated, notified };
            ({ cursor, text } = got);
        }
        todo = todo.filter((l) => l > cursor.after);
    }
    // The rules over every loop at once: the sub-agent rates and the budgets, and those gone quiet.
    const held = await redis.hgetall(stateKey(prefix));
    const conditions = [...(await evaluate(ch, [], now, deps.rules, deps.lateMs, true)), ...(await budgetConditions(deps, now))];
    notified += await apply(deps, held, [...conditions, ...gone(held, conditions, ['subagent_failure_rate', 'spend_budget'])], now);
    await prune(deps, held, now);
    // Recorded before the cursor goes: a kill between the two redoes the last step only.
    await ch.command({ query: renderSql(querySql('alert_sweep_done'), { seen_through: cursor.storedThrough, evaluated: all.length, transitions: notified }) });
    if (text !== '')
        await moveCursor(deps, text, '');
    return { evaluated, notified };
}
/**
 * One evaluation of the loops a flush touched (trigger.ts) at `now`: those
 * heard from within the max age (a backfill does not page) and those already
 * firing, and with `rates` the sub-agent rates. Records no sweep: what it
 * missed, the next sweep looks at.
 */
export async function alertEvaluate(deps, loops, rates, now, 
/** Told the loops a stop left unevaluated (the worker puts them back in the news). */
onLeft) {
    await seed(deps, now);
    let notified = await finishPending(deps);
    const size = deps.chunkLoops ?? ALERT_CHUNK_LOOPS;
    let evaluated = 0;
    // As in a sweep: a child reported Stuck by a parent in another chunk.
    const reported = loops.length > size ? await stuckChildren(deps.ch, loops) : new Set();
    // At least one pass, for the rates of a job without loops.
    for (let i = 0; i === 0 || i < loops.length; i += size) {
        if (deps.signal?.aborted) {
            await onLeft?.(loops.slice(i), rates);
            return { evaluated, notified, stopped: true };
        }
        const part = loops.slice(i, i + size);
        const last = i + size >= loops.length;
        const held = await deps.redis.hgetall(stateKey(deps.prefix));
        const firing = new Set(firingLoops(held));
        const recent = await heardSince(deps.ch, part.filter((l) => !firing.has(l)), now - deps.rules.maxAgeMs);
        const chosen = [...recent, ...part.filter((l) => firing.has(l))];
        // The rates once, with the last chunk.
        const withRates = rates && last;
        const conditions = await evaluate(deps.ch, chosen, now, deps.rules, deps.lateMs, withRates, reported);
        notified += await apply(deps, held, withRates ? [...conditions, ...gone(held, conditions, ['subagent_failure_rate'])] : conditions, now);
        evaluated += chosen.length;
    }
    return { evaluated, notified };
}
/** The loops whose alert is firing: looked at again whatever their age, so they can resolve. */
function firingLoops(held) {
    return Object.values(held)
        .map((text) => JSON.parse(text))
        .filter((s) => s.state === 'firing' && s.rule !== 'subagent_failure_rate' && s.rule !== 'spend_budget')
        .map((s) => s.subject);
}
/**
 * Steps each condition's state from `held` (steps 1 to 3 above, each for
 * every transition before the next); the number of notifications.
 */
async function apply(deps, held, conditions, now) {
    const { redis, prefix } = deps;
    const marks = [];
    for (const cond of conditions) {
        const f = field(cond.rule, cond.subject);
        const before = held[f] ?? '';
        const prev = before === '' ? undefined : withoutPending(JSON.parse(before));
        const s = step(prev, cond, now, deps.renotifyMs);
        if (s.next === undefined)
            continue;
        if (s.notify === undefined) {
            const text = JSON.stringify(s.next);
            // Expected now and then: ingest's evaluations run beside the sweeps, and the first to change a state wins.
            if (text !== before && !(await compareAndSet(redis, prefix, f, before, text)))
                deps.log.debug('alert state changed under this sweep; left to the next', { rule: cond.rule });
            continue;
        }
        const marked = JSON.stringify({ ...s.next, pending: s.notify });
        if (!(await compareAndSet(redis, prefix, f, before, marked))) {
            deps.log.debug('alert state changed under this sweep; left to the next', { rule: cond.rule });
            continue;
        }
        marks.push({ f, marked, state: s.next, kind: s.notify });
    }
    await recordAndQueue(deps, marks);
    for (const m of marks) {
        await compareAndSet(redis, prefix, m.f, m.marked, JSON.stringify(m.state));
        deps.onNotified?.(m.state.rule, m.kind);
    }
    return marks.length;
}
//# sourceMappingURL=sweep.js.map