/**
 * Text for a terminal. Ids and details come from producers, so an ESC
 * sequence in a LoopID could recolour, move or retitle the user's terminal,
 * and a CR, LF or NUL would break the command's rows. Text-mode output passes
 * every such string through printable(); --json output is escaped by
 * JSON.stringify.
 */
/**
 * What is escaped: the backslash (so the output reads back unambiguously),
 * control characters (\p{Cc}: C0, DEL, and C1, since some terminals obey
 * U+009B as CSI), UTF-16 surrogates without their pair (\p{Cs}: with the u
 * flag a paired surrogate is one code point, never Cs), the line and
 * paragraph separators, and the bidirectional embedding, override and
 * isolate controls (they reorder what the terminal shows).
 */
const UNPRINTABLE = /[\\\p{Cc}\p{Cs}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;
const NAMED = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
function escape(ch) {
    const named = NAMED[ch];
    if (named !== undefined)
        return named;
    const code = ch.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}
/** `s` with every character a terminal would act on written as a backslash escape (\x1b, \n, \u2028, \\). */
export function printable(s) {
    return s.replace(UNPRINTABLE, escape);
}
//# sourceMappingURL=terminal.js.map