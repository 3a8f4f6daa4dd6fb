/**
 * The rows the alert rules read (issue 11): one shape per kind of row the
 * rules take, filled by the reading side (evaluate.ts, budgets.ts) from
 * ClickHouse and the budgets file. Times are Unix milliseconds, amounts
 * bigint picodollars.
 */

/** One ConvergenceWarning envelope of a loop. */
export interface ConvergenceWarning {
  readonly time: number;
  readonly detector: string;
  readonly reason: string;
  readonly count: number;
}

/** A loop's end and its convergence warnings: the input of `stuck_loop` and `convergence`. */
export interface LoopWarningsRow {
  readonly loopId: string;
  /** LoopFinished.outcome_kind, absent while the loop runs. */
  readonly finishedOutcome?: string;
  /** A parent's SubAgentCompleted reported this loop (its child) as Stuck. */
  readonly stuckByParent?: boolean;
  readonly warnings: readonly ConvergenceWarning[];
}

/** How far a loop got and when it was last heard from: the input of `stalled_loop`. */
export interface LoopActivityRow {
  readonly loopId: string;
  readonly started: boolean;
  readonly finished: boolean;
  /** Time of the loop's last envelope. */
  readonly lastTime: number;
  /** Time of an Interrupted envelope not followed by Resumed. */
  readonly interruptedSince?: number;
}

/** One HumanRequested, with its HumanResponded (same action_id) if there is one. */
export interface HumanRequestRow {
  readonly loopId: string;
  readonly actionId: string;
  readonly requestedAt: number;
  readonly respondedAt?: number;
}

/**
 * One finished sub-agent. runtime: `kind` is SubAgentCompleted.definition and
 * `outcome` its outcome_kind; craze: `kind` is the sub-agent type and
 * `outcome` one of completed, failed, cancelled, abandoned (or another status).
 */
export interface SubAgentOutcomeRow {
  readonly source: 'runtime' | 'craze';
  readonly kind: string;
  readonly outcome: string;
  readonly time: number;
}

/** A stored envelope whose chain verdict is a violation or a gap. */
export interface ChainFindingRow {
  readonly loopId: string;
  readonly seq: bigint;
  readonly verdict: string;
  /** When the row was ingested (the gap's grace runs from here). */
  readonly time: number;
  readonly detail: string;
  /** For a gap: the missing seqs have arrived since. Absent counts as not filled. */
  readonly filled?: boolean;
}

export type BudgetKind = 'root' | 'name' | 'project' | 'day';

/** A configured USD budget, in picodollars. `key` is a root loop id, a loop name, a craze project path or a UTC day `YYYY-MM-DD`. */
export interface SpendBudget {
  readonly kind: BudgetKind;
  readonly key: string;
  readonly limitPico: bigint;
}

/** Spend so far of one budget's scope; several rows of one scope add up. */
export interface SpendRow {
  readonly kind: BudgetKind;
  readonly key: string;
  readonly spentPico: bigint;
}
