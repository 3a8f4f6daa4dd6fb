/**
 * The 18 payload kinds of the loop runtime (seed `loop-runtime-event-types.go.txt`),
 * with the JSON names of the Go struct tags.
 *
 * A payload is validated against its kind's member types over `JSON.parse`'s
 * result (by hand on the hot path; a zod schema gives the reason for a
 * refusal; unknown members ignored, absent members read as Go's zero value), then read
 * exactly from its text: integers (Go int/int64/uint64) as bigint from their
 * digits, USD amounts (float64) as picodollars from their decimal text, and
 * `json.RawMessage` members as the producer's own text.
 */
import { z } from 'zod';
import { exactIntegerText, INT64_MAX, INT64_MIN, UINT64_MAX } from '../money/int64-text.js';
import { usdTextToPico } from '../money/picodollars.js';
import { objectMembers } from './json-spans.js';
import { LONE_SURROGATE, malformed, ok } from './result.js';
const specs = {
    LoopStarted: { name: 'string', initial_state: 'raw', seed: 'int', config_hash: 'string', parent_id: 'string', depth: 'int' },
    IterationStarted: { iteration: 'int' },
    ActionRequested: { action_id: 'string', action_type: 'string', action_payload: 'raw' },
    PolicyDecided: { action_id: 'string', decision: 'string', capability: 'string', tool: 'string', reason: 'string' },
    ModelCalled: {
        action_id: 'string',
        request: 'raw',
        response: 'raw',
        usage: 'usage',
        provider: 'string',
        model: 'string',
        duration_ms: 'int',
    },
    ToolCalled: {
        action_id: 'string',
        tool: 'string',
        args: 'raw',
        result: 'raw',
        is_error: 'bool',
        duration_ms: 'int',
        idempotency_key: 'string',
    },
    BudgetCharged: { tokens: 'int', usd: 'usd', wall_clock_ms: 'int', iterations: 'int', action_type: 'string' },
    CompactionApplied: { strategy: 'string', plan_json: 'raw', dropped_from: 'uint', dropped_to: 'uint', summary_ref: 'string' },
    ConvergenceWarning: { detector: 'string', reason: 'string', count: 'int' },
    HumanRequested: { action_id: 'string', prompt: 'string' },
    HumanResponded: { action_id: 'string', response: 'string' },
    Interrupted: { reason: 'string' },
    Resumed: {},
    SnapshotTaken: { seq: 'uint', state_hash: 'string' },
    ForkedFrom: { source_loop_id: 'string', at_seq: 'uint' },
    SubAgentSpawned: { child_loop_id: 'string', definition: 'string', request: 'raw' },
    SubAgentCompleted: {
        child_loop_id: 'string',
        definition: 'string',
        outcome_kind: 'string',
        resp_json: 'raw',
        error: 'string',
        child_spend: 'raw',
    },
    LoopFinished: { outcome_kind: 'string', result: 'raw', error: 'string', total_spend: 'raw' },
};
export const KIND_NAMES = Object.keys(specs);
/**
 * Kind spellings are classified ignoring case and the separators `_ . -`
 * (`model_called` is ModelCalled); the verbatim text is what gets hashed.
 */
const byNormalized = new Map(KIND_NAMES.map((k) => [k.toLowerCase(), k]));
export function classifyKind(kind) {
    return byNormalized.get(kind.replace(/[_.-]/g, '').toLowerCase());
}
// Not z.int(): zod 4 limits it to safe integers, and int64 fields (a seed, a
// token count) go beyond 2^53; their exact digits are read from the text below.
const integer = z.number().refine(Number.isInteger, 'expected an integer');
const fieldSchemas = {
    string: z.string().optional(),
    bool: z.boolean().optional(),
    int: integer.optional(),
    uint: integer.refine((n) => n >= 0, 'expected an unsigned integer').optional(),
    raw: z.unknown().optional(),
    usd: z.number().optional(),
    usage: z
        .object({ in: integer.optional(), out: integer.optional(), cost_usd: z.number().optional() })
        .optional()
        .nullable(),
};
const schemas = new Map(KIND_NAMES.map((kind) => {
    const shape = {};
    for (const [field, type] of Object.entries(specs[kind]))
        shape[field] = fieldSchemas[type];
    return [kind, z.looseObject(shape)];
}));
/** Each kind's members and their types, listed once (not per payload). */
const FIELDS = new Map(KIND_NAMES.map((kind) => [kind, Object.entries(specs[kind])]));
const isInteger = (v) => typeof v === 'number' && Number.isInteger(v);
/** Whether a member's value is of its field's type, as fieldSchemas says (absent is fine; null only for usage). */
function fits(type, v) {
    if (v === undefined)
        return true;
    switch (type) {
        case 'string':
            return typeof v === 'string';
        case 'bool':
            return typeof v === 'boolean';
        case 'int':
            return isInteger(v);
        case 'uint':
            return isInteger(v) && v >= 0;
        case 'raw':
            return true;
        case 'usd':
            return typeof v === 'number';
        case 'usage': {
            if (v === null)
                return true;
            if (typeof v !== 'object' || Array.isArray(v))
                return false;
            const u = v;
            return (u.in === undefined || isInteger(u.in)) && (u.out === undefined || isInteger(u.out)) && (u.cost_usd === undefined || typeof u.cost_usd === 'number');
        }
    }
}
/**
 * The kind's schema, checked by hand on the hot path: true only where zod
 * would accept (test/unit/decode-payloads.test.ts holds it to that).
 */
