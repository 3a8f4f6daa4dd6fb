/**
 * The alerts pushed to Prometheus's Alertmanager (docs/alerts.md
 * "Alertmanager"), beside the webhook, not instead of it. One pusher per
 * worker, one loop per Alertmanager URL, none of them awaited by a sweep: an
 * Alertmanager that is down or slow delays nothing but its own pushes.
 *
 * Each push posts what the alert states in Redis (state-store.ts) say at
 * that moment, as Prometheus's notifier does: every firing alert, every
 * push (at least once per sweep interval, and soon after a transition of
 * this worker), so Alertmanager never resolves one by its `endsAt` and a
 * restarted Alertmanager (it keeps no alerts) has them all again within a
 * sweep; and each resolved one, with its `endsAt`, until that Alertmanager
 * answered 2xx to it (marked in Redis, so a restarted or another worker does
 * not send it again, nor forget to). Alertmanager deduplicates by label set:
 * two workers pushing the same alert make one alert.
 *
 * A push that fails (no answer, a timeout, a 5xx) is tried again with
 * backoff (alertmanager.ts). A 400 is Alertmanager refusing some alerts
 * (it takes the others): each alert of that push is posted alone, the ones
 * refused again are logged once with their labels, counted and left out
 * while this worker runs; retrying them cannot change the answer.
 */
import type { Redis } from 'ioredis';
import { FatalError, failureMessage, TransientError } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import { afterFailure, afterSuccess, amAlertOf, FRESH, isDue, type AmAlert, type Target } from './alertmanager.js';
import { stateKey, type Stored } from './state-store.js';

/** Where each resolved alert is marked taken by an Alertmanager: field `[url, state field]`, value its resolvedAt. */
export const takenKey = (prefix: string): string => `${prefix}:alerts:alertmanager-taken`;

/** Alerts per POST: a body of a few hundred kB at most, however many alerts fire. */
const PUSH_ALERTS = 500;

/** An Alertmanager's 400: it refused (some of) the alerts posted. */
export class AlertmanagerRefusedError extends FatalError {}

/**
 * POSTs `alerts` to the Alertmanager at `url` (its base: `/api/v2/alerts`
 * is appended). Resolves on 2xx; throws AlertmanagerRefusedError on a 400
 * (with Alertmanager's reason), a TransientError for the rest (no answer
 * within `timeoutMs`, a 5xx, another status). The URL is not in messages:
 * it may carry a password. `stop` aborts it (a worker stopping does not
 * wait out a hung Alertmanager).
 */
