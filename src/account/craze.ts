/**
 * Spend and outcomes of craze sessions, derived from already-decoded codec
 * events (DESIGN.md §2). Pure: no I/O, no clock, no dependency on the
 * decoder's exact types — `CrazeAccountEvent` is the minimal shape read here,
 * and a thin adapter maps the decoder's records onto it.
 *
 * Spend. A `meta` event whose `state.usage` is present is a usage report; each
 * restates the whole section (`turn` after every step, `session` cumulative
 * over the stored transcript path, earlier incarnations included), so nothing
 * is summed naively. Per (session, incarnation), over the non-replayed
 * reports in seq order, each field of a report's spend is
 * `max(sessionGrowth, turnGrowth, 0)`:
 *  - sessionGrowth = this `session` − the previous report's; for the first,
 *    − the replayed report of a load, else − zero;
 *  - turnGrowth = this `turn` − the previous report's `turn` when no turn
 *    began between them, else this `turn` (a turn begins with a `turn` event
 *    of phase `started` or a `foreign_turn` with `running:true`).
 * The session figure drops when a rewound branch leaves the transcript path,
 * and the turn figure is what still counts the money spent on it; the turn
 * figure misses what a lost turn boundary (a journal gap) or a background
 * sub-agent's spend hides, and the session figure is what counts that.
 * All arithmetic is bigint: `costPicoUsd` is int64 picodollars and cumulative
 * session values pass 2^53 (about $9,007) in long sessions.
 *
 * Counts exclude `replayed` events (a load re-contains its history), and
 * events with `agent` set are kept apart from the session-level counts, each
 * under its sub-agent's id. Sub-agents' usage is already inside the parent's
 * `session`, so an agent-scoped usage report is never spend.
 */

/** One Spend section of a usage report; token counts and cost as bigint. */
export interface Spend {
  readonly input: bigint;
  readonly output: bigint;
  /** Part of `output`, never added to it. */
  readonly reasoning: bigint;
  readonly cacheRead: bigint;
  readonly cacheCreation: bigint;
  /** Priced part's cost in picodollars (10⁻¹² USD). */
  readonly costPicoUsd: bigint;
  /** Some usage had no price: the cost is a floor. */
  readonly unpriced: boolean;
}

/** The bigint fields of a Spend, in the order reports and rollups list them. */
export const SPEND_FIELDS = ['input', 'output', 'reasoning', 'cacheRead', 'cacheCreation', 'costPicoUsd'] as const;
export type SpendField = (typeof SPEND_FIELDS)[number];

/** A fieldwise difference or sum of Spends: any field may be negative. */
export type SpendAmounts = { readonly [K in SpendField]: bigint };

export const ZERO_SPEND: Spend = {
  input: 0n,
  output: 0n,
  reasoning: 0n,
  cacheRead: 0n,
  cacheCreation: 0n,
  costPicoUsd: 0n,
  unpriced: false,
};

/**
 * The part of a craze codec event this module reads, with the codec's own key
 * names. Absent means zero/empty, as in the codec.
 */
