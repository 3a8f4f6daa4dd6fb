/**
 * What the alert rules are given (issue 11): the rows of the loops a sweep
 * looks at, read from ClickHouse and turned into the rule inputs
 * (rule-rows.ts) of rules.ts. The reading is here, the judging there: every
 * threshold and window edge is decided once, in the pure rules.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { inListChunks } from '../clickhouse/sql.js';
import { queryRows } from './queries.js';
import type { AlertCondition } from './condition.js';
import type { ChainFindingRow, HumanRequestRow, LoopActivityRow, LoopWarningsRow, SubAgentOutcomeRow } from './rule-rows.js';
import {
  chainIntegrity,
  convergence,
  stalledLoop,
  stuckLoop,
  subagentFailureRate,
  waitingOnHuman,
  type AlertRuleConfig,
} from './rules.js';

const rows = queryRows;

/** Rows of a per-loop query, read a chunk of loops at a time. */
async function perLoop<T>(ch: ClickHouseClient, name: string, loops: readonly string[]): Promise<T[]> {
  const out: T[] = [];
  for (const chunk of inListChunks(loops)) out.push(...(await rows<T>(ch, name, { loop_ids: chunk })));
  return out;
}

interface LoopEvent {
  loop_id: string;
  seq: string;
  kind_class: string;
  at_ms: string;
  outcome: string;
  detector: string;
  warning_reason: string;
  warning_count: string;
  human_action: string;
}

/** Per loop: its rule inputs, folded from its events in seq order. */
interface LoopFold {
  started: boolean;
  finishedOutcome: string | undefined;
  interruptedSince: number | undefined;
  readonly warnings: { time: number; detector: string; reason: string; count: number }[];
  readonly human: Map<string, { requestedAt?: number; respondedAt?: number }>;
}

function foldEvents(events: readonly LoopEvent[]): Map<string, LoopFold> {
  const loops = new Map<string, LoopFold>();
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
        if (e.kind_class === 'HumanRequested') action.requestedAt = Math.min(action.requestedAt ?? Infinity, at);
        else action.respondedAt = at;
        fold.human.set(e.human_action, action);
        break;
      }
    }
  }
  return loops;
}

/** Marks each gap filled when every seq below it is stored. */
async function withFilledGaps(ch: ClickHouseClient, findings: readonly ChainFindingRow[]): Promise<ChainFindingRow[]> {
  const gapLoops = [...new Set(findings.filter((f) => f.verdict === 'gap').map((f) => f.loopId))];
  if (gapLoops.length === 0) return [...findings];
  const seqs = new Map<string, bigint[]>();
  for (const r of await perLoop<{ loop_id: string; seq: string }>(ch, 'alert_loop_seqs', gapLoops)) {
    const list = seqs.get(r.loop_id) ?? [];
    list.push(BigInt(r.seq));
    seqs.set(r.loop_id, list);
  }
  return findings.map((f) => {
    if (f.verdict !== 'gap') return f;
    const below = (seqs.get(f.loopId) ?? []).filter((s) => s >= 1n && s < f.seq).length;
    return { ...f, filled: BigInt(below) === f.seq - 1n };
  });
}

/** The children these loops reported Stuck. */
export async function stuckChildren(ch: ClickHouseClient, loops: readonly string[]): Promise<Set<string>> {
  return new Set((await perLoop<{ child: string }>(ch, 'alert_stuck_children', loops)).map((r) => r.child));
}

/** Of these loops, those with an envelope timed at or after `sinceMs`: what a backfill of older traffic is not. */
export async function heardSince(ch: ClickHouseClient, loops: readonly string[], sinceMs: number): Promise<string[]> {
  return (await perLoop<{ loop_id: string; last_ms: string }>(ch, 'alert_loop_last', loops)).filter((r) => Number(r.last_ms) >= sinceMs).map((r) => r.loop_id);
}

/**
 * Every loop rule's conditions at `now` for these loops (and the children
 * they reported Stuck), and with `rates` the sub-agent failure rates of the
 * window (rows ingested since the window's start less `lateMs`: only recent
 * partitions are read).
 */
export async function evaluate(
  ch: ClickHouseClient,
  loops: readonly string[],
  now: number,
  config: AlertRuleConfig,
  lateMs: number,
  rates = true,
  /**
   * Loops reported Stuck by a parent among a larger set than `loops` (a
   * sweep's chunk: its parent may be in another chunk), so a child judged
   * apart from its parent is still taken as reported Stuck.
   */
  reportedStuck: ReadonlySet<string> = new Set(),
): Promise<AlertCondition[]> {
  const own = await stuckChildren(ch, loops);
  const stuckChildrenSet = new Set([...own, ...loops.filter((l) => reportedStuck.has(l))]);
  const all = [...new Set([...loops, ...own])];
  const folds = foldEvents(await perLoop<LoopEvent>(ch, 'alert_loop_events', all));
  const last = new Map((await perLoop<{ loop_id: string; last_ms: string }>(ch, 'alert_loop_last', all)).map((r) => [r.loop_id, Number(r.last_ms)]));

  const warningRows: LoopWarningsRow[] = [];
  const activity: LoopActivityRow[] = [];
  const human: HumanRequestRow[] = [];
  for (const loopId of all) {
    const fold = folds.get(loopId);
    const lastTime = last.get(loopId);
    if (fold === undefined || lastTime === undefined) continue;
    warningRows.push({ loopId, finishedOutcome: fold.finishedOutcome, stuckByParent: stuckChildrenSet.has(loopId), warnings: fold.warnings });
    activity.push({ loopId, started: fold.started, finished: fold.finishedOutcome !== undefined, lastTime, interruptedSince: fold.interruptedSince });
    for (const [actionId, a] of fold.human) {
      if (a.requestedAt !== undefined) human.push({ loopId, actionId, requestedAt: a.requestedAt, respondedAt: a.respondedAt });
    }
  }
  const findings = await withFilledGaps(
    ch,
    (await perLoop<{ loop_id: string; seq: string; verdict: string; found_ms: string; detail: string }>(ch, 'alert_chain_findings', loops)).map((r) => ({
      loopId: r.loop_id,
      seq: BigInt(r.seq),
      verdict: r.verdict,
      time: Number(r.found_ms),
      detail: r.detail,
    })),
  );
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
async function subagentOutcomes(ch: ClickHouseClient, now: number, config: AlertRuleConfig, lateMs: number): Promise<SubAgentOutcomeRow[]> {
  const windowStart = now - config.windowMs;
  const params = { since_ms: BigInt(Math.max(0, windowStart)), since_ingest: Math.max(0, Math.floor((windowStart - lateMs) / 1000)) };
  const runtime = await rows<{ definition: string; outcome: string; at_ms: string }>(ch, 'alert_subagent_outcomes', params);
  const craze = await rows<{ subagent_type: string; status: string; at_ms: string }>(ch, 'alert_craze_subagent_outcomes', params);
  return [
    ...runtime.map((r) => ({ source: 'runtime' as const, kind: r.definition, outcome: r.outcome, time: Number(r.at_ms) })),
    // A roster row without a type still counts, under a kind of its own.
    ...craze.map((r) => ({ source: 'craze' as const, kind: r.subagent_type === '' ? 'untyped' : r.subagent_type, outcome: r.status, time: Number(r.at_ms) })),
  ];
}
