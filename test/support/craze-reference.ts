/**
 * An independent, test-only reference of craze outcomes and session totals:
 * outcome lists per transcript, folded in memory from raw events, and the totals `sessions` shows.
 *
 * Production never folds outcomes in memory: it stores each event's values
 * (src/account/craze-outcomes.ts) and counts them over the rows in SQL
 * (schema/clickhouse/0004_craze_views.sql). This reference folds the events
 * themselves, so that the hand-computed corpus (test/fixtures/craze:
 * expected.json, GROUND_TRUTH.md) can be checked without ClickHouse. Spend is
 * production's: the reports of src/account/craze-spend.ts, summed; a turn
 * ending is classified by production's classifyTurnEnding (one rule, one definition).
 */
import { classifyTurnEnding, type TurnOutcome } from '../../src/account/craze-outcomes.js';
import { IncarnationSpend, type CrazeSpendEvent, type ReportSpend, type SpendAmounts } from '../../src/account/craze-spend.js';
import type { SessionTotals as SessionTotalsOf } from '../../src/read/session-reads.js';

/**
 * The part of a craze codec event the reference reads, with the codec's own
 * key names. Absent means zero/empty, as in the codec. It fits both
 * production shapes (CrazeSpendEvent, CrazeOutcomeEvent).
 */
export interface CrazeAccountEvent extends Omit<CrazeSpendEvent, 'turn' | 'foreignTurn'> {
  readonly turn?: {
    readonly id?: string;
    readonly phase?: string;
    readonly stopReason?: string;
    readonly errClass?: string;
    readonly err?: string;
    readonly synthetic?: boolean;
  };
  readonly foreignTurn?: { readonly id?: string; readonly reason?: string; readonly running?: boolean };
  readonly subagent?: {
    readonly id?: string;
    readonly attemptId?: string;
    readonly status?: string;
    readonly background?: boolean;
  };
  readonly subagentChange?: string;
  readonly err?: { readonly class?: string; readonly code?: number; readonly message?: string };
  readonly compaction?: {
    readonly phase?: string;
    readonly reason?: string;
    readonly tokensBefore?: number;
    readonly tokensAfter?: number;
    readonly err?: string;
  };
  readonly tool?: {
    readonly id?: string;
    readonly name?: string;
    readonly kind?: string;
    readonly status?: string;
    readonly output?: { readonly exitCode?: number };
  };
  readonly ask?: { readonly id?: string; readonly kind?: string; readonly outcome?: string; readonly by?: string };
}

export type SubagentOutcome = 'completed' | 'failed' | 'cancelled' | 'abandoned' | 'other';

export interface TurnEnding {
  readonly turnId: string;
  readonly seq: number;
  readonly at: string | null;
  readonly outcome: TurnOutcome;
  readonly stopReason: string;
  readonly errClass: string;
  readonly synthetic: boolean;
}

export interface SubagentRecord {
  readonly id: string;
  readonly attemptId: string;
  readonly background: boolean;
  /** Seq of the last `finished` row; null while none was seen (abandoned). */
  readonly finishedSeq: number | null;
  /** `subagent.status` of the last `finished` row. */
  readonly status: string | null;
  readonly outcome: SubagentOutcome;
}

export interface ErrorRecord {
  readonly seq: number;
  readonly at: string | null;
  readonly class: string;
  readonly code: number;
}

export interface CompactionRecord {
  readonly seq: number;
  readonly at: string | null;
  readonly reason: string;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** The ended compaction carried `err`: no summary was written. */
  readonly failed: boolean;
}

export interface ToolCallRecord {
  readonly id: string;
  /** Seq of the latest update, whose status is kept. */
  readonly seq: number;
  readonly name: string;
  readonly kind: string;
  readonly status: string;
  /** Null unless the tool reported one (0 included). */
  readonly exitCode: number | null;
}

export interface AskRecord {
  readonly id: string;
  readonly seq: number;
  readonly outcome: string;
  readonly by: string;
}

export interface ForeignTurnRecord {
  readonly id: string;
  readonly reason: string;
  readonly startSeq: number | null;
  readonly endSeq: number | null;
}

/** Outcomes of one transcript: the main one (agent '') or one sub-agent's. */
export interface ScopeOutcomes {
  readonly turns: readonly TurnEnding[];
  readonly subagents: readonly SubagentRecord[];
  readonly errors: readonly ErrorRecord[];
  readonly compactions: readonly CompactionRecord[];
  readonly tools: readonly ToolCallRecord[];
  /** Permission asks only (`ask.kind:"permission"`). */
  readonly permissionAsks: readonly AskRecord[];
  readonly foreignTurns: readonly ForeignTurnRecord[];
}

/** Spend summed over reports, with how many reports and how many were floors. */
export interface SpendTotals extends SpendAmounts {
  readonly reports: number;
  readonly unpricedReports: number;
}

function subagentOutcome(status: string | null): SubagentOutcome {
  if (status === null) return 'abandoned';
  if (status === 'completed' || status === 'failed' || status === 'cancelled') return status;
  return 'other';
}

