/**
 * Kafka record value -> craze codec event (docs/input-contracts.md §2). The record is
 * `{"sessionId", "incarnation", "seq", "event", "journal"?}`; `event` is one
 * object of craze's lossless event codec (schema/craze-event.schema.json,
 * craze's internal/agent/eventcodec.go, codec version 1).
 *
 * Read the way craze's own decoder reads it, which is more tolerant than the
 * published schema:
 *  - unknown keys are ignored at every level (the schema says
 *    additionalProperties:false; a newer craze adds keys without bumping the
 *    codec version);
 *  - an unknown event `type` is kept, as `known: false`, with whichever of the
 *    known fields parse (the schema's enum would reject it);
 *  - absent means zero: absent strings, numbers, booleans and lists read as
 *    '' / 0 / false / []; an absent object is `undefined` and a present one,
 *    `{}` included, is an object (a pointer's presence is kept). The few
 *    scalars whose presence the codec keeps stay `undefined` when absent:
 *    `tool.output.exitCode` and the `state.title/mode/model` sections;
 *  - the open strings (`foreignTurn.reason`, `compaction.reason`, `err.class`,
 *    `turn.errClass`, `subagent.status`, …) are plain strings;
 *  - `state.slash` is read row by row as the schema's description says: a row
 *    that does not match slashItem, or whose name is not one token, is dropped
 *    alone, and a slash or items value that is not an object or an array is a
 *    section with no rows.
 * Everything else the schema says is enforced: types, required keys (every
 * key of `spend`, `usage` and `err`, `catalog.revision`, …), minimums and
 * lengths, RFC 3339 times (up to nanoseconds, as Go writes them).
 *
 * int64 exactness: the token and money integers of `state.usage` (every Spend
 * integer, contextTokens, contextWindow) are read as bigint from their digits
 * in the record text (objectMembers, money/int64-text.ts), never through a
 * float, and must fit int64. The other integers are small counters and codes, read as numbers and
 * malformed unless they are safe integers.
 *
 * The shapes read are declared apart: craze-event.ts (the event types and
 * members), craze-state.ts (the `state` sections, `usage` among them) and
 * craze-fields.ts (the field schemas both are built from). This file decodes.
 */
import { z } from 'zod';
import { eventFieldsSchema, eventShape, KNOWN_TYPES } from './craze-event.js';
import { isObject, str } from './craze-fields.js';
import { SPEND_FIELDS } from './craze-state.js';
import { objectMembers } from './json-spans.js';
import { exactIntegerText } from '../money/int64-text.js';
import { idTooLong, malformed, ok, parseJsonValue } from './result.js';
// --- decoding ------------------------------------------------------------------
function describe(issue, prefix) {
    if (!issue)
        return `${prefix}: invalid`;
    const path = [prefix, ...issue.path.map(String)].filter((p) => p !== '').join('.');
    return `${path}: ${issue.message}`;
}
/** Replaces the number at obj[key] by the exact integer its text denotes. */
function exactInto(obj, texts, key) {
    if (typeof obj[key] !== 'number')
        return;
    const text = texts.get(key);
    const exact = text === undefined ? undefined : exactIntegerText(text);
    if (exact !== undefined)
        obj[key] = exact;
}
/**
 * Puts the exact bigint of every int64 member of `state.usage` into the parsed
 * tree, read from the event's text (a float would round 9007199254740993).
 * A member that is not an integer number is left as it was, for the schema to
 * reject.
 */
