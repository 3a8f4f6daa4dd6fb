export function readStringLiteral(text, start = 0) {
    if (text[start] !== "'")
        throw new Error(`no opening quote at ${start}`);
    let value = '';
    let i = start + 1;
    while (i < text.length) {
        const c = text[i];
        if (c === '\\') {
            const next = text[i + 1];
            if (next !== '\\' && next !== "'")
                throw new Error(`unexpected escape \\${next ?? '<end>'} at ${i}`);
            value += next;
            i += 2;
        }
        else if (c === "'") {
            if (text[i + 1] === "'")
                throw new Error(`doubled quote at ${i}: ClickHouse reads it as one quote inside the literal`);
            return { value, end: i + 1 };
        }
        else {
            value += c;
            i += 1;
        }
    }
    throw new Error('unterminated string literal');
}
//# sourceMappingURL=clickhouse-literal.js.map