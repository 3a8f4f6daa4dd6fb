/**
 * The rows agentledger writes, one interface per table, every column listed
 * (schema/clickhouse/ is the authority). Values are as TabSeparated and
 * JSONEachRow take them on 18.16 and current ClickHouse: Int64/UInt64 money
 * and offsets as decimal strings (exact beyond 2^53), DateTime as
 * 'YYYY-MM-DD hh:mm:ss' UTC text.
 *
 * The sink owns these shapes; the stages before it fill them and import
 * nothing of the sink but them.
 */
import { columnsOf, type Columns } from './tsv.js';

/** Where a row's record was read; every table ends with these columns. */
export interface KafkaColumns {
  kafka_topic: string;
  kafka_partition: number;
  /** UInt64 as a decimal string. */
  kafka_offset: string;
  /** DateTime text, one value per insert. */
  ingested_at: string;
}

/**
 * The payload facts on each envelopes row (schema/clickhouse/0008_envelope_facts.sql),
 * filled by account/loop-facts.ts. A column a kind does not carry holds its
 * default: '' or '0'. Int64/UInt64 columns as decimal strings.
 */
export interface EnvelopeFacts {
  /** ModelCalled */
  model_provider: string;
  model_name: string;
  input_tokens: string;
  output_tokens: string;
  /** Int64 picodollars of usage.cost_usd. */
  cost_pico: string;
  /** usage.cost_usd's number text as written. */
  cost_usd_text: string;
  /** ModelCalled and ToolCalled */
  duration_ms: string;
  /** BudgetCharged: Int64 picodollars of usd, its text, tokens, wall_clock_ms, iterations, action_type. */
  budget_pico: string;
  budget_usd_text: string;
  budget_tokens: string;
  budget_wall_ms: string;
  budget_iterations: string;
  action_type: string;
  /** LoopStarted: name, parent_id, depth, seed, config_hash. */
  loop_name: string;
  parent_loop_id: string;
  depth: string;
  loop_seed: string;
  config_hash: string;
  /** SubAgentSpawned and SubAgentCompleted */
  child_loop_id: string;
  definition: string;
  /** SubAgentCompleted and LoopFinished: outcome_kind, error, and child_spend / total_spend (raw text, and its known numbers exactly). */
  outcome: string;
  error: string;
  spend_raw: string;
  spend_pico: string;
  spend_usd_text: string;
  spend_tokens: string;
  spend_wall_ms: string;
  spend_iterations: string;
  /** ForkedFrom: source_loop_id, at_seq. */
  fork_source: string;
  fork_at_seq: string;
  /** ToolCalled */
  tool: string;
  tool_is_error: 0 | 1;
  /** ConvergenceWarning */
  detector: string;
  /** IterationStarted */
  iteration: string;
}

/** schema/clickhouse/0001_envelopes.sql, with the facts of 0008. */
export interface EnvelopeRow extends KafkaColumns, EnvelopeFacts {
  loop_id: string;
  seq: number;
  time: string;
  time_text: string;
  kind: string;
  kind_class: string;
  hash: string;
  computed_hash: string;
  payload: string;
  /** One of verify/chain.ts VERDICTS. */
  verdict: string;
  detail: string;
  evidence: string;
}

/** schema/clickhouse/0003_craze_events.sql */
export interface CrazeRow extends KafkaColumns {
  session_id: string;
  incarnation: string;
  seq: number;
  event_type: string;
  at: string;
  at_text: string;
  agent: string;
  replayed: 0 | 1;
  event: string;
  /** ok, gap, late or malformed (verify/craze-seq.ts). */
  verdict: string;
  detail: string;
  cwd: string;
  provider: string;
  craze_version: string;
  model: string;
  report: 0 | 1;
  /** Int64 picodollars as a decimal string. */
  cost_pico: string;
  input_tokens: string;
  output_tokens: string;
  reasoning_tokens: string;
  cache_read_tokens: string;
  cache_creation_tokens: string;
  unpriced: 0 | 1;
  turn_id: string;
  turn_outcome: string;
  turn_synthetic: 0 | 1;
  err_class: string;
  subagent_id: string;
  subagent_attempt: string;
  subagent_change: string;
  subagent_status: string;
  tool_name: string;
  tool_kind: string;
  tool_status: string;
  tool_exit_code: number;
  ask_kind: string;
  ask_outcome: string;
  ask_by: string;
  compaction_phase: string;
  compaction_reason: string;
  tokens_before: number;
  tokens_after: number;
  error_class: string;
  error_code: number;
  account_state: string;
}

