/**
 * How a flight's rows become durable (the `write` command of machine.ts,
 * between its fence and its commit): dead letters → one insert per table (a
 * lost or failed answer settled and checked for landing, rows the server
 * refuses isolated and dead-lettered) → derived writes → the streams told.
 * It talks to Kafka and ClickHouse only through its ports and the streams,
 * so that it runs in unit tests against fakes.
 */
import { randomUUID } from 'node:crypto';
import { toClickHouseDateTime } from '../decode/time.js';
import { failureMessage, kindOf } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { DeadLetter, SourceRecord, Stream } from '../pipeline/stream.js';
import type { KafkaColumns } from '../rows/rows.js';
import { CLOCK_SLACK_SECONDS, recordKey, type Pending } from './pending.js';

/** What the write needs of Kafka and ClickHouse besides the streams. */
export interface WritePorts {
  /** Sends the dead letters to the dead-letter topic, acknowledged by every in-sync replica. */
  sendDeadLetters(letters: readonly DeadLetter[]): Promise<void>;
  /** Makes a query that may still run on the server (its answer lost) finish or die. */
  settle(queryId: string): Promise<void>;
}

export interface WriterDeps {
  readonly ports: WritePorts;
  readonly metrics: Metrics;
  readonly log: Logger;
  /** Told each stream's rows once they are durable (after the derived writes, before the commit); must not block. */
  readonly onDurable?: (rows: readonly KafkaColumns[]) => void;
  /** The clock of the flush stamp (ms since the epoch); Date.now by default. */
  readonly now?: () => number;
}

/** Where a record is, for logs. */
export const where = (r: SourceRecord): Record<string, unknown> => ({ topic: r.topic, partition: r.partition, offset: r.offset });

/** What a write made of its buffer: the stamp its rows carry, and whether the server refused some of them. */
export interface Written {
  readonly stampSeconds: number;
  readonly refused: boolean;
}

export class Writer {
  constructor(private readonly deps: WriterDeps) {}

  /**
   * Dead letters, then one insert per table, then its derived writes; a
   * retry (after a failure) goes on from where the last try got.
   */
  async write(p: Pending): Promise<Written> {
    const { metrics, ports } = this.deps;
    this.deps.log.debug('flush started', { streams: p.rows.size, deadLetters: p.deadLetters.length });
    await this.sendDeadLetters(p);
    // One ingested_at for the whole flush, kept by its retries: ingested_at is
    // the partition key, so the insert is one part, and a retried insert lands
    // in the partition of the first.
    if (p.stamp === undefined) {
      p.stampSeconds = Math.floor((this.deps.now ?? Date.now)() / 1000);
      p.stamp = toClickHouseDateTime({ seconds: p.stampSeconds, nanos: 0 });
    }
    const stamp = p.stamp;
    // One insert per table. Each table is the progress of its own topic's
    // partitions, so a crash between two inserts leaves each topic either
    // stored or to be read again, never half.
    for (const [stream, rows] of p.rows) {
      if (rows.length === 0) continue;
      if (!p.landed.has(stream)) {
        const previous = p.tried.get(stream);
        // A failed attempt may still be running on the server (its answer was
        // lost, not its work): let it finish or kill it, then ask whether it
        // landed. Inserting again first could store every row twice.
        if (previous !== undefined) await ports.settle(previous);
        if (previous === undefined || !(await this.landed(stream, rows, p.stampSeconds))) {
          const started = process.hrtime.bigint();
          for (let isolated = 0; ; isolated++) {
            const queryId = `agentledger-${stream.name}-${randomUUID()}`;
            p.tried.set(stream, queryId);
            // The only place a row gets its ingested_at (the pipeline leaves
            // it unset): every row this insert sends, the malformed rows
            // isolatePoison put in place of refused ones included.
            for (const row of rows) row.ingested_at = stamp;
            try {
              await stream.store.insert(rows, queryId);
              break;
            } catch (err) {
              const kind = kindOf(err);
              if (kind === 'transient') throw err;
              // An error answer does not prove that nothing landed: a view on
              // the table that throws after the part was written answers with
              // an error too. Settled and checked like a lost answer first.
              await ports.settle(queryId);
              if (await this.landed(stream, rows, p.stampSeconds)) {
                metrics.insertFailures.inc();
                this.deps.log.warn('ClickHouse answered an insert with an error, but its rows are stored', { stream: stream.name, error: failureMessage(err) });
                break;
              }
              // Refused for its data: set aside the rows the server cannot
              // take and insert the rest. Twice is enough: a malformed row
              // refused in turn is not the data's fault.
              if (kind !== 'content' || isolated === 2) throw err;
              await this.isolatePoison(p, stream, rows, err);
            }
          }
          metrics.insertSeconds.observe({ stream: stream.name }, Number(process.hrtime.bigint() - started) / 1e9);
          metrics.batchRows.observe({ stream: stream.name }, rows.length);
        }
        p.landed.add(stream);
      }
      // The store's derived tables (loop_heads), idempotent, before the commit
      // that dates them: a failure here is retried with the flush.
      await stream.store.derive(rows);
      // Only now may the stream's state let go of the rows' heads: the store
      // answers heads from its derived tables alone, so a head it cached or
      // held pending must stay until they have it.
      stream.durable(p.sealed.get(stream));
      this.deps.onDurable?.(rows);
      p.rows.delete(stream);
    }
    return { stampSeconds: p.stampSeconds, refused: p.rebuild.size > 0 };
  }