export interface CrazeAccountEvent {
  /** Per-incarnation sequence number, contiguous from 1 on the wire. */
  readonly seq: number;
  readonly type: string;
  readonly replayed?: boolean;
  /** The sub-agent the event belongs to; absent or '' for the main transcript. */
  readonly agent?: string;
  /** The event's own time, RFC 3339. */
  readonly at?: string;
  readonly state?: {
    readonly model?: string;
    readonly usage?: { readonly turn: Spend; readonly session: Spend };
  };
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

/** What one non-replayed, session-level usage report spent. */
export interface ReportSpend {
  readonly seq: number;
  /** The report's own time; null when the event carried none. */
  readonly at: string | null;
  /** The session's model at the time (the latest `state.model`); '' when none was seen. */
  readonly model: string;
  /** Per field max(sessionGrowth, turnGrowth, 0); `unpriced` marks a floor. */
  readonly spend: Spend;
  readonly sessionGrowth: SpendAmounts;
  readonly turnGrowth: SpendAmounts;
  /** A turn began between the previous report and this one. */
  readonly turnBegan: boolean;
}

export type TurnOutcome = 'done' | 'failed' | 'cancelled';
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

// ---------------------------------------------------------------------------
// Serialised state: JSON-safe (bigints as decimal strings), so the consumer
// can persist it beside its progress and restore it after a restart.

export type SpendJson = { readonly [K in SpendField]: string } & { readonly unpriced: boolean };
export type SpendTotalsJson = { readonly [K in SpendField]: string } & {
  readonly reports: number;
  readonly unpricedReports: number;
};

export interface ScopeStateJson {
  readonly turns: readonly TurnEnding[];
  readonly subagents: readonly SubagentRecord[];
  readonly errors: readonly ErrorRecord[];
  readonly compactions: readonly CompactionRecord[];
  readonly tools: readonly ToolCallRecord[];
  readonly permissionAsks: readonly AskRecord[];
  readonly foreignTurns: readonly ForeignTurnRecord[];
}

export interface IncarnationSpendState {
  readonly v: 1;
  readonly sessionId: string;
  readonly incarnation: string;
  readonly lastSeq: number;
  readonly model: string;
  readonly prevSession: SpendJson | null;
  readonly prevTurn: SpendJson | null;
  readonly turnBegan: boolean;
  readonly sawLiveReport: boolean;
  readonly totals: SpendTotalsJson;
  readonly byModel: readonly (readonly [string, SpendTotalsJson])[];
  readonly scopes: readonly (readonly [string, ScopeStateJson])[];
}

// ---------------------------------------------------------------------------

const CANCEL_STOP_REASONS = new Set(['cancelled', 'closing']);
/**
 * Error classes that are a cancel, not a failure: a prompt withdrawn before it
 * was sent (`prompt_cancelled`, which craze writes beside stop reason
 * `cancelled`) and the prompt caller's own context cancelled (`canceled`).
 */
const CANCEL_ERR_CLASSES = new Set(['prompt_cancelled', 'canceled']);

/**
 * A turn ending's outcome. A cancel wins over the error a cancelled ending
 * may carry: craze's own synthetic ending of a withdrawn prompt is
 * `{stopReason:"cancelled", errClass:"prompt_cancelled", err:…}`, and
 * protocol.md's `lastTurn.outcome` calls that `cancelled`.
 */
export function classifyTurnEnding(turn: NonNullable<CrazeAccountEvent['turn']>): TurnOutcome {
  const stopReason = turn.stopReason ?? '';
  const errClass = turn.errClass ?? '';
  if (CANCEL_STOP_REASONS.has(stopReason) || CANCEL_ERR_CLASSES.has(errClass)) return 'cancelled';
  if (errClass !== '' || (turn.err ?? '') !== '') return 'failed';
  return 'done';
}

function subagentOutcome(status: string | null): SubagentOutcome {
  if (status === null) return 'abandoned';
  if (status === 'completed' || status === 'failed' || status === 'cancelled') return status;
  return 'other';
}

function diff(a: Spend, b: Spend): SpendAmounts {
  return {
    input: a.input - b.input,
    output: a.output - b.output,
    reasoning: a.reasoning - b.reasoning,
    cacheRead: a.cacheRead - b.cacheRead,
    cacheCreation: a.cacheCreation - b.cacheCreation,
    costPicoUsd: a.costPicoUsd - b.costPicoUsd,
  };
}

function max3(a: bigint, b: bigint): bigint {
  const m = a > b ? a : b;
  return m > 0n ? m : 0n;
}

/** The six amounts as decimal strings: bigint does not survive JSON.stringify. */
function amountsToJson(a: SpendAmounts): { [K in SpendField]: string } {
  return Object.fromEntries(SPEND_FIELDS.map((f) => [f, a[f].toString()])) as { [K in SpendField]: string };
}

function amountsFromJson(j: { readonly [K in SpendField]: string }): { [K in SpendField]: bigint } {
  return Object.fromEntries(SPEND_FIELDS.map((f) => [f, BigInt(j[f])])) as { [K in SpendField]: bigint };
}

function spendToJson(s: Spend): SpendJson {
  return { ...amountsToJson(s), unpriced: s.unpriced };
}

function spendFromJson(j: SpendJson): Spend {
  return { ...amountsFromJson(j), unpriced: j.unpriced };
}

interface MutableTotals {
  input: bigint;
  output: bigint;
  reasoning: bigint;
  cacheRead: bigint;
  cacheCreation: bigint;
  costPicoUsd: bigint;
  reports: number;
  unpricedReports: number;
}

function emptyTotals(): MutableTotals {
  return { input: 0n, output: 0n, reasoning: 0n, cacheRead: 0n, cacheCreation: 0n, costPicoUsd: 0n, reports: 0, unpricedReports: 0 };
}

function addReport(t: MutableTotals, s: Spend): void {
  for (const f of SPEND_FIELDS) t[f] += s[f];
  t.reports += 1;
  if (s.unpriced) t.unpricedReports += 1;
}

function totalsToJson(t: MutableTotals): SpendTotalsJson {
  return { ...amountsToJson(t), reports: t.reports, unpricedReports: t.unpricedReports };
}

function totalsFromJson(j: SpendTotalsJson): MutableTotals {
  return { ...amountsFromJson(j), reports: j.reports, unpricedReports: j.unpricedReports };
}

class Scope {
  // Maps keep first-seen order, which is seq order: the outcome lists read in
  // the order things happened. Keys are arbitrary producer strings, hence Map
  // rather than an object (no prototype keys).
  readonly turns = new Map<string, TurnEnding>();
  readonly subagents = new Map<string, SubagentRecord>();
  readonly errors: ErrorRecord[] = [];
  readonly compactions: CompactionRecord[] = [];
  readonly tools = new Map<string, ToolCallRecord>();
  readonly permissionAsks = new Map<string, AskRecord>();
  readonly foreignTurns = new Map<string, ForeignTurnRecord>();

