/**
 * What an alert rule says (issue 11): the rules there are, the severities,
 * and one condition per subject a rule looked at. Every rule (rules.ts)
 * answers in it, the state machine (state.ts) steps on it, and the sweep
 * keeps its states by rule id.
 */

export const RULE_IDS = [
  'stuck_loop',
  'convergence',
  'stalled_loop',
  'waiting_on_human',
  'subagent_failure_rate',
  'chain_integrity',
  'spend_budget',
] as const;
export type RuleId = (typeof RULE_IDS)[number];

export type Severity = 'info' | 'warning' | 'critical';

/** What one rule says about one subject at one `now`. */
export interface AlertCondition {
  readonly rule: RuleId;
  readonly subject: string;
  readonly firing: boolean;
  readonly severity: Severity;
  readonly detail: string;
}
