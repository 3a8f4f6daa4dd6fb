import { objectMembers } from '../decode/json-spans.js';
import { exactIntegerText, INT64_MAX, INT64_MIN } from '../money/int64-text.js';
import { usdTextToPico } from '../money/picodollars.js';
import { blankFacts } from '../rows/envelope-facts.js';
export { NO_FACTS } from '../rows/envelope-facts.js';
/** The facts of one decoded envelope. */
export function loopFacts(env) {
    // Filled in place from a fresh object of one shape (blankFacts says why).
    const f = blankFacts();
    const body = env.body;
    switch (body?.kind) {
        case 'ModelCalled':
            f.model_provider = body.provider;
            f.model_name = body.model;
            f.input_tokens = body.usage.in.toString();
            f.output_tokens = body.usage.out.toString();
            f.cost_pico = body.usage.cost_usd.pico.toString();
            f.cost_usd_text = body.usage.cost_usd.text;
            f.duration_ms = body.duration_ms.toString();
            break;
        case 'BudgetCharged':
            f.budget_pico = body.usd.pico.toString();
            f.budget_usd_text = body.usd.text;
            f.budget_tokens = body.tokens.toString();
            f.budget_wall_ms = body.wall_clock_ms.toString();
            f.budget_iterations = body.iterations.toString();
            f.action_type = body.action_type;
            break;
        case 'LoopStarted':
            f.loop_name = body.name;
            f.parent_loop_id = body.parent_id;
            f.depth = body.depth.toString();
            f.loop_seed = body.seed.toString();
            f.config_hash = body.config_hash;
            break;
        case 'SubAgentSpawned':
            f.child_loop_id = body.child_loop_id;
            f.definition = body.definition;
            break;
        case 'SubAgentCompleted':
            f.child_loop_id = body.child_loop_id;
            f.definition = body.definition;
            f.outcome = body.outcome_kind;
            f.error = body.error;
            readSpend(f, body.child_spend);
            break;
        case 'LoopFinished':
            f.outcome = body.outcome_kind;
            f.error = body.error;
            readSpend(f, body.total_spend);
            break;
        case 'ForkedFrom':
            f.fork_source = body.source_loop_id;
            f.fork_at_seq = body.at_seq.toString();
            break;
        case 'ToolCalled':
            f.tool = body.tool;
            f.tool_is_error = body.is_error ? 1 : 0;
            f.duration_ms = body.duration_ms.toString();
            break;
        case 'ConvergenceWarning':
            f.detector = body.detector;
            break;
        case 'IterationStarted':
            f.iteration = body.iteration.toString();
            break;
        default:
            break;
    }
    return f;
}
/**
 * A spend summary (`SubAgentCompleted.child_spend`, `LoopFinished.total_spend`:
 * a json.RawMessage whose shape the seed leaves open) kept as its raw text,
 * with the members it shares with BudgetCharged read exactly: `usd`, `tokens`,
 * `wall_clock_ms`, `iterations` (SQL on ClickHouse 18.16 could read `usd` only
 * through a float). It is for reconciliation, never summed, and the decoder
 * kept it raw, so it refuses nothing: a member that is absent, not a number,
 * or beyond Int64 reads 0, and the raw text (and `spend_usd_text`, whenever
 * `usd` is a number) shows what was written: a view can tell.
 */
function readSpend(facts, raw) {
    facts.spend_raw = raw;
    const members = raw.startsWith('{') ? objectMembers(raw) : new Map();
    const usd = members.get('usd');
    const pico = usd === undefined ? undefined : usdTextToPico(usd);
    if (usd !== undefined && pico !== undefined) {
        facts.spend_usd_text = usd;
        if (pico <= INT64_MAX && pico >= INT64_MIN)
            facts.spend_pico = pico.toString();
    }
    for (const [member, column] of SPEND_INTEGERS) {
        const text = members.get(member);
        const v = text === undefined ? undefined : exactIntegerText(text);
        if (v !== undefined && v <= INT64_MAX && v >= INT64_MIN)
            facts[column] = v.toString();
    }
}
const SPEND_INTEGERS = [
    ['tokens', 'spend_tokens'],
    ['wall_clock_ms', 'spend_wall_ms'],
    ['iterations', 'spend_iterations'],
];
//# sourceMappingURL=loop-facts.js.map