/**
 * The rows agentledger writes, one interface per table, every column listed
 * (schema/clickhouse/ is the authority). Values are as TabSeparated and
 * JSONEachRow take them on 18.16 and current ClickHouse: Int64/UInt64 money
 * and offsets as decimal strings (exact beyond 2^53), DateTime as
 * 'YYYY-MM-DD hh:mm:ss' UTC text.
 *
 * A neutral module: the stages fill these shapes and the sink writes them,
 * so neither imports the other for them. The insert column lists are the
 * sink's (store/columns.ts).
 */
import type { EnvelopeSlots } from './envelope-facts.js';

export type { EnvelopeFacts, EnvelopeSlots } from './envelope-facts.js';

/** Where a row's record was read; every table ends with these columns. */
export interface KafkaColumns {
  kafka_topic: string;
  kafka_partition: number;
  /** UInt64 as a decimal string. */
  kafka_offset: string;
  /** DateTime text, one value per insert. */
  ingested_at: string;
}

/** schema/clickhouse/0001_envelopes.sql: the envelope and its verdict, before the facts. */
export interface EnvelopeColumns {
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

/** A row of envelopes: 0001's columns, the facts folded into 0022's slots, where its record was read. */
export interface EnvelopeRow extends EnvelopeColumns, EnvelopeSlots, KafkaColumns {}

/**
 * The spend columns of a craze_events row, Int64 as decimal strings: the
 * craze_sessions view sums them under the same names, as exact text.
 */
export interface CrazeSpendColumns {
  /** Picodollars. */
  cost_pico: string;
  input_tokens: string;
  output_tokens: string;
  reasoning_tokens: string;
  cache_read_tokens: string;
  cache_creation_tokens: string;
}

/** schema/clickhouse/0003_craze_events.sql (its spend columns, CrazeSpendColumns, come after `report`). */
export interface CrazeRow extends KafkaColumns, CrazeSpendColumns {
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
