/**
 * A row judged in a worker thread (judging/threaded.ts) reaches the
 * driver as bytes: every column of its insert but the last, ingested_at,
 * which only the flush knows (ingest/writer.ts stamps it). The driver holds
 * it as a handle: the few fields it and the stores read of a row outside
 * the insert body (the Kafka columns; an envelope's loop_id, seq, verdict
 * and kind_class, and on the row that moves its loop's head furthest in a
 * batch the loop_heads fields; a craze event's verdict and
 * subagent_change), and where its bytes are. An insert writes a handle's
 * bytes as they are, then its ingested_at. One class, every field set in
 * the constructor: every handle has the same shape, which keeps the code
 * that reads rows fast.
 */
export class EncodedRow {
  ingested_at = '';
  hash = '';
  computed_hash = '';
  time_text = '';

  constructor(
    /** The format of its bytes: an insert in another format refuses it (store/insert-format.ts). */
    readonly format: 'TabSeparated' | 'RowBinary',
    /** The row's columns but the last are `block[start, end)`, in `format`. */
    readonly block: Buffer,
    readonly start: number,
    readonly end: number,
    readonly kafka_topic: string,
    readonly kafka_partition: number,
    readonly kafka_offset: string,
    readonly verdict: string,
    readonly loop_id: string | undefined,
    readonly seq: number | undefined,
    readonly kind_class: string | undefined,
    readonly subagent_change: string | undefined,
  ) {}
}

/** The handle `row` is, if it is one. */
export const encodedOf = (row: object): EncodedRow | undefined => (row instanceof EncodedRow ? row : undefined);
