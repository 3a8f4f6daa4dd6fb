/**
 * Exact integers from JSON number text: the one reader of int64 and uint64
 * values (money, tokens, seqs), and the JSON number grammar picodollars.ts shares.
 *
 * `JSON.parse` reads every number through a float, exact only up to 2^53
 * (about $9,007 in picodollars); the decoders take a member's text
 * (decode/json-spans.ts) and read its digits here instead.
 */
/** The range of an Int64 column (and of Go's int64): about ±$9.2M in picodollars. */
export const INT64_MAX = 9223372036854775807n;
export const INT64_MIN = -9223372036854775808n;
/** Go's uint64. */
export const UINT64_MAX = 18446744073709551615n;
const NUMBER_TEXT = /^(-)?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
/** `-12.5e3` -> {negative, digits '125', scale 2}; undefined for text that is not a JSON number. */
export function numberText(text) {
    const m = NUMBER_TEXT.exec(text);
    if (!m)
        return undefined;
    const fraction = m[3] ?? '';
    return { negative: m[1] === '-', digits: `${m[2] ?? ''}${fraction}`, scale: Number(m[4] ?? '0') - fraction.length };
}
/** Stands for any integer too large to build (1e999999): beyond every range. */
const HUGE = 2n ** 64n;
/**
 * The exact integer a JSON number text denotes (`42`, `-7`, `1e3`, `5.0`), or
 * undefined for one that is not an integer (`1.5`). Range is the caller's
 * business; an absurd exponent yields ±2^64, outside every range.
 */
export function exactIntegerText(text) {
    const n = numberText(text);
    if (!n)
        return undefined;
    let digits = n.digits.replace(/^0+/, '');
    if (digits === '')
        return 0n;
    let scale = n.scale;
    while (scale < 0 && digits.endsWith('0')) {
        digits = digits.slice(0, -1);
        scale++;
    }
    if (scale < 0)
        return undefined;
    const sign = n.negative ? -1n : 1n;
    if (digits.length + scale > 40)
        return sign * HUGE;
    return sign * BigInt(digits) * 10n ** BigInt(scale);
}
//# sourceMappingURL=int64-text.js.map