/**
 * What the ingest loop (ingestor.ts) asks of the world besides its streams:
 * the consumer group (src/kafka/contract.ts) and ClickHouse's query control.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { settleQuery } from '../clickhouse/server.js';
import type { KafkaGroup } from '../kafka/contract.js';

export interface IngestEdges extends KafkaGroup {
  /** Makes a ClickHouse query that may still run (its answer lost) finish or die. */
  settle(queryId: string): Promise<void>;
}

/** `group` (kafkaGroup() in production), with the query control of `clickhouse`. */
export function ingestEdges(group: KafkaGroup, clickhouse: ClickHouseClient): IngestEdges {
  return Object.assign(group, { settle: (queryId: string) => settleQuery(clickhouse, queryId) });
}