class Scope {
  // Maps keep first-seen order, which is seq order: the outcome lists read in
  // the order things happened. Keys are arbitrary producer strings, hence Map
  // rather than an object (no prototype keys).
  readonly turns = new Map<string, TurnEnding>();
  /** Keyed by JSON [id, attemptId]. */
  readonly subagents = new Map<string, SubagentRecord>();
  readonly errors: ErrorRecord[] = [];
  readonly compactions: CompactionRecord[] = [];
  readonly tools = new Map<string, ToolCallRecord>();
  readonly permissionAsks = new Map<string, AskRecord>();
  readonly foreignTurns = new Map<string, ForeignTurnRecord>();

  outcomes(): ScopeOutcomes {
    return {
      turns: [...this.turns.values()],
      subagents: [...this.subagents.values()],
      errors: [...this.errors],
      compactions: [...this.compactions],
      tools: [...this.tools.values()],
      permissionAsks: [...this.permissionAsks.values()],
      foreignTurns: [...this.foreignTurns.values()],
    };
  }
}

/**
 * Spend (production's) and outcomes (the reference's) of one (session,
 * incarnation). Events are fed in seq order; a seq at or below the head is a
 * redelivery and is ignored by both.
 */
export class IncarnationAccount {
  private readonly spend: IncarnationSpend;
  private readonly reports: ReportSpend[] = [];
  private readonly scopes = new Map<string, Scope>();

  constructor(
    readonly sessionId: string,
    readonly incarnation: string,
  ) {
    this.spend = new IncarnationSpend(sessionId, incarnation);
  }

  feed(ev: CrazeAccountEvent): ReportSpend | undefined {
    if (ev.seq <= this.spend.headSeq) return undefined;
    // Counts exclude replayed events: a load re-contains its history.
    if (ev.replayed !== true) this.countOutcome(ev, ev.agent ?? '');
    const report = this.spend.feed(ev);
    if (report !== undefined) this.reports.push(report);
    return report;
  }

  /** Spend summed over this incarnation's live reports. */
  spendTotals(): SpendTotals {
    const t = { input: 0n, output: 0n, reasoning: 0n, cacheRead: 0n, cacheCreation: 0n, costPicoUsd: 0n, reports: 0, unpricedReports: 0 };
    for (const { spend } of this.reports) {
      t.input += spend.input;
      t.output += spend.output;
      t.reasoning += spend.reasoning;
      t.cacheRead += spend.cacheRead;
      t.cacheCreation += spend.cacheCreation;
      t.costPicoUsd += spend.costPicoUsd;
      t.reports += 1;
      if (spend.unpriced) t.unpricedReports += 1;
    }
    return t;
  }

  /** Session-level outcomes (events with no `agent`). */
  sessionOutcomes(): ScopeOutcomes {
    return (this.scopes.get('') ?? new Scope()).outcomes();
  }

  /** Outcomes of sub-agent transcripts, by agent id, kept apart from the session's. */
  agentOutcomes(): ReadonlyMap<string, ScopeOutcomes> {
    const out = new Map<string, ScopeOutcomes>();
    for (const [agent, s] of this.scopes) if (agent !== '') out.set(agent, s.outcomes());
    return out;
  }

  private scope(agent: string): Scope {
    let s = this.scopes.get(agent);
    if (s === undefined) {
      s = new Scope();
      this.scopes.set(agent, s);
    }
    return s;
  }

