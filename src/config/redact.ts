/**
 * How settings may be shown: in an error line (shownValue) and in
 * `agentledger config` (redactLeaves). Both follow the `show` each setting
 * declares (setting.ts), so a variable marked secret() is hidden in both.
 */
import type { Setting, Show } from './setting.js';

/** A URL with its password (user-info) replaced by `***`: what may be printed or logged. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password === '') return url;
    u.password = '***';
    return u.toString();
  } catch {
    // Not a URL after all: hide whatever could be user-info.
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/**
 * A webhook URL as it may be printed or logged: its scheme, host and port
 * only. Unlike a service URL, a webhook's path and query are often its
 * credential (Slack's and Discord's carry the token there), and it may carry
 * a user and password too.
 */
export function redactWebhookUrl(url: string): string {
  try {
    const u = new URL(url);
    const bare = u.username === '' && u.password === '' && u.pathname === '/' && u.search === '' && u.hash === '';
    return `${u.protocol}//${u.host}/${bare ? '' : '***'}`;
  } catch {
    return '(hidden)';
  }
}

/**
 * A rejected value as the error line shows it: a secret not at all, a URL
 * without its password, a webhook URL as its origin only.
 */
export function shownValue(setting: Setting | undefined, value: string): string {
  switch (setting?.show ?? 'plain') {
    case 'secret':
      return '(hidden)';
    case 'origin':
      return JSON.stringify(redactWebhookUrl(value));
    case 'url':
      return JSON.stringify(redactUrl(value));
    case 'plain':
      return JSON.stringify(value);
  }
}

/** A value of the parsed settings as `agentledger config` shows it. */
function shownLeaf(show: Exclude<Show, 'plain'>, value: unknown): unknown {
  // A list of URLs (AGENTLEDGER_ALERTMANAGER_URL): each shown as one.
  if (Array.isArray(value) && show !== 'secret') return value.map((v: unknown) => shownLeaf(show, v));
  if (show === 'origin') return typeof value === 'string' ? redactWebhookUrl(value) : value;
  if (show === 'url') return typeof value === 'string' ? redactUrl(value) : value;
  return value === undefined ? '(unset)' : value === '' ? '(empty)' : '(set)';
}

/**
 * The strongest redaction of a value carrying several settings: a value made
 * from a URL is a URL (its password, even one written in from a password
 * setting, is hidden by redactUrl), else a secret.
 */
export function leafShow(shows: readonly Show[]): Exclude<Show, 'plain'> | undefined {
  for (const show of ['origin', 'url', 'secret'] as const) if (shows.includes(show)) return show;
  return undefined;
}

/**
 * `value` with the leaf at each dotted path redacted; objects along the path
 * are copied, never changed. A path whose parent is absent (no SASL, no
 * webhook) is left as it is.
 */
export function redactLeaves<T>(value: T, leaves: readonly (readonly [path: string, show: Exclude<Show, 'plain'>])[]): T {
  let out: unknown = value;
  for (const [path, show] of leaves) out = redactAt(out, path.split('.'), show);
  return out as T;
}

function redactAt(node: unknown, path: readonly string[], show: Exclude<Show, 'plain'>): unknown {
  const [head, ...rest] = path;
  if (head === undefined || node === null || typeof node !== 'object' || !(head in node)) return node;
  const child = (node as Record<string, unknown>)[head];
  return { ...node, [head]: rest.length === 0 ? shownLeaf(show, child) : redactAt(child, rest, show) };
}