  toJSON(): ScopeStateJson {
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

  static fromJSON(j: ScopeStateJson): Scope {
    const s = new Scope();
    for (const t of j.turns) s.turns.set(t.turnId, t);
    for (const a of j.subagents) s.subagents.set(subagentKey(a.id, a.attemptId), a);
    s.errors.push(...j.errors);
    s.compactions.push(...j.compactions);
    for (const t of j.tools) s.tools.set(t.id, t);
    for (const a of j.permissionAsks) s.permissionAsks.set(a.id, a);
    for (const f of j.foreignTurns) s.foreignTurns.set(f.id, f);
    return s;
  }
}

function subagentKey(id: string, attemptId: string): string {
  return JSON.stringify([id, attemptId]);
}

/**
 * Spend and outcomes of one (session, incarnation). Feed its events in seq
 * order; a seq at or below the last one fed is a redelivery and is ignored,
 * so replaying a batch after a crash cannot count anything twice. The whole
 * state round-trips through `toJSON`/`fromJSON`.
 */
export class IncarnationSpend {
  readonly sessionId: string;
  readonly incarnation: string;
  private lastSeq = 0;
  private model = '';
  /** The previous report's `session` (or the load's replayed report's, before the first live one). */
  private prevSession: Spend | undefined;
  private prevTurn: Spend | undefined;
  private turnBegan = false;
  private sawLiveReport = false;
  private readonly totals: MutableTotals = emptyTotals();
  private readonly byModel = new Map<string, MutableTotals>();
  private readonly scopes = new Map<string, Scope>();

  constructor(sessionId: string, incarnation: string) {
    this.sessionId = sessionId;
    this.incarnation = incarnation;
  }

  /** The highest seq fed so far; 0 before any. */
  get headSeq(): number {
    return this.lastSeq;
  }

  /** The session's model as of the last event fed ('' when none was seen). */
  get currentModel(): string {
    return this.model;
  }

