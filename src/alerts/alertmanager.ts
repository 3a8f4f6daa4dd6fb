/**
 * agentledger's alerts as Prometheus's Alertmanager takes them (its v2 API,
 * `POST /api/v2/alerts`), and when to try an Alertmanager again: pure, so
 * the label mapping and the backoff are tested without a network. The
 * pusher (alertmanager-push.ts) reads the states, posts and keeps the time.
 *
 * Alertmanager identifies an alert by its label set: the labels here are
 * made from the rule, the subject and the severity only, so every worker,
 * every sweep and every Alertmanager of an HA pair see the same alert, and
 * two workers pushing it make one alert, not two.
 */
import type { RuleId, Severity } from './condition.js';
import type { AlertState } from './state.js';

/** One alert of the v2 API's `postableAlerts`. */
export interface AmAlert {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly startsAt: string;
  readonly endsAt: string;
  readonly generatorURL?: string;
}

/** The rules whose subject is a loop id. */
const LOOP_RULES: readonly RuleId[] = ['stuck_loop', 'convergence', 'stalled_loop', 'waiting_on_human', 'chain_integrity'];

/**
 * The extra labels a subject names (docs/alerts.md "Alertmanager"):
 * `root:<id>` a root loop, `name:<name>` a loop name, `runtime:<definition>`
 * and `craze:<type>` a sub-agent's definition. No rule's subject is a model
 * today, so `model` is never set.
 */
function subjectLabels(rule: RuleId, subject: string): Record<string, string> {
  const colon = subject.indexOf(':');
  if (LOOP_RULES.includes(rule) || colon < 0) return {};
  const [kind, value] = [subject.slice(0, colon), subject.slice(colon + 1)];
  if (rule === 'spend_budget' && kind === 'root') return { root: value };
  if (rule === 'spend_budget' && kind === 'name') return { loop_name: value };
  if (rule === 'subagent_failure_rate' && (kind === 'runtime' || kind === 'craze')) return { definition: value };
  return {};
}

/**
 * The label set of a (rule, subject) at a severity. The subject is a label
 * value as it is, byte for byte (any valid Unicode is a valid label value).
 * Alertmanager drops a label whose value is empty, so an empty subject is
 * an alert without `subject`.
 */
export function amLabels(rule: RuleId, subject: string, severity: Severity): Record<string, string> {
  return { alertname: rule, severity, subject, ...subjectLabels(rule, subject) };
}

/**
 * How far ahead a firing alert's `endsAt` is put: as Prometheus does, four
 * resend intervals of at least a minute. Re-sent every sweep, a firing alert
 * never reaches it; if every worker is gone, Alertmanager resolves it then
 * rather than keep it forever.
 */
export function firingHorizonMs(resendMs: number): number {
  return 4 * Math.max(resendMs, 60_000);
}

/**
 * Where the page shows the subject, under its public address `pageUrl`: a
 * loop's rule the loop (`/api/loops?id-prefix=<loop>`), the others their
 * rule's alerts (`/api/alerts?rule=<rule>`, the subject among them).
 */
export function subjectUrl(pageUrl: string, rule: RuleId, subject: string): string {
  const base = pageUrl.replace(/\/+$/, '');
  const query = LOOP_RULES.includes(rule) ? `loops?id-prefix=${encodeURIComponent(subject)}` : `alerts?rule=${encodeURIComponent(rule)}`;
  return `${base}/api/${query}`;
}

export interface AmOptions {
  /** The page's public address (AGENTLEDGER_SERVE_PUBLIC_URL); undefined: no generatorURL. */
  readonly pageUrl?: string;
  /** How often the alerts are re-sent (the sweep interval). */
  readonly resendMs: number;
}

/**
 * A state as Alertmanager takes it at `now`: `startsAt` when it fired,
 * `endsAt` when it resolved (a firing one: firingHorizonMs ahead), the
 * detail as the `description` annotation, the page's link as `generatorURL`.
 */
export function amAlertOf(state: AlertState, now: number, options: AmOptions): AmAlert {
  const ends = state.state === 'resolved' ? (state.resolvedAt ?? now) : now + firingHorizonMs(options.resendMs);
  const link = options.pageUrl === undefined ? undefined : subjectUrl(options.pageUrl, state.rule, state.subject);
  return {
    labels: amLabels(state.rule, state.subject, state.severity),
    annotations: { summary: `${state.rule}: ${state.subject}`, description: state.detail },
    startsAt: new Date(state.firedAt).toISOString(),
    endsAt: new Date(ends).toISOString(),
    ...(link === undefined ? {} : { generatorURL: link }),
  };
}

/**
 * One Alertmanager's standing with the pusher: how many pushes in a row
 * failed, and when the next may be tried. A machine of three events: a push
 * taken (fresh again), failed (wait longer), and the question "due at now?".
 */
export interface Target {
  readonly failures: number;
  readonly retryAt: number;
}

export const FRESH: Target = { failures: 0, retryAt: 0 };

/** First wait after a failure; doubled per failure in a row. */
export const BACKOFF_FIRST_MS = 500;

/**
 * After a failed push at `now`: wait BACKOFF_FIRST_MS doubled per failure in
 * a row, never longer than `maxMs` (the resend interval), so an Alertmanager
 * back from an outage is tried again within one sweep.
 */
export function afterFailure(t: Target, now: number, maxMs: number): Target {
  const failures = t.failures + 1;
  const wait = Math.min(BACKOFF_FIRST_MS * 2 ** Math.min(failures - 1, 30), maxMs);
  return { failures, retryAt: now + wait };
}

/** After a push taken: no wait. */
export function afterSuccess(): Target {
  return FRESH;
}

/** Whether a push may be tried at `now`. */
export function isDue(t: Target, now: number): boolean {
  return now >= t.retryAt;
}
