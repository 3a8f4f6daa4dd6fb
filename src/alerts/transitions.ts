/**
 * How a sweep's transitions are made (sweep.ts), so that each notification
 * is recorded in the `alerts` table and queued for delivery (delivery.ts)
 * once, however the sweep dies and whichever worker runs it:
 * 1. the new state is written to Redis with the notification marked pending
 *    (compare-and-set against the state it was stepped from: a zombie sweep
 *    that read an older state writes nothing);
 * 2. the transition row is inserted (its key collapses a repeat) and the
 *    delivery job added (its id is the key: a repeat is a no-op);
 * 3. the mark is cleared.
 * A sweep that died between 1 and 3 leaves the mark: the next sweep redoes 2
 * with the stored state, whose key is the same.
 */
import { querySql } from './queries.js';
import { renderSql } from '../clickhouse/sql.js';
import type { AlertCondition } from './condition.js';
import { enqueueNotices } from './delivery.js';
import { notificationKey, step, type AlertState, type Notification } from './state.js';
import { compareAndSet, field, stateKey, withoutPending, type Stored } from './state-store.js';
import type { AlertSweepDeps } from './sweep-deps.js';
import { noticeOf } from './webhook.js';

/** A transition marked pending in Redis (step 1), to be recorded and queued (step 2). */
interface Transition {
  readonly state: AlertState;
  readonly kind: Notification;
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
async function recordAndQueue(deps: AlertSweepDeps, transitions: readonly Transition[]): Promise<void> {
  if (transitions.length === 0) return;
  const [head, tuple] = querySql('alert_record').split(/\bVALUES\b/);
  if (head === undefined || tuple === undefined) throw new Error('alert_record.sql is one INSERT … VALUES (…)');
  for (let i = 0; i < transitions.length; i += RECORD_ROWS) {
    const values = transitions.slice(i, i + RECORD_ROWS).map(({ state, kind }) =>
      renderSql(tuple, {
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
      }).trim(),
    );
    await deps.ch.command({ query: `${head.trim()} VALUES ${values.join(', ')}` });
  }
  await enqueueNotices(
    deps.deliveries,
    transitions.map(({ state, kind }) => noticeOf(state, kind)),
  );
}

/** Finishes what a dead sweep left marked pending. */
export async function finishPending(deps: AlertSweepDeps): Promise<number> {
  const all = await deps.redis.hgetall(stateKey(deps.prefix));
  const marked: { f: string; text: string; stored: Stored; pending: Notification }[] = [];
  for (const [f, text] of Object.entries(all)) {
    const stored = JSON.parse(text) as Stored;
    if (stored.pending !== undefined) marked.push({ f, text, stored, pending: stored.pending });
  }
  await recordAndQueue(
    deps,
    marked.map((m) => ({ state: withoutPending(m.stored), kind: m.pending })),
  );
  let n = 0;
  for (const m of marked) if (await compareAndSet(deps.redis, deps.prefix, m.f, m.text, JSON.stringify(withoutPending(m.stored)))) n++;
  return n;
}

/**
 * Steps each condition's state from `held` (steps 1 to 3 above, each for
 * every transition before the next); the number of notifications.
 */
export async function apply(deps: AlertSweepDeps, held: Record<string, string>, conditions: readonly AlertCondition[], now: number): Promise<number> {
  const { redis, prefix } = deps;
  const marks: (Transition & { f: string; marked: string })[] = [];
  for (const cond of conditions) {
    const f = field(cond.rule, cond.subject);
    const before = held[f] ?? '';
    const prev = before === '' ? undefined : withoutPending(JSON.parse(before) as Stored);
    const s = step(prev, cond, now, deps.renotifyMs);
    if (s.next === undefined) continue;
    if (s.notify === undefined) {
      const text = JSON.stringify(s.next);
      // Expected now and then: ingest's evaluations run beside the sweeps, and the first to change a state wins.
      if (text !== before && !(await compareAndSet(redis, prefix, f, before, text))) deps.log.debug('alert state changed under this sweep; left to the next', { rule: cond.rule });
      continue;
    }
    const marked = JSON.stringify({ ...s.next, pending: s.notify } satisfies Stored);
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
