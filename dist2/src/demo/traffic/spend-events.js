import { int } from './prng.js';
/**
 * child_spend and total_spend: the loop's own ledger, every field written
 * (`{"iterations":…,"tokens":…,"usd":…,"wall_clock_ms":…}`). It holds the
 * loop's own charges only, so a child's child_spend.usd is its own model cost
 * (float-summed) and never includes its sub-agents'. A fork's ledger includes
 * its replayed charges: the runtime rebuilt its state from them.
 */
const ledgerJson = (l) => ({ iterations: l.iterations, tokens: l.tokens, usd: l.usd, wall_clock_ms: l.wallMs });
const NS_PER_MS = 1000000n;
const ms = (rng, lo, hi) => BigInt(int(rng, lo, hi)) * NS_PER_MS + BigInt(int(rng, 0, 999_999));
const us = (rng, lo, hi) => BigInt(int(rng, lo, hi) * 1_000 + int(rng, 0, 999));
/** ModelCalled's body and fact for one call. */
function modelCalled(actionId, iteration, call) {
    return {
        body: {
            action_id: actionId,
            duration_ms: call.durationMs,
            model: call.model,
            provider: call.provider,
            request: { max_tokens: 4096, messages: 2 * iteration, model: call.model },
            response: { content: [{ text: 'ok', type: 'text' }], stop_reason: 'tool_use' },
            usage: { cost_usd: call.costUsd, in: call.tokensIn, out: call.tokensOut },
        },
        // canonical() writes a number as String(n): Go's float64 text (go-json.ts).
        fact: { kind: 'ModelCalled', provider: call.provider, model: call.model, tokensIn: call.tokensIn, tokensOut: call.tokensOut, costText: String(call.costUsd) },
    };
}
/** Appends a loop's events with monotonic times, rounding now and then to a whole millisecond or second. */
class LoopWriter {
    rng;
    t;
    events = [];
    ledger = { iterations: 0, tokens: 0, usd: 0, wallMs: 0 };
    constructor(rng, t) {
        this.rng = rng;
        this.t = t;
    }
    push(dtNs, kind, body, fact = { kind: 'other' }, extra = {}) {
        let t = this.t + dtNs;
        const r = this.rng();
        if (r < 0.03)
            t = ((t + 999999999n) / 1000000000n) * 1000000000n;
        else if (r < 0.08)
            t = ((t + 999999n) / NS_PER_MS) * NS_PER_MS;
        this.t = t;
        this.events.push({ kind, body, timeNs: t, fact, ...extra });
    }
    charge(dtNs, c) {
        const charge = { iterations: c.iterations ?? 0, tokens: c.tokens ?? 0, usd: c.usd ?? 0, wallMs: c.wallMs ?? 0 };
        this.ledger.iterations += charge.iterations;
        this.ledger.tokens += charge.tokens;
        this.ledger.usd += charge.usd;
        this.ledger.wallMs += charge.wallMs;
        // BudgetChargedPayload's fields are omitempty but action_type: zero values are not written.
        const body = {
            action_type: c.actionType,
            iterations: charge.iterations || undefined,
            tokens: charge.tokens || undefined,
            usd: charge.usd || undefined,
            wall_clock_ms: charge.wallMs || undefined,
        };
        this.push(dtNs, 'BudgetCharged', body, { kind: 'BudgetCharged', usdText: String(charge.usd) }, { charge });
    }
    /** Replays another loop's event: same kind, payload and time, and it charges this loop's ledger as it charged the source's. */
    replay(e) {
        this.t = e.timeNs;
        this.events.push({ kind: e.kind, body: e.body, timeNs: e.timeNs, fact: e.fact, ...(e.charge ? { charge: e.charge } : {}) });
        if (e.charge) {
            this.ledger.iterations += e.charge.iterations;
            this.ledger.tokens += e.charge.tokens;
            this.ledger.usd += e.charge.usd;
            this.ledger.wallMs += e.charge.wallMs;
        }
    }
}
/** Every loop's events, by plan index. */
export function buildEvents(plan, rng) {
    const built = new Array(plan.loops.length);
    let childOrdinal = 0;
    const iteration = (w, loop, n, it) => {
        w.push(ms(rng, 1, 50), 'IterationStarted', { iteration: n });
        w.charge(us(rng, 10, 500), { actionType: 'iteration', iterations: 1 });
        const actionId = `act-${n}-model`;
        w.push(us(rng, 50, 2_000), 'ActionRequested', { action_id: actionId, action_payload: { messages: 2 * n, model: it.call.model }, action_type: 'model' });
        const honest = modelCalled(actionId, n, it.call);
        const tampered = it.tamperedCostUsd === undefined ? undefined : modelCalled(actionId, n, { ...it.call, costUsd: it.tamperedCostUsd });
        const second = it.secondCall && modelCalled(actionId, n, it.secondCall);
        w.push(BigInt(it.call.durationMs) * NS_PER_MS + BigInt(int(rng, 0, 999_999)), 'ModelCalled', honest.body, honest.fact, {
            ...(tampered ? { tampered } : {}),
            ...(second ? { second } : {}),
        });
        // The budget is charged what the call cost: the honest cost, whatever a tamperer later writes.
        const dt = int(rng, 0, 6) === 0 ? 0n : us(rng, 10, 500);
        w.charge(dt, { actionType: 'model', tokens: it.call.tokensIn + it.call.tokensOut, usd: it.call.costUsd, wallMs: it.call.durationMs });
        if (it.tool) {
            const { name, isError, ms: toolMs } = it.tool;
            const toolAction = `act-${n}-tool`;
            w.push(us(rng, 50, 2_000), 'ActionRequested', { action_id: toolAction, action_payload: { args: { path: `src/file${n}.ts` }, tool: name }, action_type: 'tool' });
            w.push(us(rng, 20, 900), 'PolicyDecided', { action_id: toolAction, capability: `tool:${name}`, decision: 'allow', reason: 'capability granted by policy v3', tool: name });
            w.push(BigInt(toolMs) * NS_PER_MS, 'ToolCalled', {
                action_id: toolAction,
                args: { path: `src/file${n}.ts` },
                duration_ms: toolMs,
                idempotency_key: `${loop.loopId}/${toolAction}`,
                is_error: isError,
                result: { exit_code: isError ? 1 : 0, output: isError ? 'error: exit status 1' : 'ok' },
                tool: name,
            });
            w.charge(us(rng, 10, 500), { actionType: 'tool', wallMs: toolMs });
        }
        if (it.spawn.length > 0) {
            // Spawned together, run at the same time, completed as they finish.
            const children = [];
            for (const c of it.spawn) {
                const child = plan.loops[c];
                w.push(ms(rng, 1, 20), 'SubAgentSpawned', { child_loop_id: child.loopId, definition: child.name, request: { goal: `${child.name} for ${loop.name}`, ordinal: childOrdinal++ } });
                children.push(runLoop(child, w.t + ms(rng, 1, 20)));
            }
            for (const child of [...children].sort((a, b) => (a.endNs < b.endNs ? -1 : a.endNs > b.endNs ? 1 : a.plan.index - b.plan.index))) {
                const { kind, error } = child.plan.outcome;
                w.push((child.endNs > w.t ? child.endNs - w.t : 0n) + ms(rng, 1, 10), 'SubAgentCompleted', {
                    child_loop_id: child.plan.loopId,
                    child_spend: ledgerJson(child.ledger),
                    definition: child.plan.name,
                    error: error || undefined,
                    outcome_kind: kind,
                    resp_json: kind === 'Completed' ? { summary: `${child.plan.name} done` } : undefined,
                });
            }
        }
        if (it.warning) {
            const { detector, count } = it.warning;
            w.push(us(rng, 10, 300), 'ConvergenceWarning', { count, detector, reason: `${detector}: seen ${count} times` });
        }
    };
    const finish = (w, loop) => {
        if (!loop.finished)
            return;
        const { kind, error } = loop.outcome;
        if (kind === 'Stuck')
            w.push(us(rng, 10, 300), 'ConvergenceWarning', { count: 3, detector: 'zero-progress', reason: 'no progress in 3 iterations' });
        w.push(ms(rng, 1, 30), 'LoopFinished', { error: error || undefined, outcome_kind: kind, result: kind === 'Completed' ? { answer: 'done' } : undefined, total_spend: ledgerJson(w.ledger) }, {
            kind: 'LoopFinished',
            outcome: kind,
            error,
        });
    };
    function runLoop(loop, startNs) {
        const w = new LoopWriter(rng, startNs);
        const parentId = loop.parent === undefined ? '' : plan.loops[loop.parent].loopId;
        // LoopStartedPayload's parent_id and depth are omitempty: a root writes neither.
        w.push(0n, 'LoopStarted', {
            config_hash: loop.configHash,
            depth: loop.depth || undefined,
            initial_state: { goal: `${loop.name}: make the failing tests pass`, max_iterations: 50 },
            name: loop.name,
            parent_id: parentId || undefined,
            seed: loop.seed,
        }, { kind: 'LoopStarted', name: loop.name, parentId, depth: loop.depth });
        loop.iterations.forEach((it, i) => iteration(w, loop, i + 1, it));
        finish(w, loop);
        const b = { plan: loop, events: w.events, endNs: w.t, ledger: w.ledger };
        built[loop.index] = b;
        return b;
    }
    function runFork(loop) {
        const source = built[loop.fork.source];
        // Diverges after a model call when it can, before the source's last event.
        const firstModel = source.events.findIndex((e) => e.kind === 'ModelCalled') + 1;
        const atSeq = int(rng, Math.min(firstModel, source.events.length - 1), source.events.length - 1);
        const w = new LoopWriter(rng, 0n);
        for (const e of source.events.slice(0, atSeq))
            w.replay(e);
        w.push(loop.fork.delayNs, 'ForkedFrom', { at_seq: atSeq, source_loop_id: source.plan.loopId }, { kind: 'ForkedFrom', sourceLoopId: source.plan.loopId, atSeq });
        const replayedIterations = w.events.filter((e) => e.kind === 'IterationStarted').length;
        loop.iterations.forEach((it, i) => iteration(w, loop, replayedIterations + i + 1, it));
        finish(w, loop);
        built[loop.index] = { plan: loop, events: w.events, endNs: w.t, ledger: w.ledger };
    }
    for (const r of plan.roots)
        runLoop(plan.loops[r], plan.loops[r].startNs);
    for (const f of plan.forks)
        runFork(plan.loops[f]);
    return built;
}
//# sourceMappingURL=spend-events.js.map