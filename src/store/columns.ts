/**
 * The column lists the inserts name, in table order, derived from the row
 * shapes of src/rows/: a field left out of a list does not compile.
 */
import { SLOT_NAMES } from '../rows/envelope-facts.js';
import type { CrazeRow, EnvelopeColumns, EnvelopeRow, KafkaColumns } from '../rows/rows.js';
import { columnsOf, type Columns } from './tsv.js';

/** Where a row's record was read: the last columns of every table. */
const KAFKA_COLUMNS = columnsOf<KafkaColumns>({ kafka_topic: true, kafka_partition: true, kafka_offset: true, ingested_at: true });

/** The envelopes table's columns as an insert names them: 0001's, the slots that store the facts (rows/envelope-facts.ts), the Kafka ones. */
export const ENVELOPE_COLUMNS: Columns<EnvelopeRow> = [
  ...columnsOf<EnvelopeColumns>({
    loop_id: true, seq: true, time: true, time_text: true, kind: true, kind_class: true, hash: true, computed_hash: true, payload: true,
    verdict: true, detail: true, evidence: true,
  }),
  ...SLOT_NAMES,
  ...KAFKA_COLUMNS,
];

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
