/**
 * JSONL input split into lines with a cap on each line's size: the one line
 * reader of `verify` and `craze push`. node:readline (and reading a whole file)
 * holds a line whole before anyone can judge it, so a 1 GiB line ends in a
 * RangeError or GiBs of memory; this splitter keeps at most MAX_LINE_BYTES of
 * a line and, past the cap, only counts the bytes until the next newline.
 */

/**
 * The longest line read, in bytes before its newline: 16 MiB, the
 * max.message.bytes agentledger gives its topics (src/kafka/client.ts
 * TOPIC_CONFIG). A longer line could never have been one record of them, so
 * it is reported unread instead of being held in memory.
 */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** Where a line sits in the input: 1-based number, byte offsets of its first byte and just past its newline. */
interface Position {
  readonly number: number;
  readonly start: number;
  readonly end: number;
  /** False for the last line of an input that does not end with a newline. */
  readonly terminated: boolean;
}

/** A line within the cap: its bytes without the newline and without a CR before it. */
export interface Line extends Position {
  readonly kind: 'line';
  readonly bytes: Buffer;
}

/** A line over the cap: only its length (bytes before the newline) is known. */
export interface OversizedLine extends Position {
  readonly kind: 'oversized';
  readonly length: number;
}

export type LineItem = Line | OversizedLine;

/** `line of N bytes exceeds the 16 MiB cap`: the reason both readers give. */
export function oversizedReason(line: OversizedLine, cap: number): string {
  const mib = cap / (1024 * 1024);
  return `line of ${line.length} bytes exceeds the ${Number.isInteger(mib) ? `${mib} MiB` : `${cap} byte`} cap`;
}

const NEWLINE = 0x0a;
const CR = 0x0d;

/**
 * Push-style splitter: feed chunks as they arrive, get back the lines they
 * complete. It holds at most `cap` bytes of the line in progress, whatever
 * the input, and splits on bytes, so a multibyte character cut between
 * chunks is whole in its line.
 */
export class LineSplitter {
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** Bytes of the current line so far, held or (past the cap) dropped. */
  private length = 0;
  private number = 0;
  /** Input offset of the current line's first byte. */
  private start: number;

  constructor(
    private readonly cap = MAX_LINE_BYTES,
    /** Offset of the first byte fed, when the input starts mid-file. */
    startOffset = 0,
  ) {
    this.start = startOffset;
  }

  /** Bytes of the unfinished line held in memory (never above the cap). */
  get buffered(): number {
    return this.heldBytes;
  }

  push(chunk: Uint8Array): LineItem[] {
    const items: LineItem[] = [];
    let from = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl >= 0; nl = chunk.indexOf(NEWLINE, from)) {
      this.take(chunk, from, nl);
      items.push(this.finish(true));
      from = nl + 1;
    }
    this.take(chunk, from, chunk.length);
    return items;
  }

  /** The input ended: its last line, if it did not end with a newline. */
  end(): LineItem[] {
    return this.length > 0 ? [this.finish(false)] : [];
  }

  private take(chunk: Uint8Array, from: number, to: number): void {
    if (to === from) return;
    this.length += to - from;
    if (this.length > this.cap) {
      // Over the cap: what is held can never become a line; let it go.
      this.held = [];
      this.heldBytes = 0;
      return;
    }
    // A copy, so a held slice does not keep the caller's whole chunk alive.
    this.held.push(Buffer.from(chunk.subarray(from, to)));
    this.heldBytes += to - from;
  }

  private finish(terminated: boolean): LineItem {
    this.number++;
    const end = this.start + this.length + (terminated ? 1 : 0);
    const position = { number: this.number, start: this.start, end, terminated };
    let item: LineItem;
    if (this.length > this.cap) {
      item = { kind: 'oversized', length: this.length, ...position };
    } else {
      const bytes = Buffer.concat(this.held, this.heldBytes);
      // CRLF files: the CR is part of the line ending, as node:readline reads it.
      item = { kind: 'line', bytes: terminated && bytes.at(-1) === CR ? bytes.subarray(0, -1) : bytes, ...position };
    }
    this.held = [];
    this.heldBytes = 0;
    this.length = 0;
    this.start = end;
    return item;
  }
}

/** The lines of a byte stream (a file or stdin read stream), one at a time. */
export async function* readLines(input: AsyncIterable<Uint8Array>, cap = MAX_LINE_BYTES, startOffset = 0): AsyncGenerator<LineItem> {
  const splitter = new LineSplitter(cap, startOffset);
  for await (const chunk of input) yield* splitter.push(chunk);
  yield* splitter.end();
}
