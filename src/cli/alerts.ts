import type { ClickHouseClient } from '@clickhouse/client';
import { Queue } from 'bullmq';
import { failedDeliveries, type FailedDelivery } from '../alerts/delivery.js';
import { RULE_IDS } from '../alerts/condition.js';
import { redactUrl, type Config } from '../config/index.js';
import { ALERT_DELIVERIES_QUEUE } from '../jobs/queues.js';
import { createRedis, probeRedis } from '../jobs/redis.js';
import { createClickHouse } from '../clickhouse/client.js';
import { querySql } from '../alerts/queries.js';
import { renderSql } from '../clickhouse/sql.js';
import type { Command } from './command.js';
import { parseOptions, UsageError, wholeNumberOption } from './command.js';
import { printable } from './terminal.js';
import { failureMessage } from '../errors/errors.js';

/** One (rule, subject) as `alerts --json` prints it (the command's documented output). */
export interface AlertSummary {
  rule: string;
  subject: string;
  state: string;
  severity: string;
  /** ISO 8601, UTC: when the current (or last) episode started. */
  firedAt: string;
  /** ISO 8601, UTC; null while firing. */
  resolvedAt: string | null;
  /** ISO 8601, UTC: the latest transition (fire, reminder or resolve). */
  lastNotifiedAt: string;
  /** Notifications of this episode, its fire and resolve included. */
  notifications: number;
  /** Transitions ever recorded for this (rule, subject), every episode. */
  transitions: number;
  detail: string;
  /** Deliveries of this (rule, subject) in the failed set; null when Redis did not answer. */
  failedDeliveries: number | null;
}

/** A row of queries/alerts_list.sql. */
export interface AlertRow {
  rule: string;
  subject: string;
  state: string;
  severity: string;
  fired_at_text: string;
  resolved_at_text: string;
  last_notified_at_text: string;
  notification_count: number | string;
  transition_count: number | string;
  detail: string;
}

export interface AlertFilter {
  /** '' for both states. */
  readonly state: 'firing' | 'resolved' | '';
  /** '' for every rule. */
  readonly rule: string;
  readonly limit: number;
}

export async function readAlerts(ch: ClickHouseClient, filter: AlertFilter): Promise<AlertRow[]> {
  const query = renderSql(querySql('alerts_list'), { state: filter.state, rule: filter.rule, limit: BigInt(filter.limit) });
  return ch.query({ query, format: 'JSONEachRow' }).then((r) => r.json<AlertRow>());
}

/** Failed deliveries grouped by (rule, subject). */
export type FailuresByAlert = ReadonlyMap<string, readonly FailedDelivery[]>;

const alertKey = (rule: string, subject: string): string => JSON.stringify([rule, subject]);

export function groupFailures(failed: readonly FailedDelivery[]): FailuresByAlert {
  const groups = new Map<string, FailedDelivery[]>();
  for (const f of failed) {
    const key = alertKey(f.notice.rule, f.notice.subject);
    const group = groups.get(key);
    if (group) group.push(f);
    else groups.set(key, [f]);
  }
  return groups;
}

const iso = (ms: string): string => new Date(Number(ms)).toISOString();

/** The JSON object of one row; `failures` undefined: Redis did not answer, so the count is unknown (null), not 0. */
export function summarizeAlert(row: AlertRow, failures: FailuresByAlert | undefined): AlertSummary {
  return {
    rule: row.rule,
    subject: row.subject,
    state: row.state,
    severity: row.severity,
    firedAt: iso(row.fired_at_text),
    // The table stores 0 while firing.
    resolvedAt: row.resolved_at_text === '0' ? null : iso(row.resolved_at_text),
    lastNotifiedAt: iso(row.last_notified_at_text),
    notifications: Number(row.notification_count),
    transitions: Number(row.transition_count),
    detail: row.detail,
    failedDeliveries: failures === undefined ? null : (failures.get(alertKey(row.rule, row.subject))?.length ?? 0),
  };
}

/** Longest wait for the failed set once Redis answered the probe: a listing should not hang on a Redis that stalls. */
const FAILED_READ_MS = 5000;

/**
 * Every delivery in the failed set, or undefined after one warning line on
 * stderr when Redis does not answer: the alerts themselves are in ClickHouse
 * and are listed anyway. probeRedis first, because BullMQ's client waits for
 * Redis forever; the read after it is bounded too, and reads only (no queue
 * meta is written).
 */
async function readFailures(config: Config): Promise<FailedDelivery[] | undefined> {
  const warn = (why: string): undefined => void process.stderr.write(`agentledger alerts: failed deliveries not counted: ${why}\n`);
  try {
    await probeRedis(config.redis.url);
  } catch (err) {
    return warn(failureMessage(err));
  }
  const redis = createRedis(config.redis.url);
  redis.on('error', () => undefined); // the read below fails or times out, and says so
  const queue = new Queue(ALERT_DELIVERIES_QUEUE, { connection: redis, prefix: config.redis.queuePrefix, skipMetasUpdate: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), FAILED_READ_MS)));
  try {
    const read = queue.getFailedCount().then((n) => (n === 0 ? [] : failedDeliveries(queue, n)));
    const failed = await Promise.race([read, timeout]);
    return failed === 'timeout' ? warn(`Redis at ${redactUrl(config.redis.url)} did not list them within ${FAILED_READ_MS / 1000} s`) : failed;
  } catch (err) {
    return warn(failureMessage(err));
  } finally {
    clearTimeout(timer);
    // Disconnected first: a close waiting on a stalled Redis would hang the command.
    redis.disconnect();
    await queue.close().catch(() => undefined);
  }
}

