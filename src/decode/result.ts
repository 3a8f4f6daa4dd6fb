/**
 * A pipeline step returns a typed result instead of throwing: exceptions are
 * for infrastructure faults only, so one bad record can never stop a consumer.
 */
export type Decoded<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

export const ok = <T>(value: T): Decoded<T> => ({ ok: true, value });
export const malformed = <T = never>(reason: string): Decoded<T> => ({ ok: false, reason });
