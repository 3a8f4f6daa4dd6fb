/**
 * The alert state machine per (rule, subject), issue 11: ok -> firing ->
 * resolved (-> firing again), a notification on each edge and a reminder
 * every `renotifyMs` while firing, nothing in between. Pure: the processor
 * loads the previous state, steps it with the rule's condition and stores
 * the result; where the state lives and how two workers agree on it is the
 * edge's business.
 */
import { createHash } from 'node:crypto';
import type { AlertCondition, RuleId, Severity } from './condition.js';

export type Notification = 'fired' | 'renotified' | 'resolved';

export interface AlertState {
  readonly rule: RuleId;
  readonly subject: string;
  readonly state: 'firing' | 'resolved';
  /** Of the latest firing condition (a resolve keeps it, for the record). */
  readonly severity: Severity;
  /** When the current (or last) episode started. */
  readonly firedAt: number;
  readonly resolvedAt?: number;
  /** When the latest notification of this episode was due: its fire, last reminder or resolve. */
  readonly lastNotifiedAt: number;
  /** Notifications of this episode so far, its fire and resolve included. */
  readonly notifications: number;
  /** Of the latest condition: why it fires, or why it resolved. */
  readonly detail: string;
}

export interface Step {
  /** The state to store; undefined only while a subject has never fired. */
  readonly next: AlertState | undefined;
  readonly notify?: Notification;
}

/**
 * One condition applied to a subject's previous state at `now`:
 * - nothing or resolved, firing: a new episode, notify `fired`;
 * - firing, firing: detail and severity follow the condition silently, and a
 *   reminder `renotified` is due once `now - lastNotifiedAt >= renotifyMs`;
 * - firing, not firing: resolved, notify `resolved`;
 * - nothing or resolved, not firing: unchanged.
 * A condition of another (rule, subject) than `prev` is a caller's bug and throws.
 */
export function step(prev: AlertState | undefined, cond: AlertCondition, now: number, renotifyMs: number): Step {
  if (prev !== undefined && (prev.rule !== cond.rule || prev.subject !== cond.subject)) {
    throw new Error(`alert state of ${prev.rule} ${JSON.stringify(prev.subject)} stepped with a condition of ${cond.rule} ${JSON.stringify(cond.subject)}`);
  }
  if (prev === undefined || prev.state === 'resolved') {
    if (!cond.firing) return { next: prev };
    const next: AlertState = {
      rule: cond.rule,
      subject: cond.subject,
      state: 'firing',
      severity: cond.severity,
      firedAt: now,
      lastNotifiedAt: now,
      notifications: 1,
      detail: cond.detail,
    };
    return { next, notify: 'fired' };
  }
  if (!cond.firing) {
    const next: AlertState = { ...prev, state: 'resolved', resolvedAt: now, lastNotifiedAt: now, notifications: prev.notifications + 1, detail: cond.detail };
    return { next, notify: 'resolved' };
  }
  const updated: AlertState = { ...prev, severity: cond.severity, detail: cond.detail };
  if (now - prev.lastNotifiedAt < renotifyMs) return { next: updated };
  return { next: { ...updated, lastNotifiedAt: now, notifications: prev.notifications + 1 }, notify: 'renotified' };
}

/** Separates these keys from any other SHA-256 over the same parts. */
const KEY_DOMAIN = 'agentledger/alert-transition/v1';

/**
 * A deterministic id of one transition, for BullMQ job ids and webhook
 * idempotency keys: 64 hex digits of SHA-256 over the parts, each prefixed
 * with its length, so `('a:b', 'c')` and `('a', 'b:c')` differ whatever a
 * subject contains. Parts are hashed as UTF-16 code units, not UTF-8, which
 * would turn every lone surrogate into the same U+FFFD. Hex holds no `:`,
 * which BullMQ refuses in custom job ids.
 */
export function transitionKey(rule: RuleId, subject: string, kind: Notification, at: number): string {
  const hash = createHash('sha256');
  for (const part of [KEY_DOMAIN, rule, subject, kind, String(at)]) {
    const bytes = Buffer.from(part, 'utf16le');
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    hash.update(length).update(bytes);
  }
  return hash.digest('hex');
}

/**
 * The key of the notification a step just produced: every notification sets
 * `lastNotifiedAt` to its own time, so that is the transition's `at`.
 */
export function notificationKey(state: AlertState, kind: Notification): string {
  return transitionKey(state.rule, state.subject, kind, state.lastNotifiedAt);
}
