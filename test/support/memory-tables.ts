/**
 * In-memory stand-ins for the envelopes and craze_events tables, written
 * independently from the SQL they stand for (src/store/queries/):
 * they answer the pipeline's ports (progress, heads, versions, seen, insert)
 * from the rows inserted so far, so unit tests can run a pipeline across
 * batches, restarts and rebalances without ClickHouse.
 */
import { incarnationKey, type CrazeRow, type EnvelopeRow, type IncarnationHead, type KafkaColumns, type StoredHead, type StoredVersion } from '../../src/rows/rows.js';

/** Verdicts that move a loop's chain forward (envelope_heads.sql). */
const HEAD_VERDICTS = new Set(['ok', 'mismatch', 'gap', 'time_regression']);

function progressOf(rows: readonly KafkaColumns[], topic: string, partition: number): bigint {
  let next = 0n;
  for (const r of rows) {
    if (r.kafka_topic === topic && r.kafka_partition === partition && BigInt(r.kafka_offset) + 1n > next) next = BigInt(r.kafka_offset) + 1n;
  }
  return next;
}

/**
 * The derived writes of a memory table: none. It answers heads from the rows
 * themselves, so there is no derived table (loop_heads) to write, write
 * again or lose.
 */
class NothingDerived {
  derive(): Promise<void> {
    return Promise.resolve();
  }

  rederive(): Promise<void> {
    return Promise.resolve();
  }

  derivedLost(): Promise<boolean> {
    return Promise.resolve(false);
  }
}

export class MemoryEnvelopeTable extends NothingDerived {
  readonly rows: EnvelopeRow[] = [];
  /** Calls to heads() and versions(), with their arguments, for tests that count reads. */
  readonly reads: { heads: string[][]; versions: (readonly [string, number])[][] } = { heads: [], versions: [] };

  progress(topic: string, partition: number): Promise<bigint> {
    return Promise.resolve(progressOf(this.rows, topic, partition));
  }

  heads(loopIds: readonly string[]): Promise<Map<string, StoredHead>> {
    this.reads.heads.push([...loopIds]);
    const wanted = new Set(loopIds);
    const best = new Map<string, EnvelopeRow>();
    for (const r of this.rows) {
      if (!wanted.has(r.loop_id) || !HEAD_VERDICTS.has(r.verdict)) continue;
      const b = best.get(r.loop_id);
      if (!b || r.seq > b.seq) best.set(r.loop_id, r);
    }
    const heads = new Map<string, StoredHead>();
    for (const [loopId, r] of best) {
      heads.set(loopId, {
        seq: r.seq,
        hash: Buffer.from(r.hash, 'hex'),
        computedHash: r.computed_hash === '' ? undefined : Buffer.from(r.computed_hash, 'hex'),
        timeText: r.time_text,
        mismatched: r.verdict === 'mismatch',
        partition: r.kafka_partition,
      });
    }
    return Promise.resolve(heads);
  }

  /** Every stored version of each (loop, seq) but malformed rows, by Kafka offset (envelope_versions.sql). */
  versions(keys: readonly (readonly [string, number])[]): Promise<StoredVersion[]> {
    this.reads.versions.push([...keys]);
    const found: StoredVersion[] = [];
    for (const [loopId, seq] of keys) {
      const rows = this.rows
        .filter((r) => r.loop_id === loopId && r.seq === seq && r.verdict !== 'malformed')
        .sort((a, b) => (BigInt(a.kafka_offset) < BigInt(b.kafka_offset) ? -1 : 1));
      for (const r of rows) {
        found.push({ loopId, seq, hash: Buffer.from(r.hash, 'hex'), timeText: r.time_text, kind: r.kind, payload: Buffer.from(r.payload, 'utf8') });
      }
    }
    return Promise.resolve(found);
  }

  /** Memory takes any row: nothing to refuse. */
  probe(_rows: readonly EnvelopeRow[]): Promise<void> {
    return Promise.resolve();
  }

  insert(rows: readonly EnvelopeRow[]): Promise<void> {
    // Through JSON, as JSONEachRow would carry them.
    for (const r of rows) this.rows.push(JSON.parse(JSON.stringify(r)) as EnvelopeRow);
    return Promise.resolve();
  }
}

export class MemoryCrazeTable extends NothingDerived {
  readonly rows: CrazeRow[] = [];

  progress(topic: string, partition: number): Promise<bigint> {
    return Promise.resolve(progressOf(this.rows, topic, partition));
  }

  /** Per incarnation of the given sessions: its highest ok/gap row and the state after it (craze_heads.sql). */
  heads(sessionIds: readonly string[]): Promise<Map<string, IncarnationHead>> {
    const wanted = new Set(sessionIds);
    const best = new Map<string, CrazeRow>();
    for (const r of this.rows) {
      if (!wanted.has(r.session_id) || (r.verdict !== 'ok' && r.verdict !== 'gap')) continue;
      const key = incarnationKey(r.session_id, r.incarnation);
      const b = best.get(key);
      if (!b || r.seq > b.seq) best.set(key, r);
    }
    return Promise.resolve(new Map([...best].map(([key, r]) => [key, { seq: r.seq, accountState: r.account_state }])));
  }

  /** Which (session, incarnation, seq) are stored, malformed rows aside (craze_seen.sql). */
  seen(keys: readonly (readonly [string, string, number])[]): Promise<Set<string>> {
    const stored = new Set(this.rows.filter((r) => r.verdict !== 'malformed').map((r) => `${incarnationKey(r.session_id, r.incarnation)}\u0000${r.seq}`));
    return Promise.resolve(new Set(keys.map(([s, i, q]) => `${incarnationKey(s, i)}\u0000${q}`).filter((k) => stored.has(k))));
  }

  /** Memory takes any row: nothing to refuse. */
  probe(): Promise<void> {
    return Promise.resolve();
  }

  insert(rows: readonly CrazeRow[]): Promise<void> {
    for (const r of rows) this.rows.push(JSON.parse(JSON.stringify(r)) as CrazeRow);
    return Promise.resolve();
  }
}
