const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
/** The last date-time-to-the-second seen and its epoch seconds: most times share one with their predecessor. */
let cachedPrefix = '';
let cachedSeconds = 0;
const FAST = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z)$/;
export function parseRfc3339(text) {
    const fast = FAST.exec(text);
    if (fast && fast[1] === cachedPrefix)
        return { seconds: cachedSeconds, nanos: fast[2] ? Number(fast[2].padEnd(9, '0')) : 0 };
    const parsed = parseFully(text);
    if (parsed && fast) {
        cachedPrefix = fast[1];
        cachedSeconds = parsed.seconds;
    }
    return parsed;
}
function parseFully(text) {
    const m = RFC3339.exec(text);
    if (!m)
        return undefined;
    const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number);
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
        return undefined;
    // Date.UTC reads years 0-99 as 1900-1999; setUTCFullYear does not.
    const check = new Date(0);
    check.setUTCFullYear(year, month - 1, day);
    const ms = check.getTime() + ((hour * 60 + minute) * 60 + second) * 1000;
    if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1)
        return undefined;
    let offset = 0;
    if (!m[8]) {
        const oh = Number(m[10]);
        const om = Number(m[11]);
        if (oh > 23 || om > 59)
            return undefined;
        offset = (oh * 60 + om) * 60 * (m[9] === '-' ? -1 : 1);
    }
    const nanos = m[7] ? Number(m[7].padEnd(9, '0')) : 0;
    return { seconds: ms / 1000 - offset, nanos };
}
/** Negative when a is earlier than b, 0 when equal, positive when later. */
export function compareInstants(a, b) {
    return a.seconds !== b.seconds ? a.seconds - b.seconds : a.nanos - b.nanos;
}
let lastSeconds = NaN;
let lastText = '';
/**
 * What a ClickHouse DateTime holds on every version: 1970-01-01 00:00:00 to
 * 2105-12-31 23:59:59 UTC. Outside it, 18.16 and current versions store the
 * same text differently (9999-12-31 becomes 1970 on one, 2027 on the other),
 * so agentledger clamps first and says so in the row.
 */
export const DATETIME_MIN_SECONDS = 0;
export const DATETIME_MAX_SECONDS = 4_291_747_199;
export function outsideDateTime(instant) {
    return instant.seconds < DATETIME_MIN_SECONDS || instant.seconds > DATETIME_MAX_SECONDS;
}
/** `YYYY-MM-DD hh:mm:ss` in UTC, clamped to DateTime's range: what a ClickHouse DateTime('UTC') column takes. */
export function toClickHouseDateTime(instant) {
    // Consecutive envelopes mostly share a second; a Date per row shows in profiles.
    if (instant.seconds !== lastSeconds) {
        const seconds = Math.min(DATETIME_MAX_SECONDS, Math.max(DATETIME_MIN_SECONDS, instant.seconds));
        lastSeconds = instant.seconds;
        lastText = new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');
    }
    return lastText;
}
/** The detail a row gets when its time was clamped ('' when it was not). */
export function clampDetail(what, text, instant) {
    return outsideDateTime(instant) ? `${what} ${text} is outside DateTime's range (1970 to 2105) and is stored as ${toClickHouseDateTime(instant)}` : '';
}
//# sourceMappingURL=time.js.map