/**
 * Moving a craze journal in time, for the demo (`craze push --shift-to`): the
 * sample journals in test/fixtures/craze/journal were written in March 2025,
 * and a page whose default range is the last 7 days would show none of them.
 * The demo moves them instead of the page following the data: a real user's
 * page must keep showing "now", where an empty range says that nothing
 * arrived (a page that slid back to the newest data would show last week's
 * sessions as if they were current).
 *
 * The shift is whole seconds, so every time keeps its fraction digits as
 * written (nanoseconds included), and every UUIDv7 (craze's session and
 * incarnation ids) moves with it: its first 48 bits are its Unix time in
 * milliseconds, so a moved journal's ids are those of the moved time, and
 * each demo run ships sessions of its own instead of repeating the first
 * run's (which the consumer would drop as already stored, dates and all).
 * Pure: lines in, lines out.
 */

/** An RFC 3339 UTC time as craze writes it, in a JSON string: `"2025-03-08T09:11:47.187654321Z"`. */
const TIME = /"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?Z"/g;
/** A UUIDv7: version nibble 7, variant 10xx; the first 12 hex digits are milliseconds since the epoch. */
const UUID_V7 = /\b([0-9a-f]{8})-([0-9a-f]{4})-(7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})\b/g;

/** The newest time in a journal line, in epoch milliseconds (the fraction's first three digits); undefined if none. */
export function newestTimeMs(line: string): number | undefined {
  let newest: number | undefined;
  for (const m of line.matchAll(TIME)) {
    const ms = Date.parse(`${m[1]}Z`) + Number((m[2] ?? '.0').slice(1, 4).padEnd(3, '0'));
    if (newest === undefined || ms > newest) newest = ms;
  }
  return newest;
}

/** The shift that moves `newestMs` to at most `targetMs`, in whole seconds (as milliseconds). */
export function shiftToMs(newestMs: number, targetMs: number): number {
  return Math.floor((targetMs - newestMs) / 1000) * 1000;
}

/** The line with every time and every UUIDv7 in it moved by `shiftMs` (a whole number of seconds). */
export function shiftJournalLine(line: string, shiftMs: number): string {
  if (shiftMs % 1000 !== 0) throw new RangeError(`a journal shift is whole seconds, got ${shiftMs} ms`);
  if (shiftMs === 0) return line;
  return line
    .replace(TIME, (_, seconds: string, fraction: string | undefined) => {
      const moved = new Date(Date.parse(`${seconds}Z`) + shiftMs).toISOString().slice(0, 19);
      return `"${moved}${fraction ?? ''}Z"`;
    })
    .replace(UUID_V7, (_, high: string, mid: string, rest: string) => {
      const ms = parseInt(high + mid, 16) + shiftMs;
      if (ms < 0 || ms >= 2 ** 48) throw new RangeError(`a shift of ${shiftMs} ms takes UUIDv7 ${high}-${mid}-${rest} out of its 48-bit time`);
      const hex = ms.toString(16).padStart(12, '0');
      return `${hex.slice(0, 8)}-${hex.slice(8)}-${rest}`;
    });
}
