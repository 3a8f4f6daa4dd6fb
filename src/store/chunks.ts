/**
 * The buffer both insert formats write into (tsv.ts, rowbinary.ts): bytes go
 * straight into a reused chunk, and a chunk is handed on only when it is full
 * or taken. No string or Buffer per field or per row: on ingest's path the
 * body's building is a tenth of the batch step, and an allocation per field
 * showed in its profiles.
 */

/** The bytes of a chunk, before it is handed on (larger when one field needs more). */
const CHUNK_BYTES = 256 * 1024;

export class ChunkWriter {
  protected buf = Buffer.allocUnsafe(CHUNK_BYTES);
  protected pos = 0;
  private readonly chunks: Buffer[] = [];
  /** Bytes of the chunks handed on or waiting in `chunks`: `written` without the current one. */
  private sealed = 0;

  /** Room for `bytes` more: the full part of the buffer becomes a chunk, writing goes on in a new one. */
  protected room(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    if (this.pos > 0) this.seal();
    this.buf = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, bytes));
    this.pos = 0;
  }

  private seal(): void {
    this.chunks.push(this.buf.subarray(0, this.pos));
    this.sealed += this.pos;
  }

  /** Bytes written as they are (a row a worker thread encoded: rows/encoded.ts). */
  raw(from: Buffer, start: number, end: number): void {
    this.room(end - start);
    this.pos += from.copy(this.buf, this.pos, start, end);
  }

  /** One byte. */
  byte(b: number): void {
    this.room(1);
    this.buf[this.pos++] = b;
  }

  /** Bytes appended since the writer was made. */
  get written(): number {
    return this.sealed + this.pos;
  }

  /**
   * The bytes written since the last take(), as chunks. A chunk is never
   * written again: the rest of its buffer goes on as the next one.
   */
  take(): Buffer[] {
    if (this.pos > 0) {
      this.seal();
      this.buf = this.buf.subarray(this.pos);
      this.pos = 0;
    }
    return this.chunks.splice(0);
  }

  /**
   * The bytes written since the last take(), as one Buffer over memory of
   * its own (never a slice of Node's shared pool): what is transferred to
   * another thread (src/judging/).
   */
  takeOwned(): Buffer {
    const chunks = this.take();
    let size = 0;
    for (const c of chunks) size += c.length;
    const owned = Buffer.from(new ArrayBuffer(size));
    let at = 0;
    for (const c of chunks) at += c.copy(owned, at);
    return owned;
  }
}
