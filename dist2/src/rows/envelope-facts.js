/**
 * The payload facts on each envelopes row, declared once, and the slots they
 * are stored in.
 *
 * The facts (migration 0008): name and ClickHouse type. A kind that does not
 * carry a fact leaves its default ('' for String, '0' for the integers, 0 for
 * UInt8). Int64/UInt64 values are decimal strings, exact beyond 2^53.
 * account/loop-facts.ts fills them.
 *
 * The slots (migration 0022): ten typed columns the kinds share, s1..s6
 * String and n1..n4 Int64, and per kind which fact each slot holds
 * (FACT_SLOTS). The table stores the slots; each fact is an ALIAS column
 * reading its kind's slot (factSql), so every reader keeps the fact names.
 * The insert writes the slots (foldFacts). Why ten shared columns rather than
 * 34 mostly empty ones: docs/architecture.md, "The envelopes table's layout".
 *
 * The TypeScript shapes, the blank rows, the insert's column list and the
 * check against the migrations (test/unit/rows/envelope-facts.test.ts) are
 * all derived from this.
 */
export const ENVELOPE_FACTS = {
    // ModelCalled: provider, model, usage.in, usage.out, usage.cost_usd as Int64
    // picodollars and as its number text as written; duration_ms (ToolCalled's too).
    model_provider: 'String',
    model_name: 'String',
    input_tokens: 'Int64',
    output_tokens: 'Int64',
    cost_pico: 'Int64',
    cost_usd_text: 'String',
    duration_ms: 'Int64',
    // BudgetCharged: usd (picodollars, text), tokens, wall_clock_ms, iterations, action_type.
    budget_pico: 'Int64',
    budget_usd_text: 'String',
    budget_tokens: 'Int64',
    budget_wall_ms: 'Int64',
    budget_iterations: 'Int64',
    action_type: 'String',
    // LoopStarted: name, parent_id, depth, seed, config_hash.
    loop_name: 'String',
    parent_loop_id: 'String',
    depth: 'Int64',
    loop_seed: 'Int64',
    config_hash: 'String',
    // SubAgentSpawned and SubAgentCompleted: child_loop_id, definition.
    child_loop_id: 'String',
    definition: 'String',
    // SubAgentCompleted and LoopFinished: outcome_kind, error, and child_spend /
    // total_spend (the raw JSON text, and its known members exactly).
    outcome: 'String',
    error: 'String',
    spend_raw: 'String',
    spend_pico: 'Int64',
    spend_usd_text: 'String',
    spend_tokens: 'Int64',
    spend_wall_ms: 'Int64',
    spend_iterations: 'Int64',
    // ForkedFrom: source_loop_id, at_seq.
    fork_source: 'String',
    fork_at_seq: 'UInt64',
    // ToolCalled: tool, is_error.
    tool: 'String',
    tool_is_error: 'UInt8',
    // ConvergenceWarning: detector.
    detector: 'String',
    // IterationStarted: iteration.
    iteration: 'Int64',
};
/** The facts in column order. */
export const FACT_NAMES = Object.keys(ENVELOPE_FACTS);
/** Each type's column default, as a row holds it. */
export const FACT_DEFAULTS = { String: '', Int64: '0', UInt64: '0', UInt8: 0 };
/**
 * A fresh row of defaults, filled in place per envelope. Made by a function
 * compiled once from the declaration, returning one object literal: 40 ns an
 * envelope, where spreading or Object.assign from a template cost 170 ns to
 * 2.6 µs (a frozen template the most) on Node 20 — a tenth of the batch path.
 */
