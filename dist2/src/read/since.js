import { UsageError } from './input.js';
/**
 * `--since` as a time, in whole seconds (a ClickHouse DateTime has no fraction):
 * RFC 3339, YYYY-MM-DD (UTC), or a span back from now (90m, 24h, 7d).
 */
export function parseSince(text, now = Date.now()) {
    const span = /^(\d+)([mhd])$/.exec(text);
    let ms;
    if (span)
        ms = now - Number(span[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[span[2]];
    else
        ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
    if (!Number.isFinite(ms) || Number.isNaN(new Date(ms).getTime()))
        throw new UsageError(`--since ${JSON.stringify(text)}: expected RFC 3339, YYYY-MM-DD or a span like 24h or 7d`);
    return new Date(Math.floor(ms / 1000) * 1000);
}
//# sourceMappingURL=since.js.map