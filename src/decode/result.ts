/**
 * A pipeline step returns a typed result instead of throwing: exceptions are
 * for infrastructure faults only, so one bad record can never stop a consumer.
 */
export type Decoded<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

export const ok = <T>(value: T): Decoded<T> => ({ ok: true, value });
export const malformed = <T = never>(reason: string): Decoded<T> => ({ ok: false, reason });

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The first step of every record decoder: a Kafka record value that is
 * non-empty, valid UTF-8 and JSON, or the reason it is not.
 */
export function parseJsonValue(value: Buffer | null): Decoded<{ readonly text: string; readonly json: unknown }> {
  if (value === null || value.length === 0) return malformed('empty record value');
  let text: string;
  try {
    text = utf8.decode(value);
  } catch {
    return malformed('record value is not valid UTF-8');
  }
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch (err) {
    return malformed(`record value is not JSON: ${(err as Error).message}`);
  }
  // Only a \u escape can carry a lone surrogate (UTF-8 bytes cannot), so
  // the walk is skipped for the records without one.
  if (text.includes('\\u') && holdsLoneSurrogate(json)) {
    return malformed('record holds a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), which ClickHouse cannot store');
  }
  return ok({ text, json });
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether any string (or key) of a parsed JSON value holds an unpaired surrogate. */
function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(holdsLoneSurrogate);
  if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) if (LONE_SURROGATE.test(k) || holdsLoneSurrogate(v)) return true;
  }
  return false;
}
