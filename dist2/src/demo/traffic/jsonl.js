/** Traffic written to a file, as the input `agentledger verify` reads. */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
/**
 * Writes record values as JSONL, one per line in the given order: the input
 * `agentledger verify` reads. Returns the number of lines. A value holding a
 * newline cannot be a line and is refused.
 */
export async function writeTrafficJsonl(path, records) {
    const out = createWriteStream(path);
    const failed = new Promise((_, reject) => out.once('error', reject));
    failed.catch(() => undefined);
    let lines = 0;
    try {
        for (const r of records) {
            if (r.value.includes(0x0a))
                throw new RangeError(`record ${lines + 1} holds a newline: it cannot be a JSONL line`);
            out.write(r.value);
            const more = out.write('\n');
            lines++;
            if (!more)
                await Promise.race([once(out, 'drain'), failed]);
        }
    }
    finally {
        out.end();
    }
    await Promise.race([once(out, 'finish'), failed]);
    return lines;
}
//# sourceMappingURL=jsonl.js.map