/** The envelopes table's columns as an insert names them (every field of EnvelopeRow). */
export const ENVELOPE_COLUMNS: Columns<EnvelopeRow> = columnsOf<EnvelopeRow>({
  loop_id: true, seq: true, time: true, time_text: true, kind: true, kind_class: true, hash: true, computed_hash: true, payload: true,
  verdict: true, detail: true, evidence: true, model_provider: true, model_name: true, input_tokens: true, output_tokens: true,
  cost_pico: true, cost_usd_text: true, duration_ms: true, budget_pico: true, budget_usd_text: true, budget_tokens: true,
  budget_wall_ms: true, budget_iterations: true, action_type: true, loop_name: true, parent_loop_id: true, depth: true, loop_seed: true,
  config_hash: true, child_loop_id: true, definition: true, outcome: true, error: true, spend_raw: true, spend_pico: true,
  spend_usd_text: true, spend_tokens: true, spend_wall_ms: true, spend_iterations: true, fork_source: true, fork_at_seq: true, tool: true,
  tool_is_error: true, detector: true, iteration: true, kafka_topic: true, kafka_partition: true, kafka_offset: true, ingested_at: true,
});

/** The craze_events table's columns as an insert names them (every field of CrazeRow). */
export const CRAZE_COLUMNS: Columns<CrazeRow> = columnsOf<CrazeRow>({
  session_id: true, incarnation: true, seq: true, event_type: true, at: true, at_text: true, agent: true, replayed: true, event: true,
  verdict: true, detail: true, cwd: true, provider: true, craze_version: true, model: true, report: true, cost_pico: true,
  input_tokens: true, output_tokens: true, reasoning_tokens: true, cache_read_tokens: true, cache_creation_tokens: true, unpriced: true,
  turn_id: true, turn_outcome: true, turn_synthetic: true, err_class: true, subagent_id: true, subagent_attempt: true,
  subagent_change: true, subagent_status: true, tool_name: true, tool_kind: true, tool_status: true, tool_exit_code: true, ask_kind: true,
  ask_outcome: true, ask_by: true, compaction_phase: true, compaction_reason: true, tokens_before: true, tokens_after: true,
  error_class: true, error_code: true, account_state: true, kafka_topic: true, kafka_partition: true, kafka_offset: true,
  ingested_at: true,
});

/** What the envelopes table says about a loop's head (envelope_heads.sql). */
export interface StoredHead {
  readonly seq: number;
  readonly hash: Buffer;
  /** undefined where nothing was recomputed (a gap). */
  readonly computedHash: Buffer | undefined;
  readonly timeText: string;
  /** The head row's verdict was 'mismatch'. */
  readonly mismatched: boolean;
  /** The Kafka partition the head's record was read from (unknown to stores that are not Kafka's). */
  readonly partition?: number;
}

/** A stored version of a (loop, seq): what a redelivery or a fork is compared with (envelope_versions.sql). */
export interface StoredVersion {
  readonly loopId: string;
  readonly seq: number;
  readonly hash: Buffer;
  readonly timeText: string;
  readonly kind: string;
  readonly payload: Buffer;
}

/** What craze_events says about an incarnation's head (craze_heads.sql). */
export interface IncarnationHead {
  readonly seq: number;
  /** JSON text of the accounting state after `seq`. */
  readonly accountState: string;
}

/**
 * One string per (session, incarnation), unambiguous whatever the ids hold (a
 * separator could occur in them: ("a\0b", "c") and ("a", "b\0c") would share
 * a joined key). A seq appended after "\0" stays unambiguous too: the JSON
 * text ends with "]".
 */
export const incarnationKey = (sessionId: string, incarnation: string): string => JSON.stringify([sessionId, incarnation]);
