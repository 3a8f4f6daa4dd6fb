import { createReadStream } from 'node:fs';
import { decodeEnvelope } from '../decode/envelope.js';
import { MAX_LINE_BYTES, oversizedReason, readLines } from '../sources/lines.js';
import { isViolation, SEQ_ENCODING_SETTING } from '../verify/chain.js';
import { MemoryChains } from '../verify/memory-chains.js';
import { parseOptions, UsageError } from './command.js';
import { printable } from './terminal.js';
/** LoopID and Seq of a record that failed to decode, where they can be read at all. */
function bestEffortKey(line) {
    try {
        const v = JSON.parse(line);
        return { loopId: typeof v.LoopID === 'string' ? v.LoopID : '', seq: typeof v.Seq === 'number' && Number.isSafeInteger(v.Seq) ? v.Seq : 0 };
    }
    catch {
        return { loopId: '', seq: 0 };
    }
}
/** ASCII whitespace only, or empty: a blank line between records, skipped uncounted. */
function isBlank(bytes) {
    return bytes.every((b) => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0b || b === 0x0c);
}
/** A failure of the input itself (missing file, a directory, EIO), as opposed to a fault of this code. */
function isReadError(err) {
    return err instanceof Error && typeof err.syscall === 'string';
}
export const verifyCommand = {
    name: 'verify',
    summary: 'verify loop-runtime hash chains in JSONL files, offline',
    help: `Usage: agentledger verify FILE... [--json]

Reads JSONL files (\`-\` for stdin), one Kafka record value of the agent.envelopes
topic per line, in topic order, and checks every link of every loop's SHA-256
chain with the same code as \`agentledger ingest\`.

Verdicts: ok, duplicate (a redelivery: allowed), fork (a second version of a
seq), mismatch (carried hash != recomputed), gap, regression (a seq below the
head never seen), time_regression, malformed (the line cannot be decoded).

A line longer than ${MAX_LINE_BYTES / (1024 * 1024)} MiB (the largest record agentledger's topics
accept) is not read: it counts as a malformed envelope and the file goes on.

Output: a summary and one line per violation, with control characters in ids
and details escaped (\\x1b, \\n, \\\\); with --json one object
{"loops", "envelopes", "ok", "duplicates", "violations": [{"loopId", "seq", "verdict", "detail"}]}.
Seq is hashed as 8 bytes big-endian unless ${SEQ_ENCODING_SETTING}=decimal.

Exit code: 0 every chain verifies (duplicates allowed), 1 any other verdict,
2 the input cannot be read.`,
    async run(args, { config, out }) {
        const { values, positionals } = parseOptions(args, { json: { type: 'boolean' } }, true);
        if (positionals.length === 0)
            throw new UsageError('name at least one FILE, or - for stdin');
        const chains = new MemoryChains(config.envelopes.seqEncoding);
        const violations = [];
        let envelopes = 0;
        let okCount = 0;
        let duplicates = 0;
        for (const file of positionals) {
            const input = file === '-' ? process.stdin : createReadStream(file);
            try {
                for await (const line of readLines(input)) {
                    if (line.kind === 'oversized') {
                        envelopes++;
                        violations.push({ loopId: '', seq: 0, verdict: 'malformed', detail: `${file}:${line.number}: ${oversizedReason(line, MAX_LINE_BYTES)}` });
                        continue;
                    }
                    if (isBlank(line.bytes))
                        continue;
                    envelopes++;
                    const decoded = decodeEnvelope(line.bytes, config.envelopes);
                    if (!decoded.ok) {
                        violations.push({ ...bestEffortKey(line.bytes.toString('utf8')), verdict: 'malformed', detail: `${file}:${line.number}: ${decoded.reason}` });
                        continue;
                    }
                    const result = chains.verify(decoded.value);
                    if (result.verdict === 'ok')
                        okCount++;
                    else if (result.verdict === 'duplicate')
                        duplicates++;
                    if (isViolation(result.verdict)) {
                        violations.push({ loopId: decoded.value.loopId, seq: decoded.value.seq, verdict: result.verdict, detail: result.detail });
                    }
                }
            }
            catch (err) {
                if (!isReadError(err))
                    throw err;
                process.stderr.write(`agentledger verify: cannot read ${printable(file)}: ${printable(err.message)}\n`);
                return 2;
            }
        }
        const loops = chains.loopCount;
        if (values.json) {
            out(JSON.stringify({ loops, envelopes, ok: okCount, duplicates, violations }));
        }
        else {
            out(`${loops} loops, ${envelopes} envelopes: ${okCount} ok, ${duplicates} duplicate(s), ${violations.length} violation(s)`);
            for (const v of violations.slice(0, 200))
                out(`  ${v.verdict.padEnd(15)} ${printable(v.loopId)} seq ${v.seq}: ${printable(v.detail)}`);
            if (violations.length > 200)
                out(`  … and ${violations.length - 200} more (use --json for all)`);
            const failedAtOne = new Set(violations.filter((v) => v.verdict === 'mismatch' && v.seq === 1).map((v) => v.loopId));
            if (loops > 0 && failedAtOne.size === loops) {
                out(`hint: every loop fails at Seq 1; if the producer hashed Seq as ${config.envelopes.seqEncoding === 'binary' ? 'decimal text' : '8 bytes big-endian'}, set ${SEQ_ENCODING_SETTING}=${config.envelopes.seqEncoding === 'binary' ? 'decimal' : 'binary'}`);
            }
        }
        return violations.length === 0 ? 0 : 1;
    },
};
//# sourceMappingURL=verify.js.map