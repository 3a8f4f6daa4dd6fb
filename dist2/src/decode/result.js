/** An unpaired UTF-16 surrogate: Go never writes one, and ClickHouse refuses one in a String column. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');
export const ok = (value) => ({ ok: true, value });
/**
 * Longest reason kept, in UTF-16 units: a reason travels as a row's detail and
 * a dead letter's header, and some quote the record (a number's digits, a
 * JSON.parse message), which may be as long as the record itself.
 */
export const MAX_REASON_LENGTH = 1024;
/**
 * A refusal. The reason is made storable whatever it quotes: cut to
 * MAX_REASON_LENGTH, and with every unpaired surrogate replaced by U+FFFD —
 * V8's JSON.parse message cuts the text it quotes in the middle of a
 * surrogate pair ("Unexpected token '\ud83d'"), and ClickHouse refuses a
 * lone surrogate in the detail column, failing the whole insert.
 */
export const malformed = (reason) => ({ ok: false, reason: storableReason(reason) });
function storableReason(reason) {
    const cut = reason.length <= MAX_REASON_LENGTH ? reason : `${reason.slice(0, MAX_REASON_LENGTH)}… (${reason.length} characters)`;
    return cut.replace(LONE_SURROGATES, '\uFFFD');
}
/**
 * An id that becomes a key and is read back in IN lists (LoopID, craze
 * sessionId and incarnation): at most 1 KiB of UTF-8. It bounds what one id
 * adds to a read-back query (max_query_size) and to every in-memory key, and
 * no honest producer writes ids anywhere near it.
 */
export const MAX_ID_BYTES = 1024;
/** The reason an id is refused for its length, or undefined when it fits MAX_ID_BYTES. */
export function idTooLong(field, id) {
    // A UTF-16 unit is at most 3 bytes of UTF-8: short ids skip the count.
    if (id.length <= MAX_ID_BYTES / 3)
        return undefined;
    const bytes = Buffer.byteLength(id, 'utf8');
    return bytes <= MAX_ID_BYTES ? undefined : `${field} is ${bytes} bytes long (UTF-8); at most ${MAX_ID_BYTES} are accepted`;
}
const utf8 = new TextDecoder('utf-8', { fatal: true });
/**
 * The first step of every record decoder: a Kafka record value that is
 * non-empty, valid UTF-8 and JSON, or the reason it is not.
 */
export function parseJsonValue(value) {
    if (value === null || value.length === 0)
        return malformed('empty record value');
    const read = utf8Json(value, 'record value');
    if (!read.ok)
        return read;
    const { text, json } = read.value;
    // Only a \u escape can carry a lone surrogate (UTF-8 bytes cannot), so
    // the walk is skipped for the records without one.
    if (text.includes('\\u') && holdsLoneSurrogate(json)) {
        return malformed('record holds a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), which ClickHouse cannot store');
    }
    return read;
}
/** `bytes` as UTF-8 text and the JSON value it holds, or the reason not, naming the bytes `what` (a record value, an envelope's payload). */
export function utf8Json(bytes, what) {
    let text;
    try {
        text = utf8.decode(bytes);
    }
    catch {
        return malformed(`${what} is not valid UTF-8`);
    }
    let json;
    try {
        json = JSON.parse(text);
    }
    catch (err) {
        return malformed(`${what} is not JSON: ${err.message}`);
    }
    return ok({ text, json });
}
/**
 * Whether any string (or key) of a parsed JSON value holds an unpaired
 * surrogate. A loop, not a recursion: JSON.parse takes arrays nested 100,000
 * deep, and a recursive walk of them overflows the stack.
 */
function holdsLoneSurrogate(root) {
    const stack = [root];
    while (stack.length > 0) {
        const value = stack.pop();
        if (typeof value === 'string') {
            if (LONE_SURROGATE.test(value))
                return true;
        }
        else if (Array.isArray(value)) {
            for (const v of value)
                stack.push(v);
        }
        else if (typeof value === 'object' && value !== null) {
            for (const [k, v] of Object.entries(value)) {
                if (LONE_SURROGATE.test(k))
                    return true;
                stack.push(v);
            }
        }
    }
    return false;
}
//# sourceMappingURL=result.js.map