/** What one loop does, as loop-runtime events: model and tool calls with their charges, and now and then something else. */
import { createHash } from 'node:crypto';
import { usd } from './go-json.js';
import { chance, int, mulberry32, pick } from './prng.js';
const WORDS = ('the agent reads file tests pass build config loop step plan tool call result error retry budget model ' +
    'token cost output input cache context window summary patch diff commit branch review check value table ' +
    'query index stream record offset partition consumer producer schema ledger chain hash verify store').split(' ');
/** 64 KiB of words from a fixed seed: padding is a slice of it at a random offset (cheap, and not one repeated string). */
let corpus;
export function padText(rng, bytes) {
    if (bytes <= 0)
        return '';
    if (corpus === undefined) {
        const words = mulberry32(0x5eed);
        const parts = [];
        let len = 0;
        while (len < 65_536) {
            const w = pick(words, WORDS);
            parts.push(w);
            len += w.length + 1;
        }
        corpus = parts.join(' ');
    }
    let text = '';
    while (text.length < bytes) {
        const from = Math.floor(rng() * (corpus.length - 1));
        text += corpus.slice(from, from + bytes - text.length);
    }
    return text;
}
const MODELS = [
    { provider: 'anthropic', model: 'claude-sonnet-4-5', inNano: 3000, outNano: 15000 },
    { provider: 'anthropic', model: 'claude-haiku-4-5', inNano: 1000, outNano: 5000 },
    { provider: 'openai', model: 'gpt-4.1-mini', inNano: 400, outNano: 1600 },
];
const TOOLS = ['bash', 'read_file', 'write_file', 'grep', 'http_get'];
/** A span of `wholeMs` milliseconds and a drawn fraction of one more, in nanoseconds. */
const msNs = (rng, wholeMs) => wholeMs * 1_000_000 + int(rng, 0, 999_999);
const ms = (rng, lo, hi) => msNs(rng, int(rng, lo, hi));
const us = (rng, lo, hi) => int(rng, lo, hi) * 1_000 + int(rng, 0, 999);
/** The n events of one loop: LoopStarted, iterations of model and tool calls with their charges, LoopFinished. */
export function loopEvents(rng, loopId, n) {
    const events = [];
    const hex = (s) => createHash('sha256').update(s).digest('hex');
    const m = pick(rng, MODELS);
    const seed = (BigInt(int(rng, 0, 0x3fffffff)) << 32n) | BigInt(int(rng, 0, 0xffffffff));
    events.push({
        kind: 'LoopStarted',
        dtNs: 0,
        paddable: false,
        body: () => ({
            config_hash: hex(`config ${m.model}`),
            initial_state: { goal: `task ${loopId}: make the failing tests pass`, max_iterations: 50 },
            name: `demo ${loopId}`,
            seed,
        }),
    });
    let iteration = 0;
    const middle = [];
    const charge = (body) => {
        return {
            kind: 'BudgetCharged',
            dtNs: chance(rng, 0.15) ? 0 : us(rng, 10, 500),
            paddable: false,
            charge: body,
            body: () => ({
                action_type: body.action_type,
                iterations: body.iterations || undefined,
                tokens: body.tokens || undefined,
                usd: body.nanoUsd ? usd(body.nanoUsd) : undefined,
                wall_clock_ms: body.wallMs || undefined,
            }),
        };
    };
    while (middle.length < n - 2) {
        iteration++;
        const it = iteration;
        middle.push({ kind: 'IterationStarted', dtNs: ms(rng, 1, 50), paddable: false, body: () => ({ iteration: it }) });
        middle.push(charge({ action_type: 'iteration', iterations: 1 }));
        // A model call.
        const modelAction = `act-${it}-model`;
        const tokensIn = chance(rng, 0.02) ? 0 : int(rng, 500, 20_000);
        const tokensOut = int(rng, 20, 2_000);
        // Now and then a cache hit that costs a tenth of a micro-dollar (Go writes 1e-7).
        const nano = tokensIn === 0 ? 100 : tokensIn * m.inNano + tokensOut * m.outNano;
        const durationMs = int(rng, 400, 9_000);
        middle.push({
            kind: 'ActionRequested',
            dtNs: us(rng, 50, 2_000),
            paddable: false,
            body: () => ({ action_id: modelAction, action_payload: { messages: 2 * it, model: m.model }, action_type: 'model' }),
        });
        middle.push({
            kind: 'ModelCalled',
            dtNs: msNs(rng, durationMs),
            paddable: true,
            body: (pad) => ({
                action_id: modelAction,
                duration_ms: durationMs,
                model: m.model,
                provider: m.provider,
                request: { max_tokens: 4096, messages: 2 * it, model: m.model },
                response: { content: [{ text: pad || 'ok', type: 'text' }], stop_reason: 'tool_use' },
                usage: { cost_usd: usd(nano), in: tokensIn, out: tokensOut },
            }),
        });
        middle.push(charge({ action_type: 'model', tokens: tokensIn + tokensOut, nanoUsd: nano, wallMs: durationMs }));
        // A tool call, after the policy allowed it.
        const tool = pick(rng, TOOLS);
        const toolAction = `act-${it}-tool`;
        const toolMs = chance(rng, 0.1) ? 0 : int(rng, 1, 3_000);
        const isError = chance(rng, 0.05);
        middle.push({
            kind: 'ActionRequested',
            dtNs: us(rng, 50, 2_000),
            paddable: false,
            body: () => ({ action_id: toolAction, action_payload: { args: { path: `src/file${it}.ts` }, tool }, action_type: 'tool' }),
        });
        middle.push({
            kind: 'PolicyDecided',
            dtNs: us(rng, 20, 900),
            paddable: false,
            body: () => ({ action_id: toolAction, capability: `tool:${tool}`, decision: 'allow', reason: 'capability granted by policy v3', tool }),
        });
        middle.push({
            kind: 'ToolCalled',
            dtNs: msNs(rng, toolMs),
            paddable: true,
            body: (pad) => ({
                action_id: toolAction,
                args: { path: `src/file${it}.ts` },
                duration_ms: toolMs,
                idempotency_key: `${loopId}/${toolAction}`,
                is_error: isError,
                result: { exit_code: isError ? 1 : 0, output: pad },
                tool,
            }),
        });
        middle.push(charge({ action_type: 'tool', wallMs: toolMs }));
        // Now and then something else happens between iterations.
        const extra = rng();
        if (extra < 0.05) {
            const count = int(rng, 1, 3);
            middle.push({ kind: 'ConvergenceWarning', dtNs: us(rng, 10, 300), paddable: false, body: () => ({ count, detector: 'zero-progress', reason: `no progress in ${count + 1} iterations` }) });
        }
        else if (extra < 0.09) {
            const to = int(rng, 4, 40);
            middle.push({
                kind: 'CompactionApplied',
                dtNs: ms(rng, 5, 400),
                paddable: false,
                body: () => ({ dropped_from: 2, dropped_to: to, plan_json: { keep_last: 8, summarize: [2, to] }, strategy: 'summarize', summary_ref: `sha256:${hex(`${loopId} ${to}`)}` }),
            });
        }
        else if (extra < 0.12) {
            const at = events.length + middle.length;
            middle.push({ kind: 'SnapshotTaken', dtNs: us(rng, 100, 5_000), paddable: false, body: () => ({ seq: at, state_hash: hex(`${loopId} state ${at}`) }) });
        }
        else if (extra < 0.14) {
            const id = `act-${it}-human`;
            middle.push({ kind: 'HumanRequested', dtNs: us(rng, 50, 900), paddable: false, body: () => ({ action_id: id, prompt: `Apply the patch to src/file${it}.ts?` }) });
            middle.push({ kind: 'HumanResponded', dtNs: ms(rng, 3_000, 120_000), paddable: false, body: () => ({ action_id: id, response: 'yes, go ahead' }) });
        }
        else if (extra < 0.155) {
            middle.push({ kind: 'Interrupted', dtNs: us(rng, 50, 900), paddable: false, body: () => ({ reason: 'operator paused the loop' }) });
            middle.push({ kind: 'Resumed', dtNs: ms(rng, 1_000, 60_000), paddable: false, body: () => ({}) });
        }
    }
    middle.length = Math.max(0, n - 2);
    events.push(...middle);
    if (n >= 2) {
        const outcome = chance(rng, 0.9) ? 'Completed' : 'BudgetExceeded';
        // The spend of what was actually emitted (the last iteration may be cut short).
        const total = { iterations: 0, tokens: 0, nanoUsd: 0, wallMs: 0 };
        for (const { charge: c } of middle) {
            total.iterations += c?.iterations ?? 0;
            total.tokens += c?.tokens ?? 0;
            total.nanoUsd += c?.nanoUsd ?? 0;
            total.wallMs += c?.wallMs ?? 0;
        }
        events.push({
            kind: 'LoopFinished',
            dtNs: ms(rng, 1, 30),
            paddable: false,
            body: () => ({
                error: outcome === 'Completed' ? undefined : 'budget of 50 iterations exhausted',
                outcome_kind: outcome,
                result: outcome === 'Completed' ? { answer: 'all tests pass', iterations: middle.filter((e) => e.kind === 'IterationStarted').length } : undefined,
                total_spend: { iterations: total.iterations, tokens: total.tokens, usd: usd(total.nanoUsd), wall_clock_ms: total.wallMs },
            }),
        });
    }
    events.length = n;
    return events;
}
//# sourceMappingURL=events.js.map