/**
 * The payload facts of each loop-runtime kind (src/account/loop-facts.ts): the
 * columns migration 0008 adds, from a decoded envelope. Money as exact Int64
 * picodollars from the number's text (half to even), defaults for every column
 * a kind does not carry. What no column can hold (a USD amount beyond Int64, a
 * lone surrogate in a string member) is refused by the decoder, with the field
 * named, so `verify` and ingest judge a record alike.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loopFacts } from '../../../src/account/loop-facts.js';
import { decodeEnvelope } from '../../../src/decode/envelope.js';
/** Every column's default, written out here rather than taken from the module under test. */
const DEFAULTS = {
    model_provider: '',
    model_name: '',
    input_tokens: '0',
    output_tokens: '0',
    cost_pico: '0',
    cost_usd_text: '',
    duration_ms: '0',
    budget_pico: '0',
    budget_usd_text: '',
    budget_tokens: '0',
    budget_wall_ms: '0',
    budget_iterations: '0',
    action_type: '',
    loop_name: '',
    parent_loop_id: '',
    depth: '0',
    loop_seed: '0',
    config_hash: '',
    child_loop_id: '',
    definition: '',
    outcome: '',
    error: '',
    spend_raw: '',
    spend_pico: '0',
    spend_usd_text: '',
    spend_tokens: '0',
    spend_wall_ms: '0',
    spend_iterations: '0',
    fork_source: '',
    fork_at_seq: '0',
    tool: '',
    tool_is_error: 0,
    detector: '',
    iteration: '0',
};
const record = (kind, payload) => Buffer.from(JSON.stringify({ LoopID: 'loop-1', Seq: 1, Time: '2026-11-30T10:00:00Z', Kind: kind, Payload: payload, Hash: '0'.repeat(64) }));
/** An envelope as the decoder makes it, its payload given as JSON text. */
function envelope(kind, payload) {
    const d = decodeEnvelope(record(kind, payload));
    assert.ok(d.ok, d.ok ? '' : d.reason);
    return d.value;
}
const facts = (kind, payload) => loopFacts(envelope(kind, payload));
/** The decoder's reason for refusing the record, the payload also tried in base64 (Go's form). */
function refused(kind, payload) {
    const d = decodeEnvelope(record(kind, payload));
    assert.ok(!d.ok, `${kind} ${payload} was accepted`);
    const base64 = JSON.parse(record(kind, payload).toString());
    const d64 = decodeEnvelope(Buffer.from(JSON.stringify({ ...base64, Payload: Buffer.from(payload).toString('base64') })));
    assert.deepEqual(d64, d, 'the same verdict whatever the payload encoding');
    return d.reason;
}
const modelCalled = (cost) => `{"provider":"anthropic","model":"claude","usage":{"in":1,"out":2,"cost_usd":${cost}},"duration_ms":3}`;
test('ModelCalled: provider, model, tokens, cost as picodollars and as written, duration; nothing else', () => {
    assert.deepEqual(facts('ModelCalled', '{"action_id":"a","request":{},"response":{"x":1},"usage":{"in":1200,"out":9007199254740993,"cost_usd":0.0042},"provider":"openai","model":"gpt","duration_ms":812}'), {
        ...DEFAULTS,
        model_provider: 'openai',
        model_name: 'gpt',
        input_tokens: '1200',
        output_tokens: '9007199254740993',
        cost_pico: '4200000000',
        cost_usd_text: '0.0042',
        duration_ms: '812',
    });
});
test('USD texts become picodollars exactly, rounding half to even; the text is kept as written', () => {
    const cases = [
        ['1e-7', '100000'],
        ['12345.678901234567', '12345678901234567'],
        ['2.5e-12', '2'],
        ['3.5e-12', '4'],
        ['1.5E-12', '2'],
        ['0', '0'],
        ['-0.5', '-500000000000'],
    ];
    for (const [text, pico] of cases) {
        const f = facts('ModelCalled', modelCalled(text));
        assert.equal(f.cost_pico, pico, text);
        assert.equal(f.cost_usd_text, text);
        const b = facts('BudgetCharged', `{"usd":${text},"action_type":"model"}`);
        assert.equal(b.budget_pico, pico, `budget ${text}`);
        assert.equal(b.budget_usd_text, text);
    }
});
test('a cost at Int64 max picodollars is kept; one picodollar more (or a half rounding up to it) is refused, naming the field', () => {
    assert.equal(facts('ModelCalled', modelCalled('9223372.036854775807')).cost_pico, '9223372036854775807');
    assert.equal(facts('ModelCalled', modelCalled('-9223372.036854775808')).cost_pico, '-9223372036854775808');
    for (const text of ['9223372.036854775808', '9223372.0368547758075', '1e7', '-9223372.036854775809']) {
        assert.match(refused('ModelCalled', modelCalled(text)), /^ModelCalled payload: usage\.cost_usd: .*beyond Int64/, text);
    }
    assert.match(refused('BudgetCharged', '{"usd":9300000,"action_type":"model"}'), /^BudgetCharged payload: usd: 9300000 USD is 9300000000000000000 picodollars, beyond Int64/);
});
test('a ModelCalled without usage (or with usage null) has zero tokens and cost', () => {
    for (const payload of ['{"provider":"p","model":"m"}', '{"provider":"p","model":"m","usage":null}', '{"provider":"p","model":"m","usage":{}}']) {
        const f = facts('ModelCalled', payload);
        assert.deepEqual([f.model_provider, f.model_name, f.input_tokens, f.output_tokens, f.cost_pico], ['p', 'm', '0', '0', '0'], payload);
    }
});
test('BudgetCharged: usd, tokens, wall clock, iterations, action type', () => {
    assert.deepEqual(facts('BudgetCharged', '{"tokens":4000,"usd":1e-7,"wall_clock_ms":1500,"iterations":1,"action_type":"tool"}'), {
        ...DEFAULTS,
        budget_pico: '100000',
        budget_usd_text: '1e-7',
        budget_tokens: '4000',
        budget_wall_ms: '1500',
        budget_iterations: '1',
        action_type: 'tool',
    });
});
test('LoopStarted: name, parent, depth, seed (beyond 2^53, exact), config hash', () => {
    assert.deepEqual(facts('LoopStarted', '{"name":"planner","initial_state":{},"seed":-9007199254740993,"config_hash":"abc","parent_id":"loop-0","depth":2}'), {
        ...DEFAULTS,
        loop_name: 'planner',
        parent_loop_id: 'loop-0',
        depth: '2',
        loop_seed: '-9007199254740993',
        config_hash: 'abc',
    });
    // A root loop: Go omits parent_id and depth.
    const root = facts('LoopStarted', '{"name":"root","initial_state":null,"seed":1,"config_hash":"h"}');
    assert.deepEqual([root.parent_loop_id, root.depth], ['', '0']);
});
test('sub-agents: child and definition; a completion with its outcome, error and child_spend (raw text and exact numbers)', () => {
    assert.deepEqual(facts('SubAgentSpawned', '{"child_loop_id":"loop-2","definition":"coder","request":{}}'), { ...DEFAULTS, child_loop_id: 'loop-2', definition: 'coder' });
    const spend = '{"iterations":2, "tokens":9007199254740993,"usd":2.5e-12,"wall_clock_ms":30}';
    assert.deepEqual(facts('SubAgentCompleted', `{"child_loop_id":"loop-2","definition":"coder","outcome_kind":"Failed","error":"boom","child_spend":${spend}}`), {
        ...DEFAULTS,
        child_loop_id: 'loop-2',
        definition: 'coder',
        outcome: 'Failed',
        error: 'boom',
        spend_raw: spend,
        spend_pico: '2',
        spend_usd_text: '2.5e-12',
        spend_tokens: '9007199254740993',
        spend_wall_ms: '30',
        spend_iterations: '2',
    });
});
test('a spend summary of another shape is kept raw with zero numbers; a number beyond Int64 reads 0 beside its text', () => {
    for (const raw of ['"n/a"', '[1,2]', '{"usd":"1.5","tokens":null,"iterations":1.5,"other":7}', '{"tokens":9223372036854775808}']) {
        const f = facts('LoopFinished', `{"outcome_kind":"Completed","total_spend":${raw}}`);
        assert.deepEqual([f.spend_raw, f.spend_pico, f.spend_usd_text, f.spend_tokens, f.spend_iterations], [raw, '0', '', '0', '0'], raw);
    }
    assert.equal(facts('LoopFinished', '{"outcome_kind":"Completed"}').spend_raw, '');
    // Reconciliation data, never summed: not a reason to refuse the parent's record, and the text tells.
    const big = facts('SubAgentCompleted', '{"outcome_kind":"Completed","child_spend":{"usd":1e7,"tokens":-9223372036854775808}}');
    assert.deepEqual([big.spend_pico, big.spend_usd_text, big.spend_tokens], ['0', '1e7', '-9223372036854775808']);
});
test('LoopFinished, ForkedFrom, ToolCalled, ConvergenceWarning, IterationStarted', () => {
    assert.deepEqual(facts('LoopFinished', '{"outcome_kind":"BudgetExceeded","error":"out of money","total_spend":{"usd":1}}'), {
        ...DEFAULTS,
        outcome: 'BudgetExceeded',
        error: 'out of money',
        spend_raw: '{"usd":1}',
        spend_pico: '1000000000000',
        spend_usd_text: '1',
    });
    assert.deepEqual(facts('ForkedFrom', '{"source_loop_id":"loop-9","at_seq":18446744073709551615}'), { ...DEFAULTS, fork_source: 'loop-9', fork_at_seq: '18446744073709551615' });
    assert.deepEqual(facts('ToolCalled', '{"action_id":"a","tool":"grep","args":{},"result":null,"is_error":true,"duration_ms":40}'), {
        ...DEFAULTS,
        tool: 'grep',
        tool_is_error: 1,
        duration_ms: '40',
    });
    assert.equal(facts('ToolCalled', '{"tool":"ls"}').tool_is_error, 0);
    assert.deepEqual(facts('ConvergenceWarning', '{"detector":"oscillation","reason":"r","count":3}'), { ...DEFAULTS, detector: 'oscillation' });
    assert.deepEqual(facts('IterationStarted', '{"iteration":7}'), { ...DEFAULTS, iteration: '7' });
});
test('kinds are classified as the decoder does; unknown kinds and kinds without facts get the defaults', () => {
    assert.equal(facts('model_called', modelCalled('1e-7')).cost_pico, '100000');
    assert.equal(facts('Budget-Charged', '{"usd":2}').budget_pico, '2000000000000');
    assert.deepEqual(facts('CostReported', '{"usage":{"cost_usd":5},"provider":"p"}'), DEFAULTS);
    assert.deepEqual(facts('Resumed', '{}'), DEFAULTS);
    assert.deepEqual(facts('HumanRequested', '{"action_id":"a","prompt":"ok?"}'), DEFAULTS);
});
test('a lone surrogate in a string member refuses the record, naming the field; a paired one, or one in a raw member, is kept', () => {
    assert.match(refused('ModelCalled', '{"provider":"p","model":"m\\ud800x"}'), /^ModelCalled payload: model holds a lone UTF-16 surrogate/);
    assert.match(refused('LoopFinished', '{"outcome_kind":"Failed","error":"\\udc00"}'), /^LoopFinished payload: error holds a lone UTF-16 surrogate/);
    assert.equal(facts('ModelCalled', '{"provider":"p","model":"m\\ud83d\\ude00"}').model_name, 'm\u{1F600}');
    // A raw member is stored as the producer's text (the escape is ASCII there), never as a column's string.
    assert.equal(facts('ToolCalled', '{"tool":"t","result":"\\ud800"}').tool, 't');
});
//# sourceMappingURL=loop-facts.test.js.map