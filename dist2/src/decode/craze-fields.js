/**
 * The field schemas every craze codec shape is built from (craze.ts says how
 * tolerant they are): absent reads as zero, counters must be safe integers,
 * int64 members arrive already exact, as bigint.
 */
import { z } from 'zod';
import { INT64_MAX, INT64_MIN } from '../money/int64-text.js';
import { parseRfc3339 } from './time.js';
/** A string that may be absent ('' then). */
export const str = z.string().default('');
export const bool = z.boolean().default(false);
export const strings = z.array(z.string()).default([]);
/** Counters and codes: integers (5.0 and 1e3 too, as JSON Schema counts them) that must be safe. */
export const smallInt = z
    .number()
    .refine(Number.isInteger, 'expected an integer')
    .refine((n) => !Number.isInteger(n) || Number.isSafeInteger(n), 'beyond 2^53 - 1: cannot be read exactly as a number');
export const nonNegative = smallInt.refine((n) => n >= 0, 'must be >= 0');
/** int64 members, already replaced by their exact bigint (craze.ts, overlayExactIntegers). */
export const int64 = z
    .bigint({ error: (issue) => (issue.input === undefined ? 'is missing' : 'expected an integer') })
    .min(INT64_MIN, 'beyond the int64 range')
    .max(INT64_MAX, 'beyond the int64 range');
/** RFC 3339 with up to nanoseconds; kept as its text. */
export const time = z.string().refine((s) => parseRfc3339(s) !== undefined, 'not an RFC 3339 date-time').default('');
const codePoints = (s) => [...s].length;
export const maxLen = (n) => z.string().refine((s) => codePoints(s) <= n, `longer than ${n} characters`);
export const effort = z.string().refine((s) => s.length >= 1 && codePoints(s) <= 32, 'an effort is 1 to 32 characters');
/** A JSON object: not null, not an array. */
export function isObject(v) {
    return typeof v === 'object' && v !== null && !Array.isArray(v);
}
//# sourceMappingURL=craze-fields.js.map