  /**
   * Folds one event. Returns the report's spend when the event is a
   * non-replayed, session-level usage report, else undefined.
   */
  feed(ev: CrazeAccountEvent): ReportSpend | undefined {
    if (ev.seq <= this.lastSeq) return undefined;
    this.lastSeq = ev.seq;
    const agent = ev.agent ?? '';
    const replayed = ev.replayed === true;

    if (agent === '' && ev.type === 'meta' && ev.state !== undefined) {
      // The model in force is state, not a count: a load's replayed install
      // delta is exactly where a resumed incarnation learns it. It applies
      // before the same delta's usage section.
      if (ev.state.model !== undefined) this.model = ev.state.model;
    }

    if (!replayed && agent === '') {
      if (ev.type === 'turn' && ev.turn?.phase === 'started') this.turnBegan = true;
      if (ev.type === 'foreign_turn' && ev.foreignTurn?.running === true) this.turnBegan = true;
    }

    if (!replayed) this.countOutcome(ev, agent);

    const usage = ev.type === 'meta' ? ev.state?.usage : undefined;
    // A sub-agent's usage is already inside the parent's `session`.
    if (usage === undefined || agent !== '') return undefined;
    if (replayed) {
      // A load's report: the baseline of the first live report. One after a
      // live report (a second load into the same incarnation) is history
      // already measured, and DESIGN §2 measures only against the previous
      // live report from then on.
      if (!this.sawLiveReport) {
        this.prevSession = usage.session;
        this.prevTurn = usage.turn;
        this.turnBegan = false;
      }
      return undefined;
    }

    const sessionGrowth = diff(usage.session, this.prevSession ?? ZERO_SPEND);
    const turnGrowth =
      this.prevTurn !== undefined && !this.turnBegan ? diff(usage.turn, this.prevTurn) : diff(usage.turn, ZERO_SPEND);
    // A floor when the turn's figure holds unpriced usage, or when the
    // session's became unpriced with this report (session.unpriced, once
    // set, stays set on every later report of the path).
    const unpriced = usage.turn.unpriced || (usage.session.unpriced && !(this.prevSession?.unpriced ?? false));
    const spend: Spend = {
      input: max3(sessionGrowth.input, turnGrowth.input),
      output: max3(sessionGrowth.output, turnGrowth.output),
      reasoning: max3(sessionGrowth.reasoning, turnGrowth.reasoning),
      cacheRead: max3(sessionGrowth.cacheRead, turnGrowth.cacheRead),
      cacheCreation: max3(sessionGrowth.cacheCreation, turnGrowth.cacheCreation),
      costPicoUsd: max3(sessionGrowth.costPicoUsd, turnGrowth.costPicoUsd),
      unpriced,
    };
    const report: ReportSpend = {
      seq: ev.seq,
      at: ev.at ?? null,
      model: this.model,
      spend,
      sessionGrowth,
      turnGrowth,
      turnBegan: this.turnBegan,
    };
    this.prevSession = usage.session;
    this.prevTurn = usage.turn;
    this.turnBegan = false;
    this.sawLiveReport = true;
    addReport(this.totals, spend);
    let m = this.byModel.get(this.model);
    if (m === undefined) {
      m = emptyTotals();
      this.byModel.set(this.model, m);
    }
    addReport(m, spend);
    return report;
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
        const key = subagentKey(id, attemptId);
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

  /** Spend summed over this incarnation's live reports. */
  spendTotals(): SpendTotals {
    return { ...this.totals };
  }

  /** The same, per model in force at each report. */
  spendByModel(): ReadonlyMap<string, SpendTotals> {
    return new Map([...this.byModel].map(([k, v]) => [k, { ...v }]));
  }

  /** Session-level outcomes (events with no `agent`). */
  sessionOutcomes(): ScopeOutcomes {
    return (this.scopes.get('') ?? new Scope()).toJSON();
  }

  /** Outcomes of sub-agent transcripts, by agent id, kept apart from the session's. */
  agentOutcomes(): ReadonlyMap<string, ScopeOutcomes> {
    const out = new Map<string, ScopeOutcomes>();
    for (const [agent, s] of this.scopes) if (agent !== '') out.set(agent, s.toJSON());
    return out;
  }

  toJSON(): IncarnationSpendState {
    return {
      v: 1,
      sessionId: this.sessionId,
      incarnation: this.incarnation,
      lastSeq: this.lastSeq,
      model: this.model,
      prevSession: this.prevSession === undefined ? null : spendToJson(this.prevSession),
      prevTurn: this.prevTurn === undefined ? null : spendToJson(this.prevTurn),
      turnBegan: this.turnBegan,
      sawLiveReport: this.sawLiveReport,
      totals: totalsToJson(this.totals),
      byModel: [...this.byModel].map(([k, v]) => [k, totalsToJson(v)] as const),
      scopes: [...this.scopes].map(([k, v]) => [k, v.toJSON()] as const),
    };
  }

  static fromJSON(state: IncarnationSpendState): IncarnationSpend {
    if (state.v !== 1) throw new Error(`craze account state: unknown version ${String(state.v)}`);
    const s = new IncarnationSpend(state.sessionId, state.incarnation);
    s.lastSeq = state.lastSeq;
    s.model = state.model;
    s.prevSession = state.prevSession === null ? undefined : spendFromJson(state.prevSession);
    s.prevTurn = state.prevTurn === null ? undefined : spendFromJson(state.prevTurn);
    s.turnBegan = state.turnBegan;
    s.sawLiveReport = state.sawLiveReport;
    Object.assign(s.totals, totalsFromJson(state.totals));
    for (const [k, v] of state.byModel) s.byModel.set(k, totalsFromJson(v));
    for (const [k, v] of state.scopes) s.scopes.set(k, Scope.fromJSON(v));
    return s;
  }
}

/** What the `sessions` command shows for one craze session (all incarnations). */
export interface SessionTotals {
  readonly sessionId: string;
  readonly incarnations: number;
  readonly costPicoUsd: bigint;
  readonly inputTokens: bigint;
  readonly outputTokens: bigint;
  readonly reasoningTokens: bigint;
  readonly cacheReadTokens: bigint;
  readonly cacheCreationTokens: bigint;
  readonly unpricedReports: number;
  readonly turnsDone: number;
  readonly turnsFailed: number;
  readonly turnsCancelled: number;
  readonly subagentsCompleted: number;
  readonly subagentsFailed: number;
  readonly subagentsCancelled: number;
  readonly subagentsAbandoned: number;
}

/**
 * Reduces a session's incarnations to its totals. Spend is the sum of every
 * incarnation's reports (each already measured against its own load, so no
 * incarnation's history is counted twice); outcome counts are session-level
 * only. Incarnations are counted by distinct id.
 */
export function sessionTotals(sessionId: string, incarnations: Iterable<IncarnationSpend>): SessionTotals {
  const ids = new Set<string>();
  const spend = emptyTotals();
  const turns = { done: 0, failed: 0, cancelled: 0 };
  const subagents = { completed: 0, failed: 0, cancelled: 0, abandoned: 0, other: 0 };
  for (const inc of incarnations) {
    if (inc.sessionId !== sessionId) {
      throw new Error(`craze account: incarnation ${inc.incarnation} belongs to ${inc.sessionId}, not ${sessionId}`);
    }
    ids.add(inc.incarnation);
    const t = inc.spendTotals();
    spend.input += t.input;
    spend.output += t.output;
    spend.reasoning += t.reasoning;
    spend.cacheRead += t.cacheRead;
    spend.cacheCreation += t.cacheCreation;
    spend.costPicoUsd += t.costPicoUsd;
    spend.reports += t.reports;
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

/** Feeds one incarnation's events (in seq order) into a fresh IncarnationSpend. */
export function accountIncarnation(
  sessionId: string,
  incarnation: string,
  events: Iterable<CrazeAccountEvent>,
): { readonly account: IncarnationSpend; readonly reports: readonly ReportSpend[] } {
  const account = new IncarnationSpend(sessionId, incarnation);
  const reports: ReportSpend[] = [];
  for (const ev of events) {
    const r = account.feed(ev);
    if (r !== undefined) reports.push(r);
  }
  return { account, reports };
}
