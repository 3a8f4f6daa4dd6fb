/**
 * The query strings of the page's endpoints, checked before anything is read
 * (pure): a parameter the endpoint does not know, one given twice, or a value
 * out of shape is a RequestError 400 with one line, so a typo never silently
 * widens a filter. Times are parsed as the CLI parses `--since` (RFC 3339,
 * YYYY-MM-DD in UTC, or a span back from now: 90m, 24h, 7d).
 */
import { UsageError } from '../read/input.js';
import { parseSince } from '../read/since.js';
import { RequestError } from './server.js';
/** The parameters of one request as plain strings, after the unknown and repeated ones are refused. */
export function takeParams(query, allowed) {
    const out = new Map();
    for (const [key, value] of query) {
        if (!allowed.includes(key)) {
            const shown = JSON.stringify(key.slice(0, 40));
            throw new RequestError(400, allowed.length === 0 ? `${shown}: this endpoint takes no parameters` : `${shown} is not a parameter here (${allowed.join(', ')})`);
        }
        if (out.has(key))
            throw new RequestError(400, `${key} given twice`);
        if (value.length > 500)
            throw new RequestError(400, `${key}: longer than 500 characters`);
        out.set(key, value);
    }
    return out;
}
/** One of a fixed list of words, or the default when absent or empty. */
export function choice(params, key, words, fallback) {
    const v = params.get(key);
    if (v === undefined || v === '')
        return fallback;
    if (!words.includes(v))
        throw new RequestError(400, `${key}=${JSON.stringify(v.slice(0, 40))}: expected one of ${words.join(', ')}`);
    return v;
}
export const FILTER_KEYS = ['source', 'model', 'name'];
export function filters(params) {
    const source = choice(params, 'source', ['runtime', 'craze', 'all'], 'all');
    return { source: source === 'all' ? '' : source, model: params.get('model') ?? '', name: params.get('name') ?? '' };
}
/** A WHEN as Unix seconds (parseSince's rules), the default when absent or empty. */
export function when(params, key, fallback, now) {
    const text = params.get(key) || fallback;
    try {
        return Math.floor(parseSince(text, now).getTime() / 1000);
    }
    catch (err) {
        if (err instanceof UsageError)
            throw new RequestError(400, `${key}=${JSON.stringify(text.slice(0, 40))}: expected RFC 3339, YYYY-MM-DD or a span like 24h or 7d`);
        throw err;
    }
}
/** A whole number in [min, max], the default when absent or empty. */
export function wholeNumber(params, key, fallback, min, max) {
    const text = params.get(key);
    if (text === undefined || text === '')
        return fallback;
    if (!/^\d{1,9}$/.test(text) || Number(text) < min || Number(text) > max) {
        throw new RequestError(400, `${key}=${JSON.stringify(text.slice(0, 40))}: expected a whole number from ${min} to ${max}`);
    }
    return Number(text);
}
/** DateTime's range in ClickHouse: Unix seconds 0 .. 2^32-1 (a bound outside it would wrap). */
export const clampSeconds = (s) => Math.min(2 ** 32 - 1, Math.max(0, s));
export const HOUR_S = 3600;
export const DAY_S = 86_400;
/** The UTC midnight of the day holding `seconds`. */
export const utcMidnight = (seconds) => seconds - (((seconds % DAY_S) + DAY_S) % DAY_S);
/** Most buckets one series answers: 92 days of hours. */
export const MAX_BUCKETS = 92 * 24;
/**
 * `?step=hour|day&by=model|provider|source|name&since=WHEN&until=WHEN` and the
 * filters. since is rounded down to its bucket's start and until up to the
 * next one, so every bucket is whole (a day's figure is the whole UTC day's).
 * Defaults: step day, by model, since 30d (step hour: 48h), until now.
 */
export function seriesQuery(query, nowMs) {
    const params = takeParams(query, ['step', 'by', 'since', 'until', ...FILTER_KEYS]);
    const step = choice(params, 'step', ['hour', 'day'], 'day');
    const by = choice(params, 'by', ['model', 'provider', 'source', 'name'], 'model');
    const size = step === 'hour' ? HOUR_S : DAY_S;
    const since = clampSeconds(when(params, 'since', step === 'hour' ? '48h' : '30d', nowMs));
    const untilRaw = clampSeconds(when(params, 'until', new Date(nowMs).toISOString(), nowMs));
    const first = since - (since % size);
    // The bucket holding `until` is included when until is inside it (now is, by default).
    const end = untilRaw % size === 0 ? untilRaw : untilRaw - (untilRaw % size) + size;
    if (end <= first)
        throw new RequestError(400, 'until must be later than since');
    if ((end - first) / size > MAX_BUCKETS)
        throw new RequestError(400, `more than ${MAX_BUCKETS} buckets: a shorter range, or step=day`);
    return { step, by, since: first, until: end, ...filters(params) };
}
//# sourceMappingURL=params.js.map