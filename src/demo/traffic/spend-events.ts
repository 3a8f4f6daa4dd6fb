/**
 * The events of the planned loops with their times: each tree depth-first
 * (a parent blocks on the sub-agents it spawns in an iteration, which run at
 * the same time), then each fork (its source's events 1..at_seq replayed,
 * ForkedFrom, live iterations). Every event carries the facts the expected
 * totals are folded from: the exact USD texts the payload holds.
 */
import type { Json } from './go-json.js';
import { int, type Rng } from './prng.js';
import type { CallPlan, IterationPlan, SpendLoopPlan, SpendPlan } from './spend-plan.js';

/** What an envelope says that the ledger counts; USD as the JSON number text written. */
export type Fact =
  | { readonly kind: 'LoopStarted'; readonly name: string; readonly parentId: string; readonly depth: number }
  | { readonly kind: 'ModelCalled'; readonly provider: string; readonly model: string; readonly tokensIn: number; readonly tokensOut: number; readonly costText: string }
  | { readonly kind: 'BudgetCharged'; readonly usdText: string }
  | { readonly kind: 'ForkedFrom'; readonly sourceLoopId: string; readonly atSeq: number }
  | { readonly kind: 'LoopFinished'; readonly outcome: string; readonly error: string }
  | { readonly kind: 'other' };

export interface Ev {
  readonly kind: string;
  readonly body: Json;
  readonly timeNs: bigint;
  readonly fact: Fact;
  /** What a BudgetCharged adds to the runtime's ledger. */
  readonly charge?: Ledger;
  /** The same envelope as a tamperer rewrote it after hashing. */
  readonly tampered?: { readonly body: Json; readonly fact: Fact };
  /** A second, honestly hashed version of the same seq. */
  readonly second?: { readonly body: Json; readonly fact: Fact };
}

/** The runtime's budget ledger; USD summed in float64 in charge order, as the runtime would. */
interface Ledger {
  iterations: number;
  tokens: number;
  usd: number;
  wallMs: number;
}

/**
 * child_spend and total_spend: the loop's own ledger, every field written
 * (`{"iterations":…,"tokens":…,"usd":…,"wall_clock_ms":…}`). It holds the
 * loop's own charges only, so a child's child_spend.usd is its own model cost
 * (float-summed) and never includes its sub-agents'. A fork's ledger includes
 * its replayed charges: the runtime rebuilt its state from them.
 */
const ledgerJson = (l: Ledger): Json => ({ iterations: l.iterations, tokens: l.tokens, usd: l.usd, wall_clock_ms: l.wallMs });

const NS_PER_MS = 1_000_000n;
const ms = (rng: Rng, lo: number, hi: number): bigint => BigInt(int(rng, lo, hi)) * NS_PER_MS + BigInt(int(rng, 0, 999_999));
const us = (rng: Rng, lo: number, hi: number): bigint => BigInt(int(rng, lo, hi) * 1_000 + int(rng, 0, 999));

/** ModelCalled's body and fact for one call. */
function modelCalled(actionId: string, iteration: number, call: CallPlan): { body: Json; fact: Fact } {
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
  readonly events: Ev[] = [];
  readonly ledger: Ledger = { iterations: 0, tokens: 0, usd: 0, wallMs: 0 };
  constructor(
    private readonly rng: Rng,
    public t: bigint,
  ) {}

  push(dtNs: bigint, kind: string, body: Json, fact: Fact = { kind: 'other' }, extra: Pick<Ev, 'tampered' | 'second' | 'charge'> = {}): void {
    let t = this.t + dtNs;
    const r = this.rng();
    if (r < 0.03) t = ((t + 999_999_999n) / 1_000_000_000n) * 1_000_000_000n;
    else if (r < 0.08) t = ((t + 999_999n) / NS_PER_MS) * NS_PER_MS;
    this.t = t;
    this.events.push({ kind, body, timeNs: t, fact, ...extra });
  }

  charge(dtNs: bigint, c: { actionType: string; iterations?: number; tokens?: number; usd?: number; wallMs?: number }): void {
    const charge: Ledger = { iterations: c.iterations ?? 0, tokens: c.tokens ?? 0, usd: c.usd ?? 0, wallMs: c.wallMs ?? 0 };
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
  replay(e: Ev): void {
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

export interface BuiltLoop {
  readonly plan: SpendLoopPlan;
  readonly events: Ev[];
  readonly endNs: bigint;
  readonly ledger: Ledger;
}

/** Every loop's events, by plan index. */
export function buildEvents(plan: SpendPlan, rng: Rng): BuiltLoop[] {
  const built: BuiltLoop[] = new Array<BuiltLoop>(plan.loops.length);
  let childOrdinal = 0;

  const iteration = (w: LoopWriter, loop: SpendLoopPlan, n: number, it: IterationPlan): void => {
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
      const children: BuiltLoop[] = [];
      for (const c of it.spawn) {
        const child = plan.loops[c]!;
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

  const finish = (w: LoopWriter, loop: SpendLoopPlan): void => {
    if (!loop.finished) return;
    const { kind, error } = loop.outcome;
    if (kind === 'Stuck') w.push(us(rng, 10, 300), 'ConvergenceWarning', { count: 3, detector: 'zero-progress', reason: 'no progress in 3 iterations' });
    w.push(ms(rng, 1, 30), 'LoopFinished', { error: error || undefined, outcome_kind: kind, result: kind === 'Completed' ? { answer: 'done' } : undefined, total_spend: ledgerJson(w.ledger) }, {
      kind: 'LoopFinished',
      outcome: kind,
      error,
    });
  };

  function runLoop(loop: SpendLoopPlan, startNs: bigint): BuiltLoop {
    const w = new LoopWriter(rng, startNs);
    const parentId = loop.parent === undefined ? '' : plan.loops[loop.parent]!.loopId;
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

  function runFork(loop: SpendLoopPlan): void {
    const source = built[loop.fork!.source]!;
    // Diverges after a model call when it can, before the source's last event.
    const firstModel = source.events.findIndex((e) => e.kind === 'ModelCalled') + 1;
    const atSeq = int(rng, Math.min(firstModel, source.events.length - 1), source.events.length - 1);
    const w = new LoopWriter(rng, 0n);
    for (const e of source.events.slice(0, atSeq)) w.replay(e);
    w.push(loop.fork!.delayNs, 'ForkedFrom', { at_seq: atSeq, source_loop_id: source.plan.loopId }, { kind: 'ForkedFrom', sourceLoopId: source.plan.loopId, atSeq });
    const replayedIterations = w.events.filter((e) => e.kind === 'IterationStarted').length;
    loop.iterations.forEach((it, i) => iteration(w, loop, replayedIterations + i + 1, it));
    finish(w, loop);
    built[loop.index] = { plan: loop, events: w.events, endNs: w.t, ledger: w.ledger };
  }

  for (const r of plan.roots) runLoop(plan.loops[r]!, plan.loops[r]!.startNs);
  for (const f of plan.forks) runFork(plan.loops[f]!);
  return built;
}
