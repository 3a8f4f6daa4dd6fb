/**
 * JSONL input split into lines with a cap on each line's size: the one line
 * reader of `verify` and `craze push`. node:readline (and reading a whole file)
 * holds a line whole before anyone can judge it, so a 1 GiB line ends in a
 * RangeError or GiBs of memory; this splitter keeps at most MAX_LINE_BYTES of
 * a line and, past the cap, only counts the bytes until the next newline.
 */
/**
 * The longest line read, in bytes before its newline: 16 MiB, the
 * max.message.bytes agentledger gives its topics (sources/kafka.ts
 * TOPIC_CONFIG). A longer line could never have been one record of them, so
 * it is reported unread instead of being held in memory.
 */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
/** `line of N bytes exceeds the 16 MiB cap`: the reason both readers give. */
export function oversizedReason(line, cap) {
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
    cap;
    held = [];
    heldBytes = 0;
    /** Bytes of the current line so far, held or (past the cap) dropped. */
    length = 0;
    number = 0;
    /** Input offset of the current line's first byte. */
    start;
    constructor(cap = MAX_LINE_BYTES, 
    /** Offset of the first byte fed, when the input starts mid-file. */
    startOffset = 0) {
        this.cap = cap;
        this.start = startOffset;
    }
    /** Bytes of the unfinished line held in memory (never above the cap). */
    get buffered() {
        return this.heldBytes;
    }
    push(chunk) {
        const items = [];
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
    end() {
        return this.length > 0 ? [this.finish(false)] : [];
    }
    take(chunk, from, to) {
        if (to === from)
            return;
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
    finish(terminated) {
        this.number++;
        const end = this.start + this.length + (terminated ? 1 : 0);
        const position = { number: this.number, start: this.start, end, terminated };
        let item;
        if (this.length > this.cap) {
            item = { kind: 'oversized', length: this.length, ...position };
        }
        else {
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
export async function* readLines(input, cap = MAX_LINE_BYTES, startOffset = 0) {
    const splitter = new LineSplitter(cap, startOffset);
    for await (const chunk of input)
        yield* splitter.push(chunk);
    yield* splitter.end();
}
//# sourceMappingURL=lines.js.map