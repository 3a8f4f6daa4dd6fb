/**
 * The row a record that could not be decoded leaves in its table, beside its
 * dead letter: the verdict, the reason and the first bytes of its raw value,
 * so a dashboard sees what was refused without reading the DLQ.
 */
import type { KafkaColumns } from '../sink/clickhouse/rows.js';
import type { SourceRecord } from './stream.js';

/** Raw bytes of a malformed record kept in ClickHouse (base64); the DLQ has all of them. */
export const MALFORMED_EVIDENCE_BYTES = 64 * 1024;

export interface MalformedColumns extends KafkaColumns {
  /** The record key as UTF-8 text ('' when it has none). */
  readonly key: string;
  readonly verdict: 'malformed';
  readonly detail: string;
  /** The first MALFORMED_EVIDENCE_BYTES bytes of the value, base64. */
  readonly evidence: string;
}

export function malformedColumns(record: SourceRecord, reason: string, ingestedAt: string): MalformedColumns {
  return {
    key: record.key?.toString('utf8') ?? '',
    verdict: 'malformed',
    detail: reason,
    evidence: (record.value ?? Buffer.alloc(0)).subarray(0, MALFORMED_EVIDENCE_BYTES).toString('base64'),
    ...kafkaColumns(record, ingestedAt),
  };
}

export function kafkaColumns(record: SourceRecord, ingestedAt: string): KafkaColumns {
  return { kafka_topic: record.topic, kafka_partition: record.partition, kafka_offset: record.offset, ingested_at: ingestedAt };
}
