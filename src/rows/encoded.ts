/**
 * A row judged in a worker thread (pipeline/threaded.ts) reaches the
 * driver as bytes: every column of its insert but the last, ingested_at,
 * which only the flush knows (ingest/writer.ts stamps it). The driver holds
 * it as a handle: an object with the few fields it and the stores read of a
 * row outside the insert body (the Kafka columns; loop_id, seq, verdict,
 * kind_class; and, on the row that moves its loop's head furthest in a
 * batch, the loop_heads fields), and the place of its bytes. An insert
 * writes a handle's bytes as they are, then its ingested_at.
 */

/** Where a handle's bytes are: `block[start, end)`, the row's columns but the last, in its insert format. */
export interface EncodedBytes {
  readonly block: Buffer;
  readonly start: number;
  readonly end: number;
}

const ENCODED = Symbol('encoded row');

/** The bytes of a handle; undefined for a row of fields. */
export function encodedOf(row: object): EncodedBytes | undefined {
  return (row as { [ENCODED]?: EncodedBytes })[ENCODED];
}

/** Makes `row` a handle of `bytes`. */
export function asEncoded<T extends object>(row: T, bytes: EncodedBytes): T {
  (row as { [ENCODED]?: EncodedBytes })[ENCODED] = bytes;
  return row;
}
