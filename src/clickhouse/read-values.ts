/**
 * What the typed reads share: how a 64-bit integer arrives, a LIMIT, a
 * DateTime bound, ClickHouse's String order.
 *
 * ClickHouse writes 64-bit integers into JSON as strings. Money and token sums
 * stay exact in the reads: a bigint, or the decimal string ClickHouse computed
 * from Decimal128. Only counts that cannot pass 2^53 in practice become numbers.
 */

/** No LIMIT: ClickHouse's LIMIT takes a UInt64, and no table holds this many rows. */
const NO_LIMIT = 2n ** 64n - 1n;

/**
 * A row count for `LIMIT {limit:UInt64}`: a whole number, or undefined for no
 * limit. One beyond 2^53 is not exact as a number; it means "all" as much as
 * NO_LIMIT does (and String() would write 1e21 and up in exponent form).
 */
export function limitParam(limit: number | undefined): bigint {
  if (limit === undefined) return NO_LIMIT;
  if (!Number.isInteger(limit) || limit < 0) throw new RangeError(`limit ${limit} is not a whole number`);
  return limit > Number.MAX_SAFE_INTEGER ? NO_LIMIT : BigInt(limit);
}

/** A 64-bit integer as ClickHouse writes it into JSON: a string (or a number when quoting is turned off). */
export type Int64Json = string | number;

/** DateTime's last second (2106-02-07 06:28:15 UTC): no stored time is later. */
export const DATETIME_MAX_SECONDS = 2 ** 32 - 1;

/** A Decimal128 sum read as text ('' when ANY LEFT JOIN found no row): exact. */
export const decimalText = (text: string): bigint => (text === '' ? 0n : BigInt(text));

/** Byte order of UTF-8 text, ClickHouse's order of String. */
export const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
