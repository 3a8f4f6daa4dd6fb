import { inListChunks, queryRows } from '../sink/clickhouse/sql.js';
import { chainIntegrity, convergence, stalledLoop, stuckLoop, subagentFailureRate, waitingOnHuman, } from './rules.js';
const rows = queryRows;
/** Rows of a per-loop query, read a chunk of loops at a time. */
async function perLoop(ch, name, loops) {
    const out = [];
    for (const chunk of inListChunks(loops))
        out.push(...(await rows(ch, name, { loop_ids: chunk })));
    return out;
}
function foldEvents(events) {
    const loops = new Map();
    const sorted = [...events].sort((a, b) => (a.loop_id < b.loop_id ? -1 : a.loop_id > b.loop_id ? 1 : Number(BigInt(a.seq) - BigInt(b.seq))));
    for (const e of sorted) {
        let fold = loops.get(e.loop_id);
        if (fold === undefined) {
            fold = { started: false, finishedOutcome: undefined, interruptedSince: undefined, warnings: [], human: new Map() };
            loops.set(e.loop_id, fold);
        }
        const at = Number(e.at_ms);
        switch (e.kind_class) {
            case 'LoopStarted':
                fold.started = true;
                break;
            case 'LoopFinished':
                fold.finishedOutcome = e.outcome;
                break;
            case 'Interrupted':
                fold.interruptedSince = at;
                break;
            case 'Resumed':
                fold.interruptedSince = undefined;
                break;
            case 'ConvergenceWarning':
                fold.warnings.push({ time: at, detector: e.detector, reason: e.warning_reason, count: Number(e.warning_count) });
                break;
            case 'HumanRequested':
            case 'HumanResponded': {
                const action = fold.human.get(e.human_action) ?? {};
                if (e.kind_class === 'HumanRequested')
                    action.requestedAt = Math.min(action.requestedAt ?? Infinity, at);
                else
                    action.respondedAt = at;
                fold.human.set(e.human_action, action);
                break;
            }
        }
    }
    return loops;
}
/** Marks each gap filled when every seq below it is stored. */
async function withFilledGaps(ch, findings) {
    const gapLoops = [...new Set(findings.filter((f) => f.verdict === 'gap').map((f) => f.loopId))];
    if (gapLoops.length === 0)
        return [...findings];
    const seqs = new Map();
    for (const r of await perLoop(ch, 'alert_loop_seqs', gapLoops)) {
        const list = seqs.get(r.loop_id) ?? [];
        list.push(BigInt(r.seq));
        seqs.set(r.loop_id, list);
    }
    return findings.map((f) => {
        if (f.verdict !== 'gap')
            return f;
        const below = (seqs.get(f.loopId) ?? []).filter((s) => s >= 1n && s < f.seq).length;
        return { ...f, filled: BigInt(below) === f.seq - 1n };
    });
}
/** The children these loops reported Stuck. */
export async function stuckChildren(ch, loops) {
    return new Set((await perLoop(ch, 'alert_stuck_children', loops)).map((r) => r.child));
}
/** Of these loops, those with an envelope timed at or after `sinceMs`: what a backfill of older traffic is not. */
export async function heardSince(ch, loops, sinceMs) {
    return (await perLoop(ch, 'alert_loop_last', loops)).filter((r) => Number(r.last_ms) >= sinceMs).map((r) => r.loop_id);
}
/**
 * Every loop rule's conditions at `now` for these loops (and the children
 * they reported Stuck), and with `rates` the sub-agent failure rates of the
 * window (rows ingested since the window's start less `lateMs`: only recent
 * partitions are read).
 */
export async function evaluate(ch, loops, now, config, lateMs, rates = true, 
/**
 * Loops reported Stuck by a parent among a larger set than `loops` (a
 * sweep's chunk: its parent may be in another chunk), so a child judged
 * apart from its parent is still taken as reported Stuck.
 */
reportedStuck = new Set()) {
    const own = await stuckChildren(ch, loops);
    const stuckChildrenSet = new Set([...own, ...loops.filter((l) => reportedStuck.has(l))]);
    const all = [...new Set([...loops, ...own])];
    const folds = foldEvents(await perLoop(ch, 'alert_loop_events', all));
    const last = new Map((await perLoop(ch, 'alert_loop_last', all)).map((r) => [r.loop_id, Number(r.last_ms)]));
    const warningRows = [];
    const activity = [];
    const human = [];
    for (const loopId of all) {
        const fold = folds.get(loopId);
        const lastTime = last.get(loopId);
        if (fold === undefined || lastTime === undefined)
            continue;
        warningRows.push({ loopId, finishedOutcome: fold.finishedOutcome, stuckByParent: stuckChildrenSet.has(loopId), warnings: fold.warnings });
        activity.push({ loopId, started: fold.started, finished: fold.finishedOutcome !== undefined, lastTime, interruptedSince: fold.interruptedSince });
        for (const [actionId, a] of fold.human) {
            if (a.requestedAt !== undefined)
                human.push({ loopId, actionId, requestedAt: a.requestedAt, respondedAt: a.respondedAt });
        }
    }
    const findings = await withFilledGaps(ch, (await perLoop(ch, 'alert_chain_findings', loops)).map((r) => ({
        loopId: r.loop_id,
        seq: BigInt(r.seq),
        verdict: r.verdict,
        time: Number(r.found_ms),
        detail: r.detail,
    })));
    return [
        ...stuckLoop(warningRows),
        ...convergence(warningRows, now, config),
        ...stalledLoop(activity, now, config),
        ...waitingOnHuman(human, now, config),
        ...chainIntegrity(findings, now, config),
        ...(rates ? subagentFailureRate(await subagentOutcomes(ch, now, config, lateMs), now, config) : []),
    ];
}
/** The window's sub-agent outcomes, from the loop runtime and from craze. */
async function subagentOutcomes(ch, now, config, lateMs) {
    const windowStart = now - config.windowMs;
    const params = { since_ms: BigInt(Math.max(0, windowStart)), since_ingest: Math.max(0, Math.floor((windowStart - lateMs) / 1000)) };
    const runtime = await rows(ch, 'alert_subagent_outcomes', params);
    const craze = await rows(ch, 'alert_craze_subagent_outcomes', params);
    return [
        ...runtime.map((r) => ({ source: 'runtime', kind: r.definition, outcome: r.outcome, time: Number(r.at_ms) })),
        // A roster row without a type still counts, under a kind of its own.
        ...craze.map((r) => ({ source: 'craze', kind: r.subagent_type === '' ? 'untyped' : r.subagent_type, outcome: r.status, time: Number(r.at_ms) })),
    ];
}
//# sourceMappingURL=evaluate.js.map