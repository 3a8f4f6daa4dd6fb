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
 */
import { z } from 'zod';
import { objectMembers } from './json-spans.js';
import { exactIntegerText, INT64_MAX, INT64_MIN } from '../money/int64-text.js';
import { idTooLong, malformed, ok, parseJsonValue, type Decoded } from './result.js';
import { parseRfc3339 } from './time.js';

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
] as const;
type CrazeEventType = (typeof CRAZE_EVENT_TYPES)[number];
const KNOWN_TYPES: ReadonlySet<string> = new Set(CRAZE_EVENT_TYPES);

// --- field schemas -----------------------------------------------------------

/** A string that may be absent ('' then). */
const str = z.string().default('');
const bool = z.boolean().default(false);
const strings = z.array(z.string()).default([]);

/** Counters and codes: integers (5.0 and 1e3 too, as JSON Schema counts them) that must be safe. */
const smallInt = z
  .number()
  .refine(Number.isInteger, 'expected an integer')
  .refine((n) => !Number.isInteger(n) || Number.isSafeInteger(n), 'beyond 2^53 - 1: cannot be read exactly as a number');
const nonNegative = smallInt.refine((n) => n >= 0, 'must be >= 0');

/** int64 members, already replaced by their exact bigint (see overlayExactIntegers). */
const int64 = z
  .bigint({ error: (issue) => (issue.input === undefined ? 'is missing' : 'expected an integer') })
  .min(INT64_MIN, 'beyond the int64 range')
  .max(INT64_MAX, 'beyond the int64 range');

/** RFC 3339 with up to nanoseconds; kept as its text. */
const time = z.string().refine((s) => parseRfc3339(s) !== undefined, 'not an RFC 3339 date-time').default('');

const codePoints = (s: string): number => [...s].length;
const maxLen = (n: number) => z.string().refine((s) => codePoints(s) <= n, `longer than ${n} characters`);
const effort = z.string().refine((s) => s.length >= 1 && codePoints(s) <= 32, 'an effort is 1 to 32 characters');

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

