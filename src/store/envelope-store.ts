/**
 * The envelopes table as the consumer's chain state: ClickHouse is the source
 * of truth for what has been stored, so after a restart, a crash at any
 * instant or a rebalance, heads and progress are read back from here. Memory
 * only caches them.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { EnvelopeRow, StoredHead, StoredVersion } from '../rows/rows.js';
import { ENVELOPE_TABLE, LOOP_HEAD_TABLE, type LoopHeadRow } from './columns.js';
import { DEFAULT_INSERT_FORMAT, insertRows, type InsertFormat } from './insert-format.js';
import { ONE_SERVER, type StateSql } from '../clickhouse/replicas.js';
import { inListChunks, renderSql } from '../clickhouse/sql.js';
import { partitionProgress } from './progress.js';
import { queryRows, querySql } from './queries.js';

/** Verdicts of rows that move a loop's chain forward (as in envelope_heads.sql). */
export const HEAD_VERDICTS: ReadonlySet<string> = new Set(['ok', 'mismatch', 'gap', 'time_regression']);


export class EnvelopeStore {
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

  /** The offset after the last stored record of a partition (0 when none), among rows inserted since `since`. */
  progress(topic: string, partition: number, since = 0): Promise<bigint> {
    return partitionProgress(this.ch, 'envelope_progress', topic, partition, since, this.sql);
  }

  /** Verified heads of the given loops, from loop_heads; loops with no stored envelope are absent. */
  async heads(loopIds: readonly string[]): Promise<Map<string, StoredHead>> {
    const heads = new Map<string, StoredHead>();
    for (const chunk of inListChunks(loopIds)) {
      const rows = await queryRows<{ loop_id: string; seq: string | number; hash: string; computed_hash: string; time_text: string; verdict: string; kafka_partition: number }>(
        this.ch,
        'envelope_heads',
        { loop_ids: chunk },
        this.sql,
      );
      for (const r of rows) {
        heads.set(r.loop_id, {
          seq: Number(r.seq),
          hash: Buffer.from(r.hash, 'hex'),
          computedHash: r.computed_hash ? Buffer.from(r.computed_hash, 'hex') : undefined,
          timeText: r.time_text,
          mismatched: r.verdict === 'mismatch',
          partition: Number(r.kafka_partition),
        });
      }
    }
    return heads;
  }

  /** Every stored version of (loop, seq) pairs but malformed rows, in Kafka offset order. */
  async versions(keys: readonly (readonly [string, number])[]): Promise<StoredVersion[]> {
    const found: StoredVersion[] = [];
    for (const chunk of inListChunks(keys)) {
      const rows = await queryRows<{ loop_id: string; seq: string | number; hash: string; time_text: string; kind: string; payload: string }>(this.ch, 'envelope_versions', { keys: chunk }, this.sql);
      for (const r of rows) {
        found.push({
          loopId: r.loop_id,
          seq: Number(r.seq),
          hash: Buffer.from(r.hash, 'hex'),
          timeText: r.time_text,
          kind: r.kind,
          payload: Buffer.from(r.payload, 'utf8'),
        });
      }
    }
    return found;
  }

  /** Parses and checks rows as insert() does, storing nothing: envelopes_probe is a Null-engine twin (migration 0007). */
  probe(rows: readonly EnvelopeRow[]): Promise<void> {
    return insertRows(this.ch, 'envelopes_probe', ENVELOPE_TABLE, rows, this.format);
  }

  /**
   * One INSERT for the whole batch: ClickHouse writes an insert of fewer than
   * max_insert_block_size rows as one part, so the rows land together or not
   * at all, and the durable progress never covers a record whose row is lost.
   */
  insert(rows: readonly EnvelopeRow[], queryId?: string): Promise<void> {
    return insertRows(this.ch, 'envelopes', ENVELOPE_TABLE, rows, this.format, queryId);
  }

  /**
   * loop_heads from durable envelope rows: per loop, its highest head-moving
   * row. Idempotent (ReplacingMergeTree(seq) keeps one row per loop and seq),
   * so a retry or a zombie repeating it changes nothing.
   */
  async derive(rows: readonly EnvelopeRow[]): Promise<void> {
    const heads = new Map<string, EnvelopeRow>();
    for (const r of rows) {
      if (!HEAD_VERDICTS.has(r.verdict)) continue;
      const h = heads.get(r.loop_id);
      if (!h || r.seq > h.seq) heads.set(r.loop_id, r);
    }
    // Copied out of the rows: a row a worker thread judged (rows/encoded.ts) carries
    // these fields, but its bytes are the envelopes insert's, which the encoders
    // would write as they are.
    const values: LoopHeadRow[] = [...heads.values()].map((r) => ({
      loop_id: r.loop_id,
      seq: r.seq,
      hash: r.hash,
      computed_hash: r.computed_hash,
      time_text: r.time_text,
      verdict: r.verdict,
      kafka_topic: r.kafka_topic,
      kafka_partition: r.kafka_partition,
      kafka_offset: r.kafka_offset,
      ingested_at: r.ingested_at,
    }));
    await insertRows(this.ch, 'loop_heads', LOOP_HEAD_TABLE, values, this.format);
  }

  /**
   * derive() for the rows of one partition stored at or past offset `from`,
   * inside ClickHouse (INSERT … SELECT of their head-moving rows; the table
   * keeps each loop's highest seq). Heads are read from loop_heads alone:
   * without it, a loop whose last flush lost its loop_heads write would read
   * an old head and judge its next envelope by it.
   */
  async rederive(topic: string, partition: number, from: bigint, since: number): Promise<void> {
    await this.ch.command({ query: renderSql(this.sql(querySql('loop_heads_rederive')), { topic, partition, from, since }) });
  }

  /** Whether loop_heads holds no head of a partition whose head-moving rows envelopes holds (the table was emptied or not restored). */
  async derivedLost(topic: string, partition: number): Promise<boolean> {
    const [found] = await queryRows<{ stored: string | number; heads: string | number }>(this.ch, 'loop_heads_lost', { topic, partition }, this.sql);
    return Number(found?.stored) > 0 && Number(found?.heads) === 0;
  }
}