  private countOutcome(ev: CrazeAccountEvent, agent: string): void {
    const at = ev.at ?? null;
    switch (ev.type) {
      case 'turn': {
        if (ev.turn?.phase !== 'ended') return;
        const turnId = ev.turn.id ?? '';
        // Keyed by (incarnation, turn.id): a second ending of the same turn
        // replaces the first rather than counting the turn twice.
        this.scope(agent).turns.set(turnId, {
          turnId,
          seq: ev.seq,
          at,
          outcome: classifyTurnEnding(ev.turn),
          stopReason: ev.turn.stopReason ?? '',
          errClass: ev.turn.errClass ?? '',
          synthetic: ev.turn.synthetic === true,
        });
        return;
      }
      case 'subagent': {
        const row = ev.subagent;
        if (row === undefined) return;
        const id = row.id ?? '';
        const attemptId = row.attemptId ?? '';
        const key = JSON.stringify([id, attemptId]);
        const scope = this.scope(agent);
        const prior = scope.subagents.get(key);
        const background = (prior?.background ?? false) || row.background === true;
        if (ev.subagentChange === 'finished') {
          // The last finished row by seq wins.
          scope.subagents.set(key, {
            id,
            attemptId,
            background,
            finishedSeq: ev.seq,
            status: row.status ?? '',
            outcome: subagentOutcome(row.status ?? ''),
          });
        } else if (prior === undefined) {
          // Spawned (or first seen in progress): abandoned until a finished row.
          scope.subagents.set(key, { id, attemptId, background, finishedSeq: null, status: null, outcome: 'abandoned' });
        } else if (background !== prior.background) {
          scope.subagents.set(key, { ...prior, background });
        }
        return;
      }
      case 'foreign_turn': {
        const ft = ev.foreignTurn;
        if (ft === undefined) return;
        const id = ft.id ?? '';
        const scope = this.scope(agent);
        const prior = scope.foreignTurns.get(id);
        const reason = ft.reason !== undefined && ft.reason !== '' ? ft.reason : (prior?.reason ?? '');
        scope.foreignTurns.set(
          id,
          ft.running === true
            ? { id, reason, startSeq: ev.seq, endSeq: null }
            : { id, reason, startSeq: prior?.startSeq ?? null, endSeq: ev.seq },
        );
        return;
      }
      case 'error': {
        this.scope(agent).errors.push({ seq: ev.seq, at, class: ev.err?.class ?? '', code: ev.err?.code ?? 0 });
        return;
      }
      case 'compaction': {
        const c = ev.compaction;
        // The ended one carries the outcome; a replay carries only ended ones.
        if (c?.phase !== 'ended') return;
        this.scope(agent).compactions.push({
          seq: ev.seq,
          at,
          reason: c.reason ?? '',
          tokensBefore: c.tokensBefore ?? 0,
          tokensAfter: c.tokensAfter ?? 0,
          failed: (c.err ?? '') !== '',
        });
        return;
      }
      case 'tool': {
        const t = ev.tool;
        if (t === undefined) return;
        const id = t.id ?? '';
        const scope = this.scope(agent);
        const prior = scope.tools.get(id);
        // Tool events are updates of one call: keep what the latest says,
        // and what an earlier one said that the latest leaves out.
        scope.tools.set(id, {
          id,
          seq: ev.seq,
          name: t.name !== undefined && t.name !== '' ? t.name : (prior?.name ?? ''),
          kind: t.kind !== undefined && t.kind !== '' ? t.kind : (prior?.kind ?? ''),
          status: t.status !== undefined && t.status !== '' ? t.status : (prior?.status ?? ''),
          exitCode: t.output?.exitCode ?? prior?.exitCode ?? null,
        });
        return;
      }
      case 'ask': {
        const a = ev.ask;
        if (a?.kind !== 'permission') return;
        const id = a.id ?? '';
        this.scope(agent).permissionAsks.set(id, { id, seq: ev.seq, outcome: a.outcome ?? '', by: a.by ?? '' });
        return;
      }
      default:
        return;
    }
  }
}

/** Feeds one incarnation's events (in seq order) into a fresh IncarnationAccount. */
export function accountIncarnation(
  sessionId: string,
  incarnation: string,
  events: Iterable<CrazeAccountEvent>,
): { readonly account: IncarnationAccount; readonly reports: readonly ReportSpend[] } {
  const account = new IncarnationAccount(sessionId, incarnation);
  const reports: ReportSpend[] = [];
  for (const ev of events) {
    const r = account.feed(ev);
    if (r !== undefined) reports.push(r);
  }
  return { account, reports };
}

/** What the `sessions` command shows for one craze session (all incarnations). */
export type SessionTotals = Readonly<SessionTotalsOf<bigint, bigint>>;

/**
 * Reduces a session's incarnations to its totals. Spend is the sum of every
 * incarnation's reports (each already measured against its own load, so no
 * incarnation's history is counted twice); outcome counts are session-level
 * only. Incarnations are counted by distinct id.
 */
export function sessionTotals(sessionId: string, incarnations: Iterable<IncarnationAccount>): SessionTotals {
  const ids = new Set<string>();
  const spend = { input: 0n, output: 0n, reasoning: 0n, cacheRead: 0n, cacheCreation: 0n, costPicoUsd: 0n, unpricedReports: 0 };
  const turns = { done: 0, failed: 0, cancelled: 0 };
  const subagents = { completed: 0, failed: 0, cancelled: 0, abandoned: 0, other: 0 };
  for (const inc of incarnations) {
    if (inc.sessionId !== sessionId) {
      throw new Error(`craze reference: incarnation ${inc.incarnation} belongs to ${inc.sessionId}, not ${sessionId}`);
    }
    ids.add(inc.incarnation);
    const t = inc.spendTotals();
    spend.input += t.input;
    spend.output += t.output;
    spend.reasoning += t.reasoning;
    spend.cacheRead += t.cacheRead;
    spend.cacheCreation += t.cacheCreation;
    spend.costPicoUsd += t.costPicoUsd;
    spend.unpricedReports += t.unpricedReports;
    const o = inc.sessionOutcomes();
    for (const turn of o.turns) turns[turn.outcome] += 1;
    for (const sa of o.subagents) subagents[sa.outcome] += 1;
  }
  return {
    sessionId,
    incarnations: ids.size,
    costPicoUsd: spend.costPicoUsd,
    inputTokens: spend.input,
    outputTokens: spend.output,
    reasoningTokens: spend.reasoning,
    cacheReadTokens: spend.cacheRead,
    cacheCreationTokens: spend.cacheCreation,
    unpricedReports: spend.unpricedReports,
    turnsDone: turns.done,
    turnsFailed: turns.failed,
    turnsCancelled: turns.cancelled,
    subagentsCompleted: subagents.completed,
    subagentsFailed: subagents.failed,
    subagentsCancelled: subagents.cancelled,
    subagentsAbandoned: subagents.abandoned,
  };
}
