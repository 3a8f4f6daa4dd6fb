/** Time as integer nanoseconds, and its text as Go's time.RFC3339Nano writes it (what the verifier hashes). */
export const NS_PER_S = 1000000000n;
const START = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;
/** Parses a UTC RFC 3339 time (`…Z`, up to 9 fraction digits) to integer nanoseconds since the epoch. */
export function parseUtcNanos(text) {
    const m = START.exec(text);
    if (!m)
        throw new RangeError(`startTime ${JSON.stringify(text)} is not an RFC 3339 UTC time such as 2026-11-30T10:00:00Z`);
    const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number);
    const ms = Date.UTC(y, mo - 1, d, h, mi, s);
    return BigInt(ms / 1000) * NS_PER_S + BigInt((m[7] ?? '').padEnd(9, '0') || '0');
}
/**
 * Go's time.RFC3339Nano text of a UTC instant: the fraction is built from the
 * integer nanoseconds with trailing zeros trimmed (none for whole seconds).
 * Date is used for the calendar of the whole seconds only.
 */
export function formatRfc3339Nano(nanos) {
    let seconds = nanos / NS_PER_S;
    let frac = nanos % NS_PER_S;
    if (frac < 0n) {
        frac += NS_PER_S;
        seconds -= 1n;
    }
    const base = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
    const fraction = frac === 0n ? '' : '.' + frac.toString().padStart(9, '0').replace(/0+$/, '');
    return `${base}${fraction}Z`;
}
//# sourceMappingURL=time.js.map