export async function postAlerts(url: string, alerts: readonly AmAlert[], timeoutMs: number, stop?: AbortSignal): Promise<void> {
  let res: Response;
  try {
    res = await fetch(`${url.replace(/\/+$/, '')}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'agentledger' },
      body: JSON.stringify(alerts),
      signal: stop === undefined ? AbortSignal.timeout(timeoutMs) : AbortSignal.any([AbortSignal.timeout(timeoutMs), stop]),
      redirect: 'error',
    });
  } catch (err) {
    const why = err instanceof Error && err.cause instanceof Error ? err.cause : err;
    throw new TransientError(`Alertmanager did not answer: ${failureMessage(why)}`, { cause: err });
  }
  const answer = (await res.text().catch(() => '')).slice(0, 300).replace(/[^\x20-\x7e]/g, '?');
  if (res.ok) return;
  const message = `Alertmanager answered HTTP ${res.status}${answer === '' ? '' : ` ${answer}`}`;
  throw res.status === 400 ? new AlertmanagerRefusedError(message) : new TransientError(message);
}

export interface PusherOptions {
  readonly urls: readonly string[];
  readonly timeoutMs: number;
  /** Firing alerts are re-sent at least this often (the sweep interval). */
  readonly resendMs: number;
  /** The page's public address, for each alert's generatorURL. */
  readonly pageUrl?: string;
  readonly redis: Redis;
  readonly prefix: string;
  readonly log: Logger;
  /** Told each push to `url`: taken (2xx, or 400 with the refused split off) or failed (metrics). */
  readonly onPush?: (url: string, result: 'sent' | 'failed', alerts: number) => void;
  /** Told each alert `url` refused (metrics). */
  readonly onRefused?: (url: string) => void;
}

export interface Pusher {
  /** A transition happened: push soon, not at the next interval (an Alertmanager in backoff keeps its wait). */
  wake(): void;
  /** Stops the loops, aborting the pushes in hand; resolves when each loop has ended. */
  stop(): Promise<void>;
}

/** An alert's identity for the refused list: its labels, when it started, firing or not. */
const refusalKey = (a: AmAlert, resolved: boolean): string => JSON.stringify([a.labels, a.startsAt, resolved]);

/** The alerts one push to `url` sends at `now`, with the taken marks to set if they are taken. */
async function toPush(o: PusherOptions, url: string, now: number): Promise<{ alerts: { alert: AmAlert; mark?: [string, string] }[]; stale: string[] }> {
  const [held, taken] = await Promise.all([o.redis.hgetall(stateKey(o.prefix)), o.redis.hgetall(takenKey(o.prefix))]);
  const alerts: { alert: AmAlert; mark?: [string, string] }[] = [];
  for (const [f, text] of Object.entries(held)) {
    const s = JSON.parse(text) as Stored;
    const alert = amAlertOf(s, now, { resendMs: o.resendMs, ...(o.pageUrl === undefined ? {} : { pageUrl: o.pageUrl }) });
    if (s.state === 'firing') alerts.push({ alert });
    else {
      const mark = JSON.stringify([url, f]);
      if (taken[mark] !== String(s.resolvedAt)) alerts.push({ alert, mark: [mark, String(s.resolvedAt)] });
    }
  }
  // Marks of states gone from Redis (pruned) or firing again.
  const stale = Object.keys(taken).filter((m) => {
    const [u, f] = JSON.parse(m) as [string, string];
    const s = held[f] === undefined ? undefined : (JSON.parse(held[f]) as Stored);
    return u === url && s?.state !== 'resolved';
  });
  return { alerts, stale };
}

export function startPusher(o: PusherOptions): Pusher {
  let stopped = false;
  const stopping = new AbortController();
  const wakers = new Set<() => void>();
  const woken = new Map<string, boolean>(o.urls.map((u) => [u, true]));
  /** Refused alerts, per URL: left out while this worker runs, logged once. */
  const refused = new Map<string, Set<string>>(o.urls.map((u) => [u, new Set()]));

  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      wakers.add(done);
    });

  async function pushOnce(url: string): Promise<void> {
    const { alerts, stale } = await toPush(o, url, Date.now());
    const mine = refused.get(url)!;
    const sending = alerts.filter((a) => !mine.has(refusalKey(a.alert, a.mark !== undefined)));
    for (let i = 0; i < sending.length; i += PUSH_ALERTS) {
      const part = sending.slice(i, i + PUSH_ALERTS);
      try {
        await postAlerts(url, part.map((a) => a.alert), o.timeoutMs, stopping.signal);
      } catch (err) {
        if (!(err instanceof AlertmanagerRefusedError)) throw err;
        // The others were taken; find the refused ones, one POST each.
        for (const a of part) {
          try {
            await postAlerts(url, [a.alert], o.timeoutMs, stopping.signal);
          } catch (one) {
            if (!(one instanceof AlertmanagerRefusedError)) throw one;
            mine.add(refusalKey(a.alert, a.mark !== undefined));
            o.onRefused?.(url);
            o.log.warn('Alertmanager refused an alert; not sent again while this worker runs', { labels: JSON.stringify(a.alert.labels), startsAt: a.alert.startsAt, endsAt: a.alert.endsAt, error: failureMessage(one) });
          }
        }
      }
      // Taken: what Alertmanager did not refuse.
      const marks = part.flatMap((a) => (a.mark === undefined || mine.has(refusalKey(a.alert, true)) ? [] : [a.mark]));
      if (marks.length > 0) await o.redis.hset(takenKey(o.prefix), Object.fromEntries(marks));
      o.onPush?.(url, 'sent', part.length);
    }
    if (stale.length > 0) await o.redis.hdel(takenKey(o.prefix), ...stale);
  }

  async function run(url: string): Promise<void> {
    let target: Target = FRESH;
    let last = 0;
    while (!stopped) {
      const now = Date.now();
      const due = woken.get(url) === true ? target.retryAt : Math.max(target.retryAt, last + o.resendMs);
      if (!isDue({ ...target, retryAt: due }, now)) {
        await pause(due - now);
        continue;
      }
      woken.set(url, false);
      last = now;
      try {
        await pushOnce(url);
        if (target.failures > 0) o.log.info('Alertmanager takes the alerts again', { failures: target.failures });
        target = afterSuccess();
      } catch (err) {
        if (stopped) break;
        target = afterFailure(target, Date.now(), o.resendMs);
        o.onPush?.(url, 'failed', 0);
        // Once per outage, not per attempt.
        if (target.failures === 1) o.log.warn('Alertmanager push failed; retrying with backoff', { error: failureMessage(err) });
      }
    }
  }

  const loops = o.urls.map((url) => run(url));
  return {
    wake() {
      for (const u of o.urls) woken.set(u, true);
      for (const w of [...wakers]) w();
    },
    async stop() {
      stopped = true;
      stopping.abort();
      for (const w of [...wakers]) w();
      await Promise.all(loops);
    },
  };
}
