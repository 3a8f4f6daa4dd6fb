/**
 * One alert sweep (issue 11): the loops with news since the last sweep, the
 * unfinished and the gapped are evaluated (evaluate.ts), each condition steps
 * its (rule, subject)'s state (state.ts), and each notification is recorded
 * in the `alerts` table and queued for delivery (delivery.ts) — once, however
 * the sweep dies and whichever worker runs it, by the three steps of
 * transitions.ts on the states state-store.ts keeps in Redis, a chunk of
 * loops at a time from where the cursor (cursor.ts) says the sweep is. Redis
 * that lost its data is refilled from the `alerts` table before anything is
 * stepped, so what was notified is not notified again.
 */
import { queryRows, querySql } from './queries.js';
import { renderSql } from '../clickhouse/sql.js';
import { budgetSpend, budgetsAt } from './budgets.js';
import type { AlertCondition, RuleId } from './condition.js';
import { currentCursor, moveCursor, type SweepCursor } from './cursor.js';
import { evaluate, heardSince, stuckChildren } from './evaluate.js';
import { spendBudget } from './rules.js';
import { field, firingLoops, prune, seed, stateKey, type Stored } from './state-store.js';
import type { AlertSweepDeps } from './sweep-deps.js';
import { apply, finishPending } from './transitions.js';

export interface AlertSweepResult {
  readonly evaluated: number;
  readonly notified: number;
  /**
   * Stopped by the signal before its end: a sweep's cursor (or an
   * evaluation's loops left, put back in the news) waits for the next job.
   */
  readonly stopped?: boolean;
}

/**
 * Loops evaluated per chunk: a chunk's reads, conditions and transitions
 * take about a second on 18.16, so a stop waits for one chunk at most, and
 * a sweep over a backlog of 100,000 loops moves its cursor 50 times.
 */
export const ALERT_CHUNK_LOOPS = 2000;

const rows = queryRows;

/**
 * Conditions resolving the firing alerts of these rules whose subject the
 * evaluation no longer reports: a sub-agent kind without an outcome in the
 * window, a day that is over, a budget taken out of the file. (The rules only
 * see the subjects with rows or budgets.)
 */
function gone(held: Record<string, string>, conditions: readonly AlertCondition[], rules: readonly RuleId[]): AlertCondition[] {
  const seen = new Set(conditions.map((c) => field(c.rule, c.subject)));
  const quiet: AlertCondition[] = [];
  for (const [f, text] of Object.entries(held)) {
    const s = JSON.parse(text) as Stored;
    if (rules.includes(s.rule) && s.state === 'firing' && !seen.has(f)) {
      quiet.push({ rule: s.rule, subject: s.subject, firing: false, severity: 'info', detail: s.rule === 'spend_budget' ? 'no longer budgeted (a day over, or the budget removed)' : 'no outcome in the window' });
    }
  }
  return quiet;
}

/** The `spend_budget` conditions at `now`: each budget in force against its spend so far. */
async function budgetConditions(deps: AlertSweepDeps, now: number): Promise<AlertCondition[]> {
  if (deps.budgets === undefined) return [];
  const inForce = budgetsAt(deps.budgets, now);
  return inForce.length === 0 ? [] : spendBudget(inForce, await budgetSpend(deps.ch, inForce, now));
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
export async function alertSweep(deps: AlertSweepDeps, now: number): Promise<AlertSweepResult> {
  const { ch, redis, prefix } = deps;
  await seed(deps, now);
  let notified = await finishPending(deps);
  let { cursor, text } = await currentCursor(deps, now);
  const candidates = (await rows<{ loop_id: string }>(ch, 'alert_candidate_loops', { since_age: cursor.sinceAge, since_new: cursor.sinceNew })).map((r) => r.loop_id);
  const all = [...new Set([...candidates, ...firingLoops(await redis.hgetall(stateKey(prefix)))])].sort();
  const size = deps.chunkLoops ?? ALERT_CHUNK_LOOPS;
  let evaluated = 0;
  let todo = all.filter((l) => l > cursor.after);
  // A child reported Stuck by a parent in another chunk is still judged as such.
  const reported = todo.length > 0 ? await stuckChildren(ch, all) : new Set<string>();
  while (todo.length > 0) {
    if (deps.signal?.aborted) return { evaluated, notified, stopped: true };
    const chunk = todo.slice(0, size);
    const held = await redis.hgetall(stateKey(prefix));
    notified += await apply(deps, held, await evaluate(ch, chunk, now, deps.rules, deps.lateMs, false, reported), now);
    evaluated += chunk.length;
    const next: SweepCursor = { ...cursor, after: chunk[chunk.length - 1]! };
    const nextText = JSON.stringify(next);
    if (await moveCursor(deps, text, nextText)) {
      cursor = next;
      text = nextText;
    } else {
      // Another sweep (a job handed on while this one ran) moved it: go on from where it is.
      const got = await currentCursor(deps, now);
      if (got.text === '') return { evaluated, notified };
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
  if (text !== '') await moveCursor(deps, text, '');
  return { evaluated, notified };
}

/**
 * One evaluation of the loops a flush touched (trigger.ts) at `now`: those
 * heard from within the max age (a backfill does not page) and those already
 * firing, and with `rates` the sub-agent rates. Records no sweep: what it
 * missed, the next sweep looks at.
 */
export async function alertEvaluate(
  deps: AlertSweepDeps,
  loops: readonly string[],
  rates: boolean,
  now: number,
  /** Told the loops a stop left unevaluated (the worker puts them back in the news). */
  onLeft?: (loops: readonly string[], rates: boolean) => Promise<void>,
): Promise<AlertSweepResult> {
  await seed(deps, now);
  let notified = await finishPending(deps);
  const size = deps.chunkLoops ?? ALERT_CHUNK_LOOPS;
  let evaluated = 0;
  // As in a sweep: a child reported Stuck by a parent in another chunk.
  const reported = loops.length > size ? await stuckChildren(deps.ch, loops) : new Set<string>();
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
