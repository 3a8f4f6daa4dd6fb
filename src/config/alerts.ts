/** Alerts: the worker's sweeps, ingest's evaluations, the rules' thresholds, the webhook (docs/alerts.md "Alerts"). */
import { z } from 'zod';
import { flag, httpUrlLike, positiveInt, secret, service, setting, type EnvOf } from './setting.js';

/** Upper bound of the alert durations: a month covers any sensible wait or window, and keeps `now - ms` far from the Unix epoch. */
const ALERT_MAX_MS = 31 * 86_400_000;
/** Upper bound of the alert counts (warnings, outcomes). */
const ALERT_MAX_COUNT = 1_000_000;

/**
 * A fraction from 0 to 1 as decimal text (`0.25`, `1`, `.5`). Not z.coerce:
 * Number() would also take `1e-1`, `0x0`, ` 0.5` and `Infinity`, none of which
 * anyone means as a failure rate.
 */
const fraction = z
  .string()
  .regex(/^(\d+(\.\d*)?|\.\d+)$/, 'expected a decimal number from 0 to 1, such as 0.25')
  .transform(Number)
  .refine((n) => n <= 1, 'expected a decimal number from 0 to 1, such as 0.25');

/** One or more http(s) URLs, comma-separated (every Alertmanager of an HA pair). */
const urlList = z
  .string()
  .transform((s) => s.split(',').map((u) => u.trim()).filter((u) => u.length > 0))
  .refine((list) => list.length > 0 && list.every((u) => httpUrlLike('').safeParse(u).success), {
    message: 'expected one or more http(s) URLs, comma-separated, such as http://am-1:9093,http://am-2:9093',
  });

const duration = (doc: string, fallback: number, max = ALERT_MAX_MS) => setting(positiveInt(max).default(fallback), `${doc} At most ${max}.`);
const count = (doc: string, fallback: number) => setting(positiveInt(ALERT_MAX_COUNT).default(fallback), `${doc} At most ${ALERT_MAX_COUNT}.`);