// The text compiled is built from the declaration above only (names and JSON defaults), never from input.
// eslint-disable-next-line @typescript-eslint/no-implied-eval
export const blankFacts = new Function(`return {${FACT_NAMES.map((name) => `${name}: ${JSON.stringify(FACT_DEFAULTS[ENVELOPE_FACTS[name]])}`).join(', ')}};`);
/** The facts of a row whose payload carries none (unknown kinds, malformed records). */
export const NO_FACTS = Object.freeze(blankFacts());
/** The slots in column order (migration 0022): String s1..s6, Int64 n1..n4. */
export const ENVELOPE_SLOTS = {
    s1: 'String', s2: 'String', s3: 'String', s4: 'String', s5: 'String', s6: 'String',
    n1: 'Int64', n2: 'Int64', n3: 'Int64', n4: 'Int64',
};
export const SLOT_NAMES = Object.keys(ENVELOPE_SLOTS);
const SPEND = {
    s1: 'child_loop_id', s2: 'definition', s3: 'spend_usd_text', s4: 'outcome', s5: 'error', s6: 'spend_raw',
    n1: 'spend_tokens', n2: 'spend_wall_ms', n3: 'spend_pico', n4: 'spend_iterations',
};
/**
 * Per kind class (the row's kind_class), the fact in each slot. The same
 * meaning shares a slot across kinds, so a reader of one slot over several
 * kinds reads like values: n3 is always picodollars (a call's cost, a
 * charge, a spend summary's usd) and s3 its producer's text; every fact sits
 * in the same slot for every kind that carries it (the unit test checks).
 * fork_at_seq (UInt64) and tool_is_error (UInt8) ride in an Int64 slot: a
 * UInt64 beyond Int64 as its two's complement, read back by toUInt64.
 */
export const FACT_SLOTS = {
    ModelCalled: { s1: 'model_provider', s2: 'model_name', s3: 'cost_usd_text', n1: 'input_tokens', n2: 'output_tokens', n3: 'cost_pico', n4: 'duration_ms' },
    BudgetCharged: { s1: 'action_type', s3: 'budget_usd_text', n1: 'budget_tokens', n2: 'budget_wall_ms', n3: 'budget_pico', n4: 'budget_iterations' },
    LoopStarted: { s1: 'loop_name', s2: 'parent_loop_id', s3: 'config_hash', n1: 'depth', n2: 'loop_seed' },
    SubAgentSpawned: { s1: 'child_loop_id', s2: 'definition' },
    SubAgentCompleted: SPEND,
    LoopFinished: SPEND,
    ForkedFrom: { s1: 'fork_source', n1: 'fork_at_seq' },
    ToolCalled: { s1: 'tool', n1: 'tool_is_error', n4: 'duration_ms' },
    ConvergenceWarning: { s1: 'detector' },
    IterationStarted: { n1: 'iteration' },
};
const KIND_SLOTS = new Map(Object.entries(FACT_SLOTS));
/** The slots of a row whose kind carries no fact. */
export const NO_SLOTS = Object.freeze({
    s1: '', s2: '', s3: '', s4: '', s5: '', s6: '', n1: '0', n2: '0', n3: '0', n4: '0',
});
/** A UInt64 fact's text in an Int64 slot: beyond Int64, its two's complement (toUInt64 reads it back). */
export function uint64InSlot(text) {
    return text.length < 19 ? text : BigInt.asIntN(64, BigInt(text)).toString();
}
/** The JavaScript expression of a slot's value from the facts `f` (compiled into foldFacts). */
function slotCode(fact, slot) {
    if (fact === undefined)
        return JSON.stringify(NO_SLOTS[slot]);
    const type = ENVELOPE_FACTS[fact];
    return type === 'UInt64' ? `u(f.${fact})` : type === 'UInt8' ? `String(f.${fact})` : `f.${fact}`;
}
function compile(slots) {
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    const make = new Function('u', `return (f) => ({${SLOT_NAMES.map((s) => `${s}: ${slotCode(slots[s], s)}`).join(', ')}});`);
    return make(uint64InSlot);
}
const FOLDS = new Map([...KIND_SLOTS].map(([kind, slots]) => [kind, compile(slots)]));
const foldNone = compile({});
/** The slots that store the facts of a row of kind class `kindClass`: the kind's facts, every other slot at its default. */
export function foldFacts(kindClass, facts) {
    return (FOLDS.get(kindClass) ?? foldNone)(facts);
}
const sqlString = (text) => `'${text}'`;
const kindTest = (kinds, kind = 'kind_class') => kinds.length === 1 ? `${kind} = ${sqlString(kinds[0])}` : `${kind} IN (${kinds.map(sqlString).join(', ')})`;
/** The kinds that carry `fact` and the one slot it has in all of them. */
export function factSlot(fact) {
    const kinds = [];
    let slot;
    for (const [kind, slots] of KIND_SLOTS) {
        for (const s of SLOT_NAMES) {
            if (slots[s] !== fact)
                continue;
            if (slot !== undefined && slot !== s)
                throw new Error(`fact ${fact} sits in ${slot} and in ${s}: a fact has one slot for every kind`);
            slot = s;
            kinds.push(kind);
        }
    }
    return slot === undefined ? undefined : { slot, kinds };
}
/** A fact's default as SQL of its type. */
const factDefaultSql = (fact) => {
    const type = ENVELOPE_FACTS[fact];
    return type === 'String' ? "''" : `to${type}(0)`;
};
/**
 * A fact as SQL over the slots (the ALIAS of migration 0022, and what an
 * INSERT … SELECT of a test or benchmark reads back): its kinds' slot, the
 * fact's default for every other kind.
 */