const STATES = ['firing', 'resolved', 'all'] as const;

function stateOption(text: string | undefined): AlertFilter['state'] {
  if (text === undefined) return 'firing';
  if (!(STATES as readonly string[]).includes(text)) throw new UsageError(`--state expects ${STATES.join(', ')}, got ${JSON.stringify(text)}`);
  return text === 'all' ? '' : (text as 'firing' | 'resolved');
}

function ruleOption(text: string | undefined): string {
  if (text === undefined) return '';
  if (!(RULE_IDS as readonly string[]).includes(text)) throw new UsageError(`--rule expects one of ${RULE_IDS.join(', ')}, got ${JSON.stringify(text)}`);
  return text;
}

/** `2026-12-01 06:00:00`: whole seconds, UTC, as the other commands show times. */
const shownTime = (isoText: string): string => `${isoText.slice(0, 10)} ${isoText.slice(11, 19)}`;

const DETAIL_SHOWN = 60;

/** The first DETAIL_SHOWN code points of a detail (the whole one is in --json), escaped for the terminal. */
function shownDetail(detail: string): string {
  const points = [...detail];
  return printable(points.length > DETAIL_SHOWN ? `${points.slice(0, DETAIL_SHOWN - 1).join('')}…` : detail);
}

/** The text listing: one line per alert, then one per failed delivery of the alerts listed. */
export function alertLines(alerts: readonly AlertSummary[], failures: FailuresByAlert | undefined): string[] {
  if (alerts.length === 0) return ['(no alerts)'];
  const lines = ['state     severity  rule                    subject                                   since                notified  detail'];
  for (const a of alerts) {
    const since = shownTime(a.resolvedAt ?? a.firedAt);
    lines.push(
      `${printable(a.state).padEnd(9)} ${printable(a.severity).padEnd(9)} ${printable(a.rule).padEnd(23)} ${printable(a.subject).padEnd(41)} ${since}  ${String(a.notifications).padStart(8)}  ${shownDetail(a.detail)}`,
    );
  }
  for (const a of alerts) {
    for (const f of failures?.get(alertKey(a.rule, a.subject)) ?? []) {
      lines.push(`failed delivery: ${printable(a.rule)} ${printable(a.subject)} ${f.notice.notification} after ${f.attempts} attempt(s): ${printable(f.reason)}`);
    }
  }
  return lines;
}

export const alertsCommand: Command = {
  name: 'alerts',
  summary: 'list alerts (firing by default) and their failed webhook deliveries',
  help: `Usage: agentledger alerts [--json] [--state firing|resolved|all] [--rule R] [--limit N]

Lists each (rule, subject)'s alert as it stands now (docs/alerts.md "Alerts"; view
alerts_current): firing first, then the most recently notified. Each line
shows the state, severity, rule, subject, since when it fires (or when it
resolved), the notifications of this episode and the start of the detail.
Then one line per delivery of those alerts that ran out of attempts (the
BullMQ failed set of the alert-deliveries queue), with its reason. When
Redis does not answer, one warning on stderr, and the alerts are listed
without their failed deliveries.

  --state S   firing (default), resolved or all
  --rule R    only rule R: ${RULE_IDS.join(', ')}
  --limit N   at most N alerts, from 1 (default 100)
  --json      an array of objects with rule, subject, state, severity, firedAt,
              resolvedAt (null while firing), lastNotifiedAt (ISO 8601, UTC),
              notifications, transitions, detail (whole), failedDeliveries
              (a count; null when Redis did not answer)`,
  async run(args, { config, out }) {
    const { values } = parseOptions(args, { json: { type: 'boolean' }, state: { type: 'string' }, rule: { type: 'string' }, limit: { type: 'string' } });
    const filter: AlertFilter = {
      state: stateOption(values.state),
      rule: ruleOption(values.rule),
      limit: values.limit === undefined ? 100 : wholeNumberOption('limit', values.limit, 1),
    };
    const ch = createClickHouse(config.clickhouse);
    let rows: AlertRow[];
    try {
      rows = await readAlerts(ch, filter);
    } finally {
      await ch.close();
    }
    const failed = await readFailures(config);
    const failures = failed === undefined ? undefined : groupFailures(failed);
    const alerts = rows.map((row) => summarizeAlert(row, failures));
    if (values.json) out(JSON.stringify(alerts));
    else for (const line of alertLines(alerts, failures)) out(line);
    return 0;
  },
};