  /** The buffered dead letters (acks from every in-sync replica): sent once, a retry of the flush does not send them again. */
  private async sendDeadLetters(p: Pending): Promise<void> {
    if (p.deadLetters.length === 0) return;
    await this.deps.ports.sendDeadLetters(p.deadLetters);
    for (const d of p.deadLetters) this.deps.metrics.deadLetters.inc({ topic: d.record.topic });
    p.deadLetters = [];
  }

  /**
   * After ClickHouse refused an insert for its data (nothing of it landed:
   * the server parses before it writes): finds the rows it cannot take by
   * inserting halves into the stream's probe, which stores nothing; replaces
   * the rows of each such record by its one malformed row, and dead-letters
   * the record. If no row is refused alone, the refusal is not the data's:
   * it is thrown as it came (and is fatal).
   */
  private async isolatePoison(p: Pending, stream: Stream, rows: KafkaColumns[], refusal: unknown): Promise<void> {
    const refused = new Map<number, string>();
    // `known`: this range was refused already (the whole insert), no need to probe it.
    const search = async (lo: number, hi: number, known: boolean): Promise<void> => {
      let why = known ? refusal : undefined;
      if (!known) {
        try {
          await stream.store.probe(rows.slice(lo, hi));
          return;
        } catch (err) {
          if (kindOf(err) !== 'content') throw err;
          why = err;
        }
      }
      if (hi - lo === 1) {
        refused.set(lo, failureMessage(why));
        return;
      }
      const mid = lo + ((hi - lo) >>> 1);
      await search(lo, mid, false);
      await search(mid, hi, false);
    };
    await search(0, rows.length, true);
    if (refused.size === 0) throw refusal;

    const reasons = new Map<string, string>();
    for (const [i, message] of refused) {
      const key = recordKey(rows[i]!.kafka_partition, rows[i]!.kafka_offset);
      if (!reasons.has(key)) reasons.set(key, `refused by ClickHouse: ${message}`);
    }
    const records = new Map<string, SourceRecord>();
    for (const r of p.records.get(stream) ?? []) {
      const key = recordKey(r.partition, r.offset);
      if (reasons.has(key)) records.set(key, r);
    }
    const done = new Set<string>();
    const kept: KafkaColumns[] = [];
    for (const row of rows) {
      const key = recordKey(row.kafka_partition, row.kafka_offset);
      const reason = reasons.get(key);
      if (reason === undefined) {
        kept.push(row);
        continue;
      }
      if (done.has(key)) continue;
      done.add(key);
      const record = records.get(key);
      // Every row comes from a buffered record; without it there is nothing to dead-letter.
      if (!record) throw new Error(`no buffered record for the refused row at ${stream.topic}:${key}`);
      const { row: malformed, deadLetter } = stream.quarantine(record, reason);
      kept.push(malformed);
      p.deadLetters.push(deadLetter);
      this.deps.metrics.poisonRecords.inc({ topic: stream.topic });
      this.deps.log.warn("ClickHouse refused a record's row; it is dead-lettered and stored as malformed", { ...where(record), reason });
    }
    rows.splice(0, rows.length, ...kept);
    // The stream's state moved past the refused rows as if they were stored: it is read back after this flush.
    p.rebuild.add(stream);
    await this.sendDeadLetters(p);
  }

  /**
   * Whether an insert of `rows` is in ClickHouse: its rows land together, so
   * the last row's offset being below its partition's stored progress says so.
   */
  private async landed(stream: Stream, rows: readonly KafkaColumns[], stampSeconds: number): Promise<boolean> {
    const last = rows[rows.length - 1];
    // If it landed, it carries this flush's stamp: only parts since then are read.
    const since = Math.max(0, stampSeconds - CLOCK_SLACK_SECONDS);
    return last !== undefined && (await stream.store.progress(stream.topic, last.kafka_partition, since)) > BigInt(last.kafka_offset);
  }
}