function typesFit(kind, obj) {
    for (const [field, type] of FIELDS.get(kind))
        if (!fits(type, obj[field]))
            return false;
    return true;
}
/** Whether zod's schema for `kind` takes `parsed` (for the tests that hold the hand check to it). */
export function schemaTakes(kind, parsed) {
    return schemas.get(kind).safeParse(parsed).success;
}
/** Whether the hand check takes `parsed` (an object). */
export function handCheckTakes(kind, parsed) {
    return typesFit(kind, parsed);
}
const ZERO_USD = { text: '0', pico: 0n };
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const PLAIN_INTEGER = /^-?\d+$/;
function exactInt(text, field, unsigned) {
    if (text === undefined || text === 'null')
        return 0n;
    // Plain digits, as Go writes integers: read directly (the hot path).
    const plain = PLAIN_INTEGER.test(text);
    const v = plain ? BigInt(text) : exactIntegerText(text);
    // JSON allows 1e3 or 5.0 for an integer. Another spelling than plain
    // digits came through a float: beyond 2^53 its digits may already be
    // rounded, and it is refused as not exact.
    if (v === undefined || (!plain && (v > MAX_SAFE || v < -MAX_SAFE)))
        return `${field}: ${text} is not an exact integer`;
    if (unsigned ? v > UINT64_MAX || v < 0n : v > INT64_MAX || v < INT64_MIN) {
        return `${field}: ${text} does not fit ${unsigned ? 'uint64' : 'int64'}`;
    }
    return v;
}
function exactUsd(text, field) {
    if (text === undefined || text === 'null')
        return ZERO_USD;
    const pico = usdTextToPico(text);
    if (pico === undefined)
        return `${field}: ${text} is not a number`;
    // One event's amount is stored as Int64 picodollars (about ±$9.2M): refused
    // beyond, never wrapped or clamped. Here, so `verify` and ingest agree.
    if (pico > INT64_MAX || pico < INT64_MIN)
        return `${field}: ${text} USD is ${pico} picodollars, beyond Int64 (about ±$9.2M per event)`;
    return { text, pico };
}
/**
 * Decodes one payload of a known kind from its exact text. `parsed` is
 * `JSON.parse(text)`, done once by the caller.
 */
export function decodePayload(kind, text, parsed) {
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        return malformed(`${kind} payload is not a JSON object`);
    }
    if (!typesFit(kind, parsed)) {
        // Only a payload the hand check refuses is given to zod, for its reason.
        const checked = schemas.get(kind).safeParse(parsed);
        if (!checked.success) {
            const issue = checked.error.issues[0];
            return malformed(`${kind} payload: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
        }
    }
    const members = objectMembers(text);
    const obj = parsed;
    // Only a \u escape can carry a lone surrogate (the text is valid UTF-8).
    const escapes = text.includes('\\u');
    const out = { kind };
    for (const [field, type] of FIELDS.get(kind)) {
        const raw = members.get(field);
        let value;
        switch (type) {
            case 'string':
                value = (obj[field]) ?? '';
                // String members become columns (account/loop-facts.ts); the record's
                // own check cannot see into a base64 payload.
                if (escapes && LONE_SURROGATE.test(value)) {
                    return malformed(`${kind} payload: ${field} holds a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), which ClickHouse cannot store`);
                }
                break;
            case 'bool':
                value = (obj[field]) ?? false;
                break;
            case 'raw':
                value = raw ?? '';
                break;
            case 'int':
            case 'uint':
                value = exactInt(raw, field, type === 'uint');
                break;
            case 'usd':
                value = exactUsd(raw, field);
                break;
            case 'usage': {
                const usage = raw === undefined || raw === 'null' ? new Map() : objectMembers(raw);
                const tokensIn = exactInt(usage.get('in'), 'usage.in', false);
                const tokensOut = exactInt(usage.get('out'), 'usage.out', false);
                const cost = exactUsd(usage.get('cost_usd'), 'usage.cost_usd');
                for (const v of [tokensIn, tokensOut, cost])
                    if (typeof v === 'string')
                        return malformed(`${kind} payload: ${v}`);
                value = { in: tokensIn, out: tokensOut, cost_usd: cost };
                break;
            }
        }
        if (typeof value === 'string' && (type === 'int' || type === 'uint' || type === 'usd')) {
            return malformed(`${kind} payload: ${value}`);
        }
        out[field] = value;
    }
    return ok(out);
}
//# sourceMappingURL=payloads.js.map