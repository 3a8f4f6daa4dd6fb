import type { ClickHouseClient } from '@clickhouse/client';
import { ONE_SERVER, type StateSql } from '../clickhouse/replicas.js';
import { renderSql } from '../clickhouse/sql.js';
import { querySql } from './queries.js';

/**
 * The consumer's durable progress in one partition, from a progress query
 * (envelope_progress, craze_progress): the offset after the last stored
 * record, 0 when none. `max() + 1` over no rows would say 1, hence the count.
 * Only rows inserted at or after `since` (Unix seconds) are read; 0 reads all.
 */
export async function partitionProgress(ch: ClickHouseClient, query: string, topic: string, partition: number, since = 0, sql: StateSql = ONE_SERVER): Promise<bigint> {
  const [row] = await ch
    .query({ query: renderSql(sql(querySql(query)), { topic, partition, since }), format: 'JSONEachRow' })
    .then((r) => r.json<{ next_offset: string; n: string }>());
  return row && Number(row.n) > 0 ? BigInt(row.next_offset) : 0n;
}