const pluginCommandSchema = z.object({
  plugin: str,
  bare: str,
  display: str,
  qualified: str,
  description: str,
  kind: str,
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

/**
 * The integers of a `spend` section, in the order reports and rollups list
 * them: read exactly here, measured one by one by account/craze-spend.ts.
 * `reasoning` is part of `output`; `costPicoUsd` is the priced part's
 * picodollars, a floor when `unpriced`.
 */
export const SPEND_FIELDS = ['input', 'output', 'reasoning', 'cacheRead', 'cacheCreation', 'costPicoUsd'] as const;

/** Every key required, as craze always writes them. */
const spendSchema = z.object({
  ...(Object.fromEntries(SPEND_FIELDS.map((f) => [f, int64])) as Record<(typeof SPEND_FIELDS)[number], typeof int64>),
  unpriced: z.boolean(),
});

const usageSchema = z.object({
  contextTokens: int64,
  contextWindow: int64,
  turn: spendSchema,
  session: spendSchema,
});

const catalogModelSchema = z.object({
  id: maxLen(256),
  name: maxLen(128),
  /** 0 when absent (a model not remembered). */
  recent: smallInt.refine((n) => n >= 1, 'must be >= 1').default(0),
  efforts: z.array(effort).max(8, 'at most 8 efforts').default([]),
  defaultEffort: effort.default(''),
  switchEffort: effort.default(''),
});

const catalogSchema = z.object({
  models: z.array(catalogModelSchema).max(512, 'at most 512 models').default([]),
  revision: nonNegative,
});

const selectValueSchema = z.object({ value: str, name: str });

const configOptionSchema = z.object({
  id: str,
  name: str,
  category: str,
  type: str,
  current: str,
  selectValues: z.array(selectValueSchema).default([]),
});

const configSchema = z.object({ options: z.array(configOptionSchema).default([]) });
const commandInfoSchema = z.object({ name: str, description: str });
const commandsSchema = z.object({ commands: z.array(commandInfoSchema).default([]) });
const pluginsSchema = z.object({ plugins: z.array(pluginCommandSchema).default([]) });

const slashSettingSchema = z.object({ kind: str, value: str });

const slashRunSchema = z.object({
  kind: z.string(),
  method: str,
  param: str,
  setting: slashSettingSchema.optional(),
  arg: str,
  argHint: str,
  picker: str,
  local: str,
  reason: str,
});

const slashItemSchema = z.object({
  name: z.string().min(1),
  description: str,
  source: str,
  plugin: str,
  qualified: str,
  requires: str,
  whileWorking: bool,
  run: slashRunSchema.optional(),
});

type SlashItem = z.output<typeof slashItemSchema>;
interface SlashCatalog {
  items: SlashItem[];
}

/** No whitespace and no control character. */
const ONE_TOKEN = /^[^\s\p{Cc}]+$/u;

/** Row by row: a bad row is dropped alone, never the section or the event. */
const slashSchema = z.unknown().transform((v): SlashCatalog => {
  const rows = isObject(v) && Array.isArray(v.items) ? (v.items as unknown[]) : [];
  const items: SlashItem[] = [];
  for (const row of rows) {
    const r = slashItemSchema.safeParse(row);
    if (r.success && ONE_TOKEN.test(r.data.name)) items.push(r.data);
  }
  return { items };
});

const sendNowSchema = z.object({ armed: bool, text: str, fromRow: str, turn: str });

const stateSchema = z.object({
  /** A section absent from the delta was not touched: undefined, not ''. */
  title: z.string().optional(),
  mode: z.string().optional(),
  model: z.string().optional(),
  config: configSchema.optional(),
  commands: commandsSchema.optional(),
  plugins: pluginsSchema.optional(),
  slash: slashSchema.optional(),
  sendNow: sendNowSchema.optional(),
  usage: usageSchema.optional(),
  // A catalog that breaks the schema's limits (a newer craze listing more
  // models, say) is dropped alone: the usage report in the same state delta
  // is money and must not be lost with it.
  catalog: catalogSchema.optional().catch(undefined),
  reason: str,
  detail: str,
  indexErr: str,
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
const eventShape = {
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
const eventFieldsSchema = z.object(eventShape);

// --- types ---------------------------------------------------------------------

type CrazeEventFields = z.output<typeof eventFieldsSchema>;

/** A codec event: one of the 19 known types, or a newer one kept as `known: false`. */
type CrazeEvent =
  | (CrazeEventFields & { readonly type: CrazeEventType; readonly known: true })
  | (CrazeEventFields & { readonly type: string; readonly known: false });

/** What our journal shipper adds about the file a record came from. */
interface CrazeJournalInfo {
  readonly cwd: string;
  readonly provider: string;
  readonly crazeVersion: string;
  readonly file: string;
}

export interface CrazeRecord {
  readonly sessionId: string;
  readonly incarnation: string;
  /** Per incarnation, from 1. */
  readonly seq: number;
  readonly event: CrazeEvent;
  /** The event object's text exactly as it arrived. */
  readonly eventText: string;
  readonly journal: CrazeJournalInfo | undefined;
}

// --- decoding ------------------------------------------------------------------

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(issue: z.core.$ZodIssue | undefined, prefix: string): string {
  if (!issue) return `${prefix}: invalid`;
  const path = [prefix, ...issue.path.map(String)].filter((p) => p !== '').join('.');
  return `${path}: ${issue.message}`;
}

/** Replaces the number at obj[key] by the exact integer its text denotes. */
function exactInto(obj: Record<string, unknown>, texts: Map<string, string>, key: string): void {
  if (typeof obj[key] !== 'number') return;
  const text = texts.get(key);
  const exact = text === undefined ? undefined : exactIntegerText(text);
  if (exact !== undefined) obj[key] = exact;
}

/**
 * Puts the exact bigint of every int64 member of `state.usage` into the parsed
 * tree, read from the event's text (a float would round 9007199254740993).
 * A member that is not an integer number is left as it was, for the schema to
 * reject.
 */
function overlayExactIntegers(event: Record<string, unknown>, eventText: string): void {
  const state = event.state;
  if (!isObject(state) || !isObject(state.usage)) return;
  const usage = state.usage;
  const stateText = objectMembers(eventText).get('state');
  const usageText = stateText === undefined ? undefined : objectMembers(stateText).get('usage');
  if (usageText === undefined) return;
  const texts = objectMembers(usageText);
  exactInto(usage, texts, 'contextTokens');
  exactInto(usage, texts, 'contextWindow');
  for (const part of ['turn', 'session'] as const) {
    const spend = usage[part];
    const spendText = texts.get(part);
    if (!isObject(spend) || spendText === undefined) continue;
    const spendTexts = objectMembers(spendText);
    for (const field of SPEND_FIELDS) exactInto(spend, spendTexts, field);
  }
}

/**
 * Decodes one codec event from its parsed value and its exact text (the
 * text `parsed` came from). `where` prefixes the reasons ('event').
 */
function decodeEventValue(parsed: unknown, text: string, where: string): Decoded<CrazeEvent> {
  if (!isObject(parsed)) return malformed(`${where} is not a JSON object`);
  const type = parsed.type;
  if (type === undefined) return malformed(`${where}.type is missing`);
  if (typeof type !== 'string') return malformed(`${where}.type is not a string`);
  if (type === '') return malformed(`${where}.type is empty`);
  overlayExactIntegers(parsed, text);
  if (KNOWN_TYPES.has(type)) {
    const r = eventFieldsSchema.safeParse(parsed);
    if (!r.success) return malformed(describe(r.error.issues[0], where));
    return ok({ ...r.data, type: type as CrazeEventType, known: true });
  }
  // A newer craze's type: keep it, with each known field that parses.
  const fields: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(eventShape) as [string, z.ZodType][]) {
    const r = schema.safeParse(parsed[key]);
    fields[key] = r.success ? r.data : schema.parse(undefined);
  }
  return ok({ ...(fields as CrazeEventFields), type, known: false });
}


/** One codec event from its JSON text (a journal line's `event`, a notification's). */
export function decodeCrazeEvent(text: string): Decoded<CrazeEvent> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return malformed(`event is not JSON: ${(err as Error).message}`);
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

export function decodeCrazeRecord(value: Buffer | null): Decoded<CrazeRecord> {
  const parsed = parseJsonValue(value);
  if (!parsed.ok) return parsed;
  const { text, json } = parsed.value;
  if (!isObject(json)) return malformed('record value is not a JSON object');
  const rec = recordSchema.safeParse(json);
  if (!rec.success) return malformed(describe(rec.error.issues[0], ''));
  const r = rec.data;
  // Both ids key an incarnation and are read back in IN lists: capped (MAX_ID_BYTES).
  const tooLong = idTooLong('sessionId', r.sessionId) ?? idTooLong('incarnation', r.incarnation);
  if (tooLong) return malformed(tooLong);
  const members = objectMembers(text.trim());
  // seq read from its digits: 2^53 + 1 must not round to an acceptable number.
  const seqText = members.get('seq') ?? '';
  const seq = exactIntegerText(seqText);
  if (seq === undefined) return malformed(`seq: ${seqText} is not an integer`);
  if (seq < 1n) return malformed(`seq: ${seqText} must be >= 1 (it is 1-based)`);
  if (seq > BigInt(Number.MAX_SAFE_INTEGER)) return malformed(`seq: ${seqText} is beyond 2^53 - 1`);
  const eventText = members.get('event');
  if (r.event === undefined || eventText === undefined) return malformed('event is missing');
  const event = decodeEventValue(r.event, eventText, 'event');
  if (!event.ok) return event;
  return ok({
    sessionId: r.sessionId,
    incarnation: r.incarnation,
    seq: Number(seq),
    event: event.value,
    eventText,
    journal: r.journal,
  });
}
