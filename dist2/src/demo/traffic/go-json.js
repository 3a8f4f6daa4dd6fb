/** JSON text byte for byte as the Go runtime writes it: the payload bytes are hashed, so spacing and escapes matter. */
/** Printable text without `"` `\\` `&` `<` `>` U+2028 U+2029: written as it is. */
const PLAIN = /^[\x20\x21\x23-\x25\x27-\x3b\x3d\x3f-\x5b\x5d-\u2027\u202a-\uffff]*$/;
/** A JSON string as Go's encoding/json writes it (HTML characters and U+2028/9 escaped). */
export function goString(s) {
    if (PLAIN.test(s))
        return `"${s}"`;
    return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
/**
 * Canonical JSON (event.Marshal): sorted keys, no whitespace. Numbers are
 * written as JavaScript's shortest round-trip text, which is Go's float64
 * text too (exponent below 1e-6: `1e-7`); bigints as their digits; undefined
 * members are omitted (Go's omitempty).
 */
export function canonical(v) {
    if (typeof v === 'string')
        return goString(v);
    if (typeof v === 'bigint')
        return v.toString();
    if (typeof v === 'number') {
        if (!Number.isFinite(v))
            throw new RangeError('JSON has no non-finite numbers');
        return String(v);
    }
    if (typeof v === 'boolean')
        return v ? 'true' : 'false';
    if (v === null)
        return 'null';
    if (Array.isArray(v))
        return `[${v.map(canonical).join(',')}]`;
    const obj = v;
    const keys = Object.keys(obj)
        .filter((k) => obj[k] !== undefined)
        .sort();
    return `{${keys.map((k) => `${goString(k)}:${canonical(obj[k])}`).join(',')}}`;
}
/** Nanodollars -> the float64 USD value Go would write (exact: at most 15 significant digits). */
export const usd = (nanoUsd) => nanoUsd / 1e9;
//# sourceMappingURL=go-json.js.map