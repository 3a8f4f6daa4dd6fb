/**
 * craze_events as the craze consumer's state: progress per partition, and per
 * (session, incarnation) the last seq stored with the accounting state after
 * it. ClickHouse is the source of truth; memory only caches it.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { incarnationKey, type CrazeRow, type IncarnationHead } from '../rows/rows.js';
import { CRAZE_TABLE } from './columns.js';
import { DEFAULT_INSERT_FORMAT, insertRows, type InsertFormat } from './insert-format.js';
import { ONE_SERVER, type StateSql } from '../clickhouse/replicas.js';
import { inListChunks } from '../clickhouse/sql.js';
import { partitionProgress } from './progress.js';
import { queryRows } from './queries.js';


export class CrazeStore {
  /**
   * `sql`: how a state read reaches the rows (on a cluster, every replica:
   * replicas.ts); `format`: what the inserts and probes send
   * (AGENTLEDGER_INSERT_FORMAT).
   */
  constructor(
    private readonly ch: ClickHouseClient,
    private readonly sql: StateSql = ONE_SERVER,
    readonly format: InsertFormat = DEFAULT_INSERT_FORMAT,
  ) {}

  progress(topic: string, partition: number, since = 0): Promise<bigint> {
    return partitionProgress(this.ch, 'craze_progress', topic, partition, since, this.sql);
  }

  /** Heads of every incarnation of the given sessions, keyed by incarnationKey(). */
  async heads(sessionIds: readonly string[]): Promise<Map<string, IncarnationHead>> {
    const heads = new Map<string, IncarnationHead>();
    for (const chunk of inListChunks(sessionIds)) {
      const rows = await queryRows<{ session_id: string; incarnation: string; seq: string | number; account_state: string }>(this.ch, 'craze_heads', { sessions: chunk }, this.sql);
      for (const r of rows) heads.set(incarnationKey(r.session_id, r.incarnation), { seq: Number(r.seq), accountState: r.account_state });
    }
    return heads;
  }

  /** The subset of (session, incarnation, seq) already stored, as `${incarnationKey()}\0${seq}`. */
  async seen(keys: readonly (readonly [string, string, number])[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (const chunk of inListChunks(keys)) {
      const rows = await queryRows<{ session_id: string; incarnation: string; seq: string | number }>(this.ch, 'craze_seen', { keys: chunk }, this.sql);
      for (const r of rows) found.add(`${incarnationKey(r.session_id, r.incarnation)}\u0000${Number(r.seq)}`);
    }
    return found;
  }

  /** Parses and checks rows as insert() does, storing nothing: craze_events_probe is a Null-engine twin (migration 0007). */
  probe(rows: readonly CrazeRow[]): Promise<void> {
    return insertRows(this.ch, 'craze_events_probe', CRAZE_TABLE, rows, this.format);
  }

  insert(rows: readonly CrazeRow[], queryId?: string): Promise<void> {
    return insertRows(this.ch, 'craze_events', CRAZE_TABLE, rows, this.format, queryId);
  }

  /** craze_events has no derived table. */
  derive(): Promise<void> {
    return Promise.resolve();
  }

  /** craze_events has no derived table. */
  rederive(): Promise<void> {
    return Promise.resolve();
  }

  /** craze_events has no derived table. */
  derivedLost(): Promise<boolean> {
    return Promise.resolve(false);
  }
}
