/**
 * An independent reader of ClickHouse single-quoted string literals, written
 * from ClickHouse's lexer rules rather than from quoteString(), to check that
 * what quoteString() writes is one literal, ending where it should, holding
 * exactly the input.
 *
 * ClickHouse's lexer ends a quoted string at the first `'` that is not
 * escaped; a backslash escapes the character after it, and `''` is an escaped
 * quote too. Any other byte (NUL, newlines, non-ASCII) is literal text. This
 * reader is strict: it accepts only the escapes `\\` and `\'` (the ones a
 * correct quoting needs) and throws on any other, so that a quoting that
 * starts emitting `\n` or `''` is noticed and thought about.
 */
export interface StringLiteral {
  /** The decoded text. */
  readonly value: string;
  /** The index just after the closing quote. */
  readonly end: number;
}

export function readStringLiteral(text: string, start = 0): StringLiteral {
  if (text[start] !== "'") throw new Error(`no opening quote at ${start}`);
  let value = '';
  let i = start + 1;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\\') {
      const next = text[i + 1];
      if (next !== '\\' && next !== "'") throw new Error(`unexpected escape \\${next ?? '<end>'} at ${i}`);
      value += next;
      i += 2;
    } else if (c === "'") {
      if (text[i + 1] === "'") throw new Error(`doubled quote at ${i}: ClickHouse reads it as one quote inside the literal`);
      return { value, end: i + 1 };
    } else {
      value += c;
      i += 1;
    }
  }
  throw new Error('unterminated string literal');
}