export function factSql(fact) {
    const at = factSlot(fact);
    if (at === undefined)
        return factDefaultSql(fact);
    const type = ENVELOPE_FACTS[fact];
    const value = type === 'UInt64' || type === 'UInt8' ? `to${type}(${at.slot})` : at.slot;
    return `if(${kindTest(at.kinds)}, ${value}, ${factDefaultSql(fact)})`;
}
/**
 * A slot as SQL over the facts, per kind (the DEFAULT migration 0022 gives
 * each new slot, which fills it from the fact columns of the rows stored
 * before; and an INSERT … SELECT that has the facts): `value(fact)` is the
 * SQL of a fact (its column name by default), `kind` the SQL of the row's
 * kind class.
 */
export function slotSql(slot, value = (fact) => fact, kind = 'kind_class') {
    const byFact = new Map();
    for (const [kind, slots] of KIND_SLOTS) {
        const fact = slots[slot];
        if (fact !== undefined)
            byFact.set(fact, [...(byFact.get(fact) ?? []), kind]);
    }
    const slotValue = (fact) => (ENVELOPE_FACTS[fact] === 'String' ? value(fact) : `toInt64(${value(fact)})`);
    const arms = [...byFact].map(([fact, kinds]) => `${kindTest(kinds, kind)}, ${slotValue(fact)}`);
    return `multiIf(${arms.join(', ')}, ${ENVELOPE_SLOTS[slot] === 'String' ? "''" : 'toInt64(0)'})`;
}
/** The facts a row's slots hold (foldFacts undone): what the ALIAS columns read, for rows in memory (tests, benchmarks). */
export function unfoldSlots(kindClass, slots) {
    const facts = blankFacts();
    const kind = KIND_SLOTS.get(kindClass) ?? {};
    for (const slot of SLOT_NAMES) {
        const fact = kind[slot];
        if (fact === undefined)
            continue;
        const type = ENVELOPE_FACTS[fact];
        const value = slots[slot];
        facts[fact] = type === 'UInt64' ? BigInt.asUintN(64, BigInt(value)).toString() : type === 'UInt8' ? Number(value) : value;
    }
    return facts;
}
/**
 * A row written with facts by name (a test's, a benchmark's) as the table
 * stores it: its facts replaced by its kind's slots. A fact its kind does not
 * carry must be at its default: the table could not keep it.
 */
export function foldRow(row) {
    const kind = row.kind_class;
    const kindClass = typeof kind === 'string' ? kind : '';
    const facts = blankFacts();
    const rest = {};
    for (const [name, value] of Object.entries(row)) {
        if (Object.hasOwn(ENVELOPE_FACTS, name))
            facts[name] = value;
        else
            rest[name] = value;
    }
    const folded = foldFacts(kindClass, facts);
    const back = unfoldSlots(kindClass, folded);
    for (const name of FACT_NAMES) {
        if (String(back[name]) !== String(facts[name]))
            throw new Error(`foldRow: a ${kindClass || 'kindless'} row has no slot for ${name} (${String(facts[name])})`);
    }
    return { ...rest, ...folded };
}
//# sourceMappingURL=envelope-facts.js.map