function overlayExactIntegers(event, eventText) {
    const state = event.state;
    if (!isObject(state) || !isObject(state.usage))
        return;
    const usage = state.usage;
    const stateText = objectMembers(eventText).get('state');
    const usageText = stateText === undefined ? undefined : objectMembers(stateText).get('usage');
    if (usageText === undefined)
        return;
    const texts = objectMembers(usageText);
    exactInto(usage, texts, 'contextTokens');
    exactInto(usage, texts, 'contextWindow');
    for (const part of ['turn', 'session']) {
        const spend = usage[part];
        const spendText = texts.get(part);
        if (!isObject(spend) || spendText === undefined)
            continue;
        const spendTexts = objectMembers(spendText);
        for (const field of SPEND_FIELDS)
            exactInto(spend, spendTexts, field);
    }
}
/**
 * Decodes one codec event from its parsed value and its exact text (the
 * text `parsed` came from). `where` prefixes the reasons ('event').
 */
function decodeEventValue(parsed, text, where) {
    if (!isObject(parsed))
        return malformed(`${where} is not a JSON object`);
    const type = parsed.type;
    if (type === undefined)
        return malformed(`${where}.type is missing`);
    if (typeof type !== 'string')
        return malformed(`${where}.type is not a string`);
    if (type === '')
        return malformed(`${where}.type is empty`);
    overlayExactIntegers(parsed, text);
    if (KNOWN_TYPES.has(type)) {
        const r = eventFieldsSchema.safeParse(parsed);
        if (!r.success)
            return malformed(describe(r.error.issues[0], where));
        return ok({ ...r.data, type: type, known: true });
    }
    // A newer craze's type: keep it, with each known field that parses.
    const fields = {};
    for (const [key, schema] of Object.entries(eventShape)) {
        const r = schema.safeParse(parsed[key]);
        fields[key] = r.success ? r.data : schema.parse(undefined);
    }
    return ok({ ...fields, type, known: false });
}
/** One codec event from its JSON text (a journal line's `event`, a notification's). */
export function decodeCrazeEvent(text) {
    let parsed;
    try {
        parsed = JSON.parse(text);
    }
    catch (err) {
        return malformed(`event is not JSON: ${err.message}`);
    }
    return decodeEventValue(parsed, text.trim(), 'event');
}
const recordSchema = z.object({
    sessionId: z.string({ message: 'expected a string' }).min(1, 'is empty'),
    incarnation: z.string({ message: 'expected a string' }).min(1, 'is empty'),
    seq: z.number({ message: 'expected a number' }),
    event: z.unknown().optional(),
    journal: z
        .object({ cwd: str, provider: str, crazeVersion: str, file: str }, { message: 'expected an object' })
        .optional(),
});
export function decodeCrazeRecord(value) {
    const parsed = parseJsonValue(value);
    if (!parsed.ok)
        return parsed;
    const { text, json } = parsed.value;
    if (!isObject(json))
        return malformed('record value is not a JSON object');
    const rec = recordSchema.safeParse(json);
    if (!rec.success)
        return malformed(describe(rec.error.issues[0], ''));
    const r = rec.data;
    // Both ids key an incarnation and are read back in IN lists: capped (MAX_ID_BYTES).
    const tooLong = idTooLong('sessionId', r.sessionId) ?? idTooLong('incarnation', r.incarnation);
    if (tooLong)
        return malformed(tooLong);
    const members = objectMembers(text.trim());
    // seq read from its digits: 2^53 + 1 must not round to an acceptable number.
    const seqText = members.get('seq') ?? '';
    const seq = exactIntegerText(seqText);
    if (seq === undefined)
        return malformed(`seq: ${seqText} is not an integer`);
    if (seq < 1n)
        return malformed(`seq: ${seqText} must be >= 1 (it is 1-based)`);
    if (seq > BigInt(Number.MAX_SAFE_INTEGER))
        return malformed(`seq: ${seqText} is beyond 2^53 - 1`);
    const eventText = members.get('event');
    if (r.event === undefined || eventText === undefined)
        return malformed('event is missing');
    const event = decodeEventValue(r.event, eventText, 'event');
    if (!event.ok)
        return event;
    return ok({
        sessionId: r.sessionId,
        incarnation: r.incarnation,
        seq: Number(seq),
        event: event.value,
        eventText,
        journal: r.journal,
    });
}
//# sourceMappingURL=craze.js.map