const vars = {
  AGENTLEDGER_ALERT_SWEEP_MS: duration('How often `agentledger worker` evaluates the alert rules, in ms.', 30_000, 86_400_000),
  AGENTLEDGER_ALERT_CHUNK_LOOPS: setting(
    positiveInt(100_000).default(2000),
    `Loops an alert sweep or evaluation looks at per chunk: a stop waits for one
     chunk at most, and a sweep stopped or killed goes on from its last chunk in
     the next job. At most 100000.`,
  ),
  AGENTLEDGER_ALERT_EVALUATE_ON_INGEST: setting(
    flag.default(true),
    `\`agentledger ingest\` adds the loops each flush touched to the alert news in
     Redis and asks for an evaluation of them (at most once per
     \`AGENTLEDGER_ALERT_EVALUATE_GAP_MS\`, one job waiting at most): a Stuck
     finish, a broken chain or a failing sub-agent is alerted within seconds, not
     at the next sweep. \`false\`: the sweeps alone.`,
  ),
  AGENTLEDGER_ALERT_EVALUATE_GAP_MS: duration(
    `Least time between two evaluations \`ingest\` asks for, in ms: the loops of the
     flushes in between are evaluated together (fewer, larger evaluations cost the
     database less).`,
    5000,
    600_000,
  ),
  AGENTLEDGER_ALERT_RENOTIFY_MS: duration('How long a firing alert stays quiet before it is notified again (`renotified`), in ms.', 3_600_000),
  AGENTLEDGER_ALERT_WINDOW_MS: duration('Rolling window of the `convergence` and `subagent_failure_rate` rules (both ends included), in ms.', 3_600_000),
  AGENTLEDGER_ALERT_CONVERGENCE_MIN_WARNINGS: count('`convergence` fires at this many convergence warnings of a loop inside the window.', 3),
  AGENTLEDGER_ALERT_CONVERGENCE_COUNT: count('`convergence` also fires when one warning inside the window reports this count or more.', 5),
  AGENTLEDGER_ALERT_STALLED_AFTER_MS: duration(
    '`stalled_loop` fires for a started, unfinished loop without an envelope (or interrupted, not resumed) this long, in ms.',
    900_000,
  ),
  AGENTLEDGER_ALERT_MAX_AGE_MS: duration(
    `\`stalled_loop\` ignores loops quiet for longer than this, in ms, so a backfill
     of old loops does not page. Must be above \`AGENTLEDGER_ALERT_STALLED_AFTER_MS\`.`,
    86_400_000,
    12 * ALERT_MAX_MS,
  ),
  AGENTLEDGER_ALERT_HUMAN_WAIT_MS: duration('`waiting_on_human` fires once a `HumanRequested` has gone unanswered this long, in ms.', 1_800_000),
  AGENTLEDGER_ALERT_SUBAGENT_FAILURE_RATE: setting(
    fraction.default(0.25),
    `\`subagent_failure_rate\` fires at or above this fraction of failed sub-agents
     of one kind: a decimal from 0 to 1 (\`0.25\`, not \`25%\` or \`2.5e-1\`).`,
  ),
  AGENTLEDGER_ALERT_SUBAGENT_MIN_OUTCOMES: count('`subagent_failure_rate` needs at least this many outcomes of a kind inside the window.', 20),
  AGENTLEDGER_ALERT_GAP_GRACE_MS: duration('`chain_integrity` fires for a gap still unfilled this long after it was stored, in ms (a violation fires at once).', 300_000),
  AGENTLEDGER_ALERT_WEBHOOK_URL: setting(
    httpUrlLike('https://hooks.example.com/agentledger').optional(),
    `\`http(s)://\` URL each notification is POSTed to (JSON with a Slack-compatible
     \`text\`). Printed as its scheme, host and port only
     (\`https://hooks.slack.com/***\`): a webhook's path often is its token, and it
     may carry a password.`,
    { show: 'origin', unset: 'transitions are recorded and listed by `agentledger alerts`, not sent' },
  ),
  AGENTLEDGER_ALERT_WEBHOOK_SECRET: secret(
    z.string().optional(),
    `Shared secret signing every notification: \`X-Agentledger-Signature:
     sha256=<HMAC-SHA256 of the body>\`; only with \`AGENTLEDGER_ALERT_WEBHOOK_URL\`.
     Never printed.`,
    { unset: 'unsigned' },
  ),
  AGENTLEDGER_ALERT_WEBHOOK_TIMEOUT_MS: duration('Longest one webhook POST may take before the attempt counts as failed, in ms.', 10_000, 600_000),
  AGENTLEDGER_ALERTMANAGER_URL: setting(
    urlList.optional(),
    `Prometheus Alertmanager(s) \`agentledger worker\` posts the alerts to (v2 API),
     beside the webhook: one or more base URLs, comma-separated, such as
     \`http://127.0.0.1:9193\` (every Alertmanager of an HA pair, as Prometheus
     sends to each). Firing alerts are re-sent every sweep, resolved ones until
     taken (docs/alerts.md "Alertmanager").`,
    { show: 'url', unset: 'no Alertmanager' },
  ),
  AGENTLEDGER_ALERTMANAGER_TIMEOUT_MS: duration('Longest one push to an Alertmanager may take before it counts as failed (and is retried with backoff), in ms.', 10_000, 600_000),
  AGENTLEDGER_ALERT_BUDGETS_FILE: setting(
    z.string().optional(),
    `The \`spend_budget\` rule's budgets: a JSON file of USD limits per UTC day, root
     loop, loop name and craze project (docs/alerts.md "Alerts"), read and checked when
     \`agentledger worker\` starts.`,
    { unset: 'no budget, the rule is silent' },
  ),
};

