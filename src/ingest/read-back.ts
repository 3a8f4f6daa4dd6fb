/**
 * Step 1 of ingest (src/ingest/ingestor.ts): where a partition resumes after
 * a start or a rebalance, read back from the group's last commit and the
 * stored rows, and the derived writes a writer that died between its insert
 * and its commit left undone, made again first.
 */
import type { Logger } from '../observability/logger.js';
import type { Stream } from '../pipeline/stream.js';
import type { Committed, KafkaGroup, Position } from '../kafka/contract.js';
import { sinceOf } from './pending.js';

export class ReadBack {
  /** The group's committed offsets and their metadata per topic, read once per generation. */
  private readonly committed = new Map<string, Promise<Map<number, Committed>>>();

  constructor(
    private readonly edges: Pick<KafkaGroup, 'committedOffsets'>,
    private readonly log: Logger,
  ) {}

  /**
   * The position a partition resumes from: its offset is durable (the last
   * commit, made after its insert, or past it as far as the stored rows
   * reach), its metadata the commit's. The last commit dates the rows it
   * does not cover, so only recent parts are read.
   */
  async resume(stream: Stream, topic: string, partition: number): Promise<Position> {
    const commit = (await this.committedOffsets(topic)).get(partition);
    const since = sinceOf(commit?.metadata);
    const stored = await stream.store.progress(stream.topic, partition, since);
    const committed = commit && Number(commit.offset) >= 0 ? BigInt(commit.offset) : 0n;
    // Rows past the commit: their writer may have died between its insert
    // and its derived writes. Made again now, before any head is read back
    // (heads are read from the derived table alone); all of them when the
    // derived table lost every row of the partition.
    if (await stream.store.derivedLost(stream.topic, partition)) {
      this.log.warn('the derived rows of this partition are all gone; writing them again from its stored rows', { stream: stream.name, topic, partition });
      await stream.store.rederive(stream.topic, partition, 0n, 0);
    } else if (stored > committed) await stream.store.rederive(stream.topic, partition, committed, since);
    const next = stored > committed ? stored : committed;
    return { topic, partition, offset: next.toString(), ...(commit?.metadata ? { metadata: commit.metadata } : {}) };
  }

  /** Forgets the commits read: a new generation reads them again. */
  clear(): void {
    this.committed.clear();
  }

  private committedOffsets(topic: string): Promise<Map<number, Committed>> {
    let found = this.committed.get(topic);
    if (!found) {
      found = this.edges.committedOffsets(topic);
      // A failed read is retried by the next batch, not cached.
      found.catch(() => this.committed.delete(topic));
      this.committed.set(topic, found);
    }
    return found;
  }
}
