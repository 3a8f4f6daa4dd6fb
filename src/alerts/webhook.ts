/**
 * Alert notifications to a webhook (issue 11, "Delivery"): the JSON body of
 * one transition, with a Slack-compatible `text`, signed with
 * `X-Agentledger-Signature: sha256=<hex HMAC-SHA256 of the raw body>` and
 * carrying the transition's key as an idempotency key, so a receiver can
 * verify the sender and drop a repeat. Delivery is one POST; retries are the
 * queue's (delivery.ts).
 */
import { createHmac } from 'node:crypto';
import { z } from 'zod';
import type { WebhookSettings } from '../config/index.js';
import { FatalError, failureMessage, TransientError } from '../errors/errors.js';
import { notificationKey, type AlertState, type Notification } from './state.js';

/** What a receiver gets, field for field (docs/alerts.md, "Alerts"). */
export const notice = z
  .object({
    /** The transition's key: the idempotency key, the same on every retry and from every worker. */
    key: z.string().regex(/^[0-9a-f]{64}$/),
    rule: z.string().min(1),
    subject: z.string(),
    state: z.enum(['firing', 'resolved']),
    notification: z.enum(['fired', 'renotified', 'resolved']),
    severity: z.enum(['info', 'warning', 'critical']),
    firedAt: z.string(),
    resolvedAt: z.string().nullable(),
    notifications: z.number().int().nonnegative(),
    detail: z.string(),
    text: z.string(),
  })
  .strict();
export type Notice = z.infer<typeof notice>;

const HEADLINE: Record<Notification, string> = { fired: 'firing', renotified: 'still firing', resolved: 'resolved' };

/** The notice of the notification a state step produced (state.ts). */
export function noticeOf(state: AlertState, kind: Notification): Notice {
  const text = `[${state.severity}] ${state.rule} ${HEADLINE[kind]}: ${state.subject}: ${state.detail}`;
  return {
    key: notificationKey(state, kind),
    rule: state.rule,
    subject: state.subject,
    state: state.state,
    notification: kind,
    severity: state.severity,
    firedAt: new Date(state.firedAt).toISOString(),
    resolvedAt: state.resolvedAt === undefined ? null : new Date(state.resolvedAt).toISOString(),
    notifications: state.notifications,
    detail: state.detail,
    text,
  };
}

/** `sha256=<hex>` of the raw body under the shared secret. */
export function signature(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

export const SIGNATURE_HEADER = 'x-agentledger-signature';
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** The webhook settings (AGENTLEDGER_ALERT_WEBHOOK_*); the secret, when set, signs every body. */
export type Webhook = WebhookSettings;

/**
 * Answers a retry may change: 408 (the receiver timed out reading) and 429
 * (it asks to be called later). Every other 4xx says the request itself is
 * refused (a wrong URL or secret, a body it will not take).
 */
const RETRIED_4XX = new Set([408, 429]);

/** A webhook's answer other than 2xx, with its status. */
export class WebhookAnswerError extends Error {
  override readonly name = 'WebhookAnswerError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Whether the receiver's answer `status` is one no retry changes (a 4xx other than 408 and 429). */
export function refusedForGood(status: number): boolean {
  return status >= 400 && status < 500 && !RETRIED_4XX.has(status);
}

/**
 * POSTs one notice. Resolves on a 2xx answer; throws otherwise (the status
 * and the first bytes of the answer, or the network error): a FatalError
 * for an answer no retry changes (refusedForGood), a TransientError for the
 * rest (5xx, 408, 429, no answer), which the queue retries. The URL is not
 * repeated in the message: it may hold a token.
 */
export async function postNotice(hook: Webhook, n: Notice): Promise<void> {
  const body = JSON.stringify(n);
  const headers: Record<string, string> = { 'content-type': 'application/json', [IDEMPOTENCY_HEADER]: n.key, 'user-agent': 'agentledger' };
  if (hook.secret !== undefined) headers[SIGNATURE_HEADER] = signature(body, hook.secret);
  let res: Response;
  try {
    res = await fetch(hook.url, { method: 'POST', headers, body, signal: AbortSignal.timeout(hook.timeoutMs), redirect: 'error' });
  } catch (err) {
    // fetch says "fetch failed"; the why is its cause.
    const why = err instanceof Error && err.cause instanceof Error ? err.cause : err;
    throw new TransientError(`webhook did not answer: ${failureMessage(why)}`, { cause: err });
  }
  const answer = (await res.text().catch(() => '')).slice(0, 200).replace(/[^\x20-\x7e]/g, '?');
  if (res.ok) return;
  const message = `webhook answered HTTP ${res.status}${answer === '' ? '' : ` "${answer}"`}`;
  const cause = new WebhookAnswerError(res.status, message);
  throw refusedForGood(res.status) ? new FatalError(message, { cause }) : new TransientError(message, { cause });
}