export const alerts = service({
  title: 'Alerts',
  vars,
  config: (e) => {
    /** Thresholds of the alert rules (src/alerts/rules.ts reads them as AlertRuleConfig). */
    const rules = {
      windowMs: e.AGENTLEDGER_ALERT_WINDOW_MS,
      convergenceMinWarnings: e.AGENTLEDGER_ALERT_CONVERGENCE_MIN_WARNINGS,
      convergenceCount: e.AGENTLEDGER_ALERT_CONVERGENCE_COUNT,
      stalledAfterMs: e.AGENTLEDGER_ALERT_STALLED_AFTER_MS,
      maxAgeMs: e.AGENTLEDGER_ALERT_MAX_AGE_MS,
      humanWaitMs: e.AGENTLEDGER_ALERT_HUMAN_WAIT_MS,
      subagentFailureRate: e.AGENTLEDGER_ALERT_SUBAGENT_FAILURE_RATE,
      subagentMinOutcomes: e.AGENTLEDGER_ALERT_SUBAGENT_MIN_OUTCOMES,
      gapGraceMs: e.AGENTLEDGER_ALERT_GAP_GRACE_MS,
    };
    /** Where notifications go (src/alerts/webhook.ts reads it as Webhook); undefined without AGENTLEDGER_ALERT_WEBHOOK_URL. */
    const webhook: { readonly url: string; readonly secret: string | undefined; readonly timeoutMs: number } | undefined =
      e.AGENTLEDGER_ALERT_WEBHOOK_URL === undefined
        ? undefined
        : { url: e.AGENTLEDGER_ALERT_WEBHOOK_URL, secret: e.AGENTLEDGER_ALERT_WEBHOOK_SECRET, timeoutMs: e.AGENTLEDGER_ALERT_WEBHOOK_TIMEOUT_MS };
    return {
      alerts: {
        sweepMs: e.AGENTLEDGER_ALERT_SWEEP_MS,
        /** Loops per chunk of an alert sweep or evaluation. */
        chunkLoops: e.AGENTLEDGER_ALERT_CHUNK_LOOPS,
        renotifyMs: e.AGENTLEDGER_ALERT_RENOTIFY_MS,
        evaluateOnIngest: e.AGENTLEDGER_ALERT_EVALUATE_ON_INGEST,
        evaluateGapMs: e.AGENTLEDGER_ALERT_EVALUATE_GAP_MS,
        /** The budgets file of `spend_budget`; undefined: none. */
        budgetsFile: e.AGENTLEDGER_ALERT_BUDGETS_FILE,
        rules,
        webhook,
        /** Where the alerts are pushed besides (src/alerts/alertmanager-push.ts); undefined without AGENTLEDGER_ALERTMANAGER_URL. */
        alertmanager: e.AGENTLEDGER_ALERTMANAGER_URL === undefined ? undefined : { urls: e.AGENTLEDGER_ALERTMANAGER_URL, timeoutMs: e.AGENTLEDGER_ALERTMANAGER_TIMEOUT_MS },
      },
    };
  },
  problems: alertProblems,
  redacts: {
    'alerts.webhook.url': ['AGENTLEDGER_ALERT_WEBHOOK_URL'],
    'alerts.webhook.secret': ['AGENTLEDGER_ALERT_WEBHOOK_SECRET'],
    'alerts.alertmanager.urls': ['AGENTLEDGER_ALERTMANAGER_URL'],
  },
});

/**
 * Alert settings that cannot work together: a webhook secret with no webhook
 * would sign nothing (most likely the URL was forgotten), and a max age not
 * above the stall time would drop every quiet loop before it could count as
 * stalled, so `stalled_loop` would never fire for one.
 */
function alertProblems(e: EnvOf<typeof vars>): string[] {
  const problems: string[] = [];
  if (e.AGENTLEDGER_ALERT_WEBHOOK_SECRET !== undefined && e.AGENTLEDGER_ALERT_WEBHOOK_URL === undefined) {
    problems.push('missing setting AGENTLEDGER_ALERT_WEBHOOK_URL: AGENTLEDGER_ALERT_WEBHOOK_SECRET is only used with it');
  }
  if (e.AGENTLEDGER_ALERT_MAX_AGE_MS <= e.AGENTLEDGER_ALERT_STALLED_AFTER_MS) {
    problems.push(
      `invalid setting AGENTLEDGER_ALERT_MAX_AGE_MS=${e.AGENTLEDGER_ALERT_MAX_AGE_MS}: must be above AGENTLEDGER_ALERT_STALLED_AFTER_MS=${e.AGENTLEDGER_ALERT_STALLED_AFTER_MS}, else no quiet loop is ever reported stalled`,
    );
  }
  return problems;
}
