/**
 * Kafka record value -> Envelope (docs/input-contracts.md §1). Accepts Go's encoding/json
 * form of the seed struct (Payload base64, Hash an array of 32 numbers) and
 * the variants non-Go producers write (Hash as 64 hex characters, Payload as
 * the canonical JSON text itself). Anything else is `malformed`, with the
 * reason, and never an exception.
 */
import { z } from 'zod';
import { parseRfc3339 } from './time.js';
import { classifyKind, decodePayload } from './payloads.js';
import { idTooLong, malformed, ok, parseJsonValue, utf8Json } from './result.js';
import { lastMemberText } from './json-spans.js';
export const DEFAULT_DECODE_OPTIONS = { maxPayloadBytes: 4 * 1024 * 1024 };
const HEX64 = /^[0-9a-fA-F]{64}$/;
/** An Envelope record's shape, with the reasons a refusal gives (exported for the tests that hold the hand check to it). */
export const recordSchema = z.object({
    LoopID: z.string().min(1, 'LoopID is empty'),
    // Checked in this order so the reason names the real problem (zod 4's int()
    // would call 2^53 + 1 "not an integer").
    Seq: z
        .number({ message: 'Seq is not a number' })
        .refine(Number.isInteger, 'Seq is not an integer')
        .refine((n) => n >= 1, 'Seq must be >= 1 (it is 1-based)')
        .refine((n) => n <= Number.MAX_SAFE_INTEGER, 'Seq is beyond 2^53 - 1: it cannot be read exactly'),
    Time: z.string({ message: 'Time is not a string' }),
    Kind: z.string({ message: 'Kind is not a string' }).min(1, 'Kind is empty'),
    Payload: z.string({ message: 'Payload is not a base64 or JSON string' }),
    // A hand-written check: a zod array-of-refined-numbers inside a union costs
    // more than the SHA-256 it guards (bench/verify-inprocess.ts).
    Hash: z.custom(isHash, 'Hash is neither 32 bytes as numbers nor 64 hex characters'),
});
function isHash(v) {
    if (typeof v === 'string')
        return HEX64.test(v);
    if (!Array.isArray(v) || v.length !== 32)
        return false;
    for (const b of v)
        if (typeof b !== 'number' || !Number.isInteger(b) || b < 0 || b > 255)
            return false;
    return true;
}
/**
 * The record when it is well-formed, checked by hand: what recordSchema
 * accepts, and nothing else it would refuse. zod is asked only about the
 * records this refuses, for its reason (the hot path skips it).
 */
function wellFormed(json) {
    if (typeof json !== 'object' || json === null || Array.isArray(json))
        return undefined;
    const { LoopID, Seq, Time, Kind, Payload, Hash } = json;
    if (typeof LoopID !== 'string' || LoopID.length === 0)
        return undefined;
    if (typeof Seq !== 'number' || !Number.isInteger(Seq) || Seq < 1 || Seq > Number.MAX_SAFE_INTEGER)
        return undefined;
    if (typeof Time !== 'string' || typeof Kind !== 'string' || Kind.length === 0 || typeof Payload !== 'string')
        return undefined;
    if (!isHash(Hash))
        return undefined;
    return { LoopID, Seq, Time, Kind, Payload, Hash: Hash };
}
/** The values of base64's standard alphabet by character code (-1: not in it). */
const BASE64_VALUE = new Int8Array(128).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries())
    BASE64_VALUE[c.charCodeAt(0)] = i;
/**
 * Whether `text` is canonical base64 (standard alphabet, padded, zero spare
 * bits): exactly the texts that decode to `decoded` and encode back to
 * themselves, found without encoding again. Buffer.from skips what is not
 * base64, so every character was taken when the decoded length is the one
 * the text's length and padding promise; it also reads the URL-safe
 * alphabet, which is refused here.
 */
export function isCanonicalBase64(text, decoded) {
    const n = text.length;
    if (n % 4 !== 0)
        return false;
    const pad = n === 0 ? 0 : text.charCodeAt(n - 1) !== 61 ? 0 : text.charCodeAt(n - 2) !== 61 ? 1 : 2;
    if (decoded.length !== (n / 4) * 3 - pad)
        return false;
    const equals = text.indexOf('=');
    if (equals !== -1 && equals < n - pad)
        return false;
    if (text.includes('-') || text.includes('_'))
        return false;
    if (pad === 0)
        return true;
    // The last character before the padding carries bits past the data's end: they must be 0.
    const last = BASE64_VALUE[text.charCodeAt(n - pad - 1)] ?? -1;
    return last >= 0 && (last & (pad === 1 ? 0b11 : 0b1111)) === 0;
}
export function decodeEnvelope(value, options = DEFAULT_DECODE_OPTIONS) {
    const parsed = parseJsonValue(value);
    if (!parsed.ok)
        return parsed;
    const { json } = parsed.value;
    let r = wellFormed(json);
    if (r === undefined) {
        const rec = recordSchema.safeParse(json);
        if (rec.success) {
            r = rec.data; // wellFormed refuses nothing zod takes (test/unit/decode/envelope.test.ts); kept safe anyway
        }
        else {
            const issue = rec.error.issues[0];
            const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
            return malformed(`${where}${issue?.message ?? 'not an Envelope'}`);
        }
    }
    // Seq is hashed as the integer it is: read from its digits, not through a
    // float, which takes 1.0000000000000001, 1.0 and 1e0 as 1.
    const seqText = lastMemberText(parsed.value.text, 'Seq');
    if (seqText === undefined || !/^[1-9][0-9]*$/.test(seqText))
        return malformed(`Seq ${JSON.stringify((seqText ?? '').slice(0, 40))} is not a whole number written in digits`);
    // The LoopID is the chain's key and is read back in IN lists: capped (MAX_ID_BYTES).
    const tooLong = idTooLong('LoopID', r.LoopID);
    if (tooLong)
        return malformed(tooLong);
    const time = parseRfc3339(r.Time);
    if (!time)
        return malformed(`Time ${JSON.stringify(r.Time.slice(0, 64))} is not RFC 3339`);
    let payload;
    if (r.Payload.startsWith('{')) {
        payload = Buffer.from(r.Payload, 'utf8');
    }
    else {
        if (r.Payload.length > (options.maxPayloadBytes * 4) / 3 + 4)
            return malformed(`payload larger than ${options.maxPayloadBytes} bytes`);
        payload = Buffer.from(r.Payload, 'base64');
        if (!isCanonicalBase64(r.Payload, payload))
            return malformed('Payload is neither base64 nor a JSON object text');
    }
    if (payload.length > options.maxPayloadBytes)
        return malformed(`payload larger than ${options.maxPayloadBytes} bytes`);
    const read = utf8Json(payload, 'payload');
    if (!read.ok)
        return read;
    const { text: payloadText, json: parsedPayload } = read.value;
    const kindClass = classifyKind(r.Kind);
    let body;
    if (kindClass) {
        const decoded = decodePayload(kindClass, payloadText, parsedPayload);
        if (!decoded.ok)
            return decoded;
        body = decoded.value;
    }
    const hash = typeof r.Hash === 'string' ? Buffer.from(r.Hash, 'hex') : Buffer.from(r.Hash);
    return ok({ loopId: r.LoopID, seq: r.Seq, timeText: r.Time, time, kind: r.Kind, kindClass, payload, payloadText, body, hash });
}
//# sourceMappingURL=envelope.js.map