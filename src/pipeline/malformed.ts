/**
 * The row a record that could not be decoded leaves in its table, beside its
 * dead letter: the verdict, the reason and the first bytes of its raw value,
 * so a dashboard sees what was refused without reading the DLQ. Every column
 * comes from the record itself, so any member that judges it writes the same row.
 */
import { toClickHouseDateTime } from '../decode/time.js';
import type { KafkaColumns } from '../rows/rows.js';
import type { SourceRecord } from './stream.js';

/** Raw bytes of a malformed record kept in ClickHouse (base64); the DLQ has all of them. */
const MALFORMED_EVIDENCE_BYTES = 64 * 1024;

export interface MalformedColumns extends KafkaColumns {
  /** The record key as UTF-8 text ('' when it has none). */
  readonly key: string;
  readonly verdict: 'malformed';
  readonly detail: string;
  /** The first MALFORMED_EVIDENCE_BYTES bytes of the value, base64. */
  readonly evidence: string;
  /** The record's Kafka timestamp as DateTime text: the same for every member that judges it. */
  readonly time: string;
}

export function malformedColumns(record: SourceRecord, reason: string): MalformedColumns {
  return {
    time: recordTime(record),
    key: record.key?.toString('utf8') ?? '',
    verdict: 'malformed',
    detail: reason,
    evidence: (record.value ?? Buffer.alloc(0)).subarray(0, MALFORMED_EVIDENCE_BYTES).toString('base64'),
    ...kafkaColumns(record),
  };
}

/** A record's Kafka timestamp as ClickHouse DateTime text (a deterministic time for rows with none of their own). */
export function recordTime(record: SourceRecord): string {
  const ms = Number(record.timestamp);
  return toClickHouseDateTime({ seconds: Number.isFinite(ms) ? Math.floor(ms / 1000) : 0, nanos: 0 });
}

/**
 * The ingested_at of a row the pipeline made: none yet. The flush sets it
 * (src/ingest/writer.ts), one for every row of an insert, right before the
 * insert: it is the partition key, so the insert stays one part.
 */
export const UNSTAMPED = '';

export function kafkaColumns(record: SourceRecord): KafkaColumns {
  return { kafka_topic: record.topic, kafka_partition: record.partition, kafka_offset: record.offset, ingested_at: UNSTAMPED };
}
