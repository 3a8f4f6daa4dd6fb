/**
 * The tables' columns as the inserts name them, in table order, with each
 * one's ClickHouse type (what a RowBinary insert writes by: table-spec.ts),
 * derived from the row shapes of src/rows/: a field left out does not
 * compile, and test/integration/rowbinary.test.ts checks every type against
 * the migrated tables (specDrift).
 */
import { ENVELOPE_SLOTS } from '../rows/envelope-facts.js';
import type { CrazeRow, EnvelopeColumns, EnvelopeRow, EnvelopeSlots, KafkaColumns } from '../rows/rows.js';
import { joinSpecs, tableSpec, type TableSpec } from './table-spec.js';
import type { Columns } from './tsv.js';

/** Where a row's record was read: the last columns of every table. */
const KAFKA: TableSpec<KafkaColumns> = tableSpec<KafkaColumns>({
  kafka_topic: 'String',
  kafka_partition: 'UInt32',
  kafka_offset: 'UInt64',
  ingested_at: "DateTime('UTC')",
});

/** envelopes (and envelopes_probe): 0001's columns, the slots that store the facts (rows/envelope-facts.ts, 0022), the Kafka ones. */
export const ENVELOPE_TABLE: TableSpec<EnvelopeRow> = joinSpecs(
  joinSpecs(
    tableSpec<EnvelopeColumns>({
      loop_id: 'String',
      seq: 'UInt64',
      time: "DateTime('UTC')",
      time_text: 'String',
      kind: 'String',
      kind_class: 'String',
      hash: 'String',
      computed_hash: 'String',
      payload: 'String',
      verdict: 'String',
      detail: 'String',
      evidence: 'String',
    }),
    tableSpec<EnvelopeSlots>(ENVELOPE_SLOTS),
  ),
  KAFKA,
);

/** The envelopes table's columns as an insert names them. */
export const ENVELOPE_COLUMNS: Columns<EnvelopeRow> = ENVELOPE_TABLE.columns;

/** A loop_heads row (0006): the fields of an envelopes row it keeps, so an envelopes row is one. */
export type LoopHeadRow = Pick<EnvelopeRow, 'loop_id' | 'seq' | 'hash' | 'computed_hash' | 'time_text' | 'verdict'> & KafkaColumns;

/** loop_heads. */
export const LOOP_HEAD_TABLE: TableSpec<LoopHeadRow> = joinSpecs(
  tableSpec<Pick<EnvelopeRow, 'loop_id' | 'seq' | 'hash' | 'computed_hash' | 'time_text' | 'verdict'>>({
    loop_id: 'String',
    seq: 'UInt64',
    hash: 'String',
    computed_hash: 'String',
    time_text: 'String',
    verdict: 'String',
  }),
  KAFKA,
);

/** craze_events (and craze_events_probe), 0003: every field of CrazeRow, the Kafka ones last. */
export const CRAZE_TABLE: TableSpec<CrazeRow> = joinSpecs(tableSpec<Omit<CrazeRow, keyof KafkaColumns>>({
  session_id: 'String',
  incarnation: 'String',
  seq: 'UInt64',
  event_type: 'String',
  at: "DateTime('UTC')",
  at_text: 'String',
  agent: 'String',
  replayed: 'UInt8',
  event: 'String',
  verdict: 'String',
  detail: 'String',
  cwd: 'String',
  provider: 'String',
  craze_version: 'String',
  model: 'String',
  report: 'UInt8',
  cost_pico: 'Int64',
  input_tokens: 'Int64',
  output_tokens: 'Int64',
  reasoning_tokens: 'Int64',
  cache_read_tokens: 'Int64',
  cache_creation_tokens: 'Int64',
  unpriced: 'UInt8',
  turn_id: 'String',
  turn_outcome: 'String',
  turn_synthetic: 'UInt8',
  err_class: 'String',
  subagent_id: 'String',
  subagent_attempt: 'String',
  subagent_change: 'String',
  subagent_status: 'String',
  tool_name: 'String',
  tool_kind: 'String',
  tool_status: 'String',
  tool_exit_code: 'Int64',
  ask_kind: 'String',
  ask_outcome: 'String',
  ask_by: 'String',
  compaction_phase: 'String',
  compaction_reason: 'String',
  tokens_before: 'Int64',
  tokens_after: 'Int64',
  error_class: 'String',
  error_code: 'Int64',
  account_state: 'String',
}), KAFKA);

/** The craze_events table's columns as an insert names them. */
export const CRAZE_COLUMNS: Columns<CrazeRow> = CRAZE_TABLE.columns;
