/**
 * Money is integer picodollars (10⁻¹² USD) everywhere, as bigint in memory and
 * Int64 in ClickHouse. USD amounts arrive as JSON number text (Go writes
 * float64 as the shortest text that round-trips, e.g. `1e-7`); they are
 * converted from that text, rounding half to even at 10⁻¹², never by
 * multiplying a float.
 */
import { numberText } from './int64-text.js';
/**
 * Converts the decimal text of a USD amount to picodollars, rounding half to
 * even. Returns undefined for text that is not a JSON number.
 */
export function usdTextToPico(text) {
    const n = numberText(text);
    if (!n)
        return undefined;
    const { negative } = n;
    const digits = n.digits.replace(/^0+/, '');
    if (digits === '')
        return 0n;
    // value = digits × 10^scale; picodollars = value × 10^12
    const exponent = n.scale + 12;
    if (!Number.isSafeInteger(exponent))
        return exponent < 0 ? 0n : undefined;
    // Bounded before any string or bigint is built from the exponent: an amount
    // of more than 40 digits of picodollars fits no column, and one below a
    // tenth of a picodollar rounds to 0 (1e-600000000 would otherwise cost a
    // string of 600 million characters).
    if (digits.length + exponent > 40)
        return undefined;
    if (digits.length + exponent < 0)
        return 0n;
    let pico;
    if (exponent >= 0) {
        pico = BigInt(digits) * 10n ** BigInt(exponent);
    }
    else {
        const cut = -exponent;
        const padded = digits.padStart(cut + 1, '0');
        const kept = BigInt(padded.slice(0, padded.length - cut));
        const dropped = padded.slice(padded.length - cut);
        const half = '5' + '0'.repeat(cut - 1);
        const cmp = dropped === half ? 0 : dropped > half ? 1 : -1;
        pico = cmp > 0 || (cmp === 0 && kept % 2n === 1n) ? kept + 1n : kept;
    }
    return negative ? -pico : pico;
}
/** Formats picodollars as a USD decimal string with 12 fraction digits, exactly. */
export function picoToUsdText(pico) {
    const negative = pico < 0n;
    const abs = negative ? -pico : pico;
    const whole = abs / 1000000000000n;
    const frac = (abs % 1000000000000n).toString().padStart(12, '0');
    return `${negative ? '-' : ''}${whole}.${frac}`;
}
//# sourceMappingURL=picodollars.js.map