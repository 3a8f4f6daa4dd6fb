/**
 * The craze codec event (schema/craze-event.schema.json, codec version 1):
 * its 19 known types and every member an event may carry, with the schema's
 * JSON names. The `state` member's sections are in craze-state.ts; how
 * tolerantly all of it is read, and the decoding, in craze.ts.
 */
import { z } from 'zod';
import { bool, nonNegative, smallInt, str, strings, time } from './craze-fields.js';
import { pluginCommandSchema, stateSchema } from './craze-state.js';
export const CRAZE_EVENT_TYPES = [
    'text',
    'thought',
    'tool',
    'todos',
    'permission',
    'question',
    'plan',
    'done',
    'error',
    'meta',
    'user',
    'subagent',
    'queue',
    'command',
    'foreign_turn',
    'replay',
    'turn',
    'ask',
    'compaction',
];
export const KNOWN_TYPES = new Set(CRAZE_EVENT_TYPES);
// --- nested shapes ($defs), with the schema's JSON names ---------------------
const toolOutputSchema = z.object({
    /** Present, 0 included, whenever the tool reported one; undefined otherwise. */
    exitCode: smallInt.optional(),
    stdout: str,
    stderr: str,
    content: str,
    stdoutHead: str,
    stderrHead: str,
    truncated: bool,
});
const diffSchema = z.object({
    path: str,
    oldText: str,
    newText: str,
    added: smallInt.default(0),
    removed: smallInt.default(0),
    truncated: bool,
});
const taskSchema = z.object({
    description: str,
    prompt: str,
    model: str,
    agentId: str,
    subagentType: str,
    durationMs: smallInt.default(0),
    receipt: bool,
    status: str,
    background: bool,
});
const toolEventSchema = z.object({
    id: str,
    name: str,
    status: str,
    kind: str,
    title: str,
    toolName: str,
    rawInput: str,
    contentText: str,
    locations: strings,
    output: toolOutputSchema.optional(),
    diffs: z.array(diffSchema).default([]),
    /** Its presence, even empty, marks the tool a task. */
    task: taskSchema.optional(),
    at: time,
});
const todoSchema = z.object({ id: str, content: str, status: str });
const permissionOptionSchema = z.object({ optionId: str, name: str, kind: str });
const permissionSchema = z.object({
    id: str,
    tool: str,
    options: z.array(permissionOptionSchema).default([]),
});
const optionSchema = z.object({ id: str, label: str, description: str });
const questionItemSchema = z.object({
    id: str,
    prompt: str,
    options: z.array(optionSchema).default([]),
    allowMultiple: bool,
});
/** Question id -> chosen option ids; null (a nil list) is kept apart from []. */
const answersSchema = z.record(z.string(), z.array(z.string()).nullable());
const questionSchema = z.object({
    id: str,
    title: str,
    questions: z.array(questionItemSchema).default([]),
    auto: bool,
    answers: answersSchema.optional(),
});
const planSchema = z.object({
    id: str,
    name: str,
    overview: str,
    plan: str,
    todos: z.array(todoSchema).default([]),
    auto: bool,
    accepted: bool,
});
const subagentSchema = z.object({
    id: str,
    attemptId: str,
    parentId: str,
    toolCallId: str,
    description: str,
    subagentType: str,
    model: str,
    /** running, completed, failed, cancelled — open. */
    status: str,
    error: str,
    prompt: str,
    output: str,
    activity: str,
    startedAt: time,
    endedAt: time,
    durationMs: smallInt.default(0),
    toolCalls: smallInt.default(0),
    turns: smallInt.default(0),
    /** Not spend: the sub-agent's usage is already inside the parent's session. */
    tokensUsed: smallInt.default(0),
    toolsUsed: strings,
    transcript: bool,
    background: bool,
});
const queuedSchema = z.object({
    id: str,
    text: str,
    queuedAt: time,
    version: nonNegative.default(0),
});
const commandSchema = z.object({
    pluginCommand: pluginCommandSchema.optional(),
    path: str,
    text: str,
});
const foreignTurnSchema = z.object({
    id: str,
    text: str,
    /** Open string; '' is grok's interjection fallback. */
    reason: str,
    running: bool,
});
const turnSchema = z.object({
    id: str,
    phase: str,
    text: str,
    origin: str,
    stopReason: str,
    errClass: str,
    err: str,
    synthetic: bool,
    next: str,
    pending: nonNegative.default(0),
});
const askBodySchema = z.object({
    permission: permissionSchema.optional(),
    question: questionSchema.optional(),
    plan: planSchema.optional(),
});
const askSchema = z.object({
    id: str,
    kind: str,
    outcome: str,
    by: str,
    optionId: str,
    answers: answersSchema.optional(),
    skip: bool,
    accepted: bool,
    label: str,
    body: askBodySchema.optional(),
});
const replaySchema = z.object({ phase: str });
const compactionSchema = z.object({
    phase: str,
    /** auto, manual, overflow — open. */
    reason: str,
    tokensBefore: nonNegative.default(0),
    tokensAfter: nonNegative.default(0),
    err: str,
});
/** All three keys required; `class` is open. */
const errorSchema = z.object({
    message: z.string(),
    class: z.string(),
    code: smallInt,
});
/** Every member of an event but `type`. */
export const eventShape = {
    text: str,
    mode: str,
    agent: str,
    tool: toolEventSchema.optional(),
    todos: z.array(todoSchema).default([]),
    permission: permissionSchema.optional(),
    question: questionSchema.optional(),
    plan: planSchema.optional(),
    subagent: subagentSchema.optional(),
    subagentChange: str,
    queue: queuedSchema.optional(),
    queueChange: str,
    queuePos: nonNegative.default(0),
    command: commandSchema.optional(),
    interjection: bool,
    foreignTurn: foreignTurnSchema.optional(),
    turn: turnSchema.optional(),
    ask: askSchema.optional(),
    state: stateSchema.optional(),
    replay: replaySchema.optional(),
    replayed: bool,
    compaction: compactionSchema.optional(),
    cause: str,
    err: errorSchema.optional(),
    stopReason: str,
    at: time,
};
export const eventFieldsSchema = z.object(eventShape);
//# sourceMappingURL=craze-event.js.map