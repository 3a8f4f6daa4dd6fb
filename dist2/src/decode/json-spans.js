/**
 * The exact text of each member of a JSON object, for what `JSON.parse` loses:
 * `json.RawMessage` fields are kept as the producer's bytes, and int64 and USD
 * numbers are read from their digits rather than from a float.
 *
 * It scans one object level and assumes the text is valid JSON (`JSON.parse`
 * has accepted it first); it never evaluates anything.
 */
/** Member name -> its value's text, for the top level of a JSON object text. */
export function objectMembers(text) {
    const members = new Map();
    eachMember(text, (name, value) => members.set(name, value));
    return members;
}
/**
 * The text of the last top-level member named `key` (the one `JSON.parse`
 * keeps when a name repeats), or undefined; one scan, no map.
 */
export function lastMemberText(text, key) {
    let found;
    eachMember(text, (name, value) => {
        if (name === key)
            found = value;
    });
    return found;
}
/** Calls `visit` with each top-level member's name and value text, in order. */
function eachMember(text, visit) {
    let i = skipWs(text, 0);
    if (text.charCodeAt(i) !== 0x7b /* { */)
        return;
    i = skipWs(text, i + 1);
    if (text.charCodeAt(i) === 0x7d /* } */)
        return;
    while (i < text.length) {
        const keyEnd = endOfString(text, i);
        const keyText = text.slice(i, keyEnd);
        const name = keyText.includes('\\') ? JSON.parse(keyText) : keyText.slice(1, -1);
        i = skipWs(text, keyEnd);
        i = skipWs(text, i + 1); // ':'
        const valueEnd = endOfValue(text, i);
        visit(name, text.slice(i, valueEnd));
        i = skipWs(text, valueEnd);
        if (text.charCodeAt(i) !== 0x2c /* , */)
            break;
        i = skipWs(text, i + 1);
    }
}
function skipWs(text, i) {
    for (;;) {
        const c = text.charCodeAt(i);
        if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09)
            return i;
        i++;
    }
}
/** Index just past the string starting at i (text[i] is '"'). */
function endOfString(text, i) {
    let j = i + 1;
    for (;;) {
        const q = text.indexOf('"', j);
        if (q < 0)
            return text.length;
        let backslashes = 0;
        for (let k = q - 1; text.charCodeAt(k) === 0x5c; k--)
            backslashes++;
        if (backslashes % 2 === 0)
            return q + 1;
        j = q + 1;
    }
}
/** Index just past the value starting at i. */
function endOfValue(text, i) {
    const c = text.charCodeAt(i);
    if (c === 0x22)
        return endOfString(text, i);
    if (c !== 0x7b && c !== 0x5b) {
        let j = i;
        for (;;) {
            const d = text.charCodeAt(j);
            if (Number.isNaN(d) || d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09)
                return j;
            j++;
        }
    }
    let depth = 0;
    let j = i;
    while (j < text.length) {
        const d = text.charCodeAt(j);
        if (d === 0x22) {
            j = endOfString(text, j);
            continue;
        }
        if (d === 0x7b || d === 0x5b)
            depth++;
        else if (d === 0x7d || d === 0x5d) {
            depth--;
            if (depth === 0)
                return j + 1;
        }
        j++;
    }
    return j;
}
//# sourceMappingURL=json-spans.js.map