/**
 * The alert states in Redis: one hash field per (rule, subject), holding its
 * state (state.ts) and, while transitions.ts records and queues it, the
 * notification marked pending. Changed only by compare-and-set, refilled
 * from the `alerts` table when Redis lost them (seed), and rid of the states
 * resolved long ago (prune).
 */
import type { Redis } from 'ioredis';
import { queryRows } from './queries.js';
import { RULE_IDS, type RuleId, type Severity } from './condition.js';
import type { AlertState, Notification } from './state.js';
import type { AlertSweepDeps } from './sweep-deps.js';

/** A stored state, with the notification that is recorded and queued but not yet confirmed. */
export interface Stored extends AlertState {
  readonly pending?: Notification;
}

const rows = queryRows;

export const stateKey = (prefix: string): string => `${prefix}:alerts:state`;
const seededKey = (prefix: string): string => `${prefix}:alerts:seeded`;
export const field = (rule: string, subject: string): string => JSON.stringify([rule, subject]);

/** Sets a hash field only if it still holds `expected` ('' for absent): the compare-and-set of step 1 (transitions.ts). */
const CAS = `
local current = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if current ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1`;

export async function compareAndSet(redis: Redis, prefix: string, f: string, expected: string, next: string): Promise<boolean> {
  return (await redis.eval(CAS, 1, stateKey(prefix), f, expected, next)) === 1;
}

/**
 * Refills Redis from the `alerts` table when it has lost the states (no
 * seeded mark): each (rule, subject)'s latest transition is its state.
 */
export async function seed(deps: AlertSweepDeps, now: number): Promise<void> {
  const { redis, prefix } = deps;
  if ((await redis.exists(seededKey(prefix))) === 1) return;
  const held = await rows<{
    rule: string;
    subject: string;
    state: string;
    severity: string;
    fired_at_ms: string;
    resolved_at_ms: string;
    last_notified_at_ms: string;
    notifications: string;
    detail: string;
  }>(deps.ch, 'alert_states');
  for (const r of held) {
    if (!(RULE_IDS as readonly string[]).includes(r.rule)) continue;
    // One resolved long ago is as good as none (see prune()).
    if (r.state !== 'firing' && now - Number(r.resolved_at_ms) > PRUNE_RESOLVED_AFTER_MS) continue;
    const state: AlertState = {
      rule: r.rule as RuleId,
      subject: r.subject,
      state: r.state === 'firing' ? 'firing' : 'resolved',
      severity: r.severity as Severity,
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
  if (held.length > 0) deps.log.info('alert states rebuilt from the alerts table', { states: held.length });
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
export async function prune(deps: AlertSweepDeps, held: Record<string, string>, now: number): Promise<number> {
  let n = 0;
  for (const [f, text] of Object.entries(held)) {
    const s = JSON.parse(text) as Stored;
    if (s.state !== 'resolved' || s.pending !== undefined || now - (s.resolvedAt ?? now) <= PRUNE_RESOLVED_AFTER_MS) continue;
    n += Number(await deps.redis.eval(CAD, 1, stateKey(deps.prefix), f, text));
  }
  return n;
}

export const withoutPending = ({ pending: _pending, ...state }: Stored): AlertState => state;

/** Alerts firing now per rule, as the states in Redis hold them (every rule listed, 0 when none). */
export async function firingByRule(redis: Redis, prefix: string): Promise<Map<RuleId, number>> {
  const counts = new Map<RuleId, number>(RULE_IDS.map((r) => [r, 0]));
  for (const text of await redis.hvals(stateKey(prefix))) {
    const s = JSON.parse(text) as Stored;
    if (s.state === 'firing' && counts.has(s.rule)) counts.set(s.rule, counts.get(s.rule)! + 1);
  }
  return counts;
}

/** The loops whose alert is firing: looked at again whatever their age, so they can resolve. */
export function firingLoops(held: Record<string, string>): string[] {
  return Object.values(held)
    .map((text) => JSON.parse(text) as Stored)
    .filter((s) => s.state === 'firing' && s.rule !== 'subagent_failure_rate' && s.rule !== 'spend_budget')
    .map((s) => s.subject);
}
