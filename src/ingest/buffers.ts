/**
 * The rows of the machine's buffers (machine.ts: the open buffer and the
 * flight, each by its id), and what the machine's bookkeeping commands do
 * to them and to the streams: drop, seal, landed, rewind, rebuild. The
 * requests (read back, judge, fence, write, commit) are the driver's
 * (ingestor.ts, flight.ts).
 */
import type { Logger } from '../observability/logger.js';
import type { Stream } from '../pipeline/stream.js';
import { tpOf, type Command } from './machine.js';
import { emptyPending, type Pending } from './pending.js';
import type { ReadBack } from './read-back.js';

export interface BuffersDeps {
  readonly streams: readonly Stream[];
  readonly resume: Pick<ReadBack, 'clear'>;
  /** The next fetch of a partition starts at `offset`; batches fetched before become stale. */
  readonly seek: (topic: string, partition: number, offset: string) => void;
  readonly log: Logger;
  /** A flight's offsets were committed after its rows (what the stall watchdog measures). */
  readonly onCommitted: () => void;
}

export class Buffers {
  private readonly pendings = new Map<number, Pending>();

  constructor(private readonly deps: BuffersDeps) {}

  /** The rows of buffer `id` (none yet: an empty one). */
  of(id: number): Pending {
    let p = this.pendings.get(id);
    if (!p) this.pendings.set(id, (p = emptyPending()));
    return p;
  }

  /** Carries out a bookkeeping command; the others are requests, not this one's. */
  carryOut(c: Command): void {
    const { streams } = this.deps;
    switch (c.type) {
      case 'drop':
        for (const id of c.buffers) this.pendings.delete(id);
        this.deps.resume.clear();
        for (const stream of streams) stream.reset();
        return;
      case 'seal': {
        const p = this.of(c.buffer);
        for (const stream of streams) p.sealed.set(stream, stream.seal());
        return;
      }
      case 'landed':
        if (c.committed) this.deps.onCommitted();
        // One whose rows were refused is kept for its rebuild.
        if (this.pendings.get(c.buffer)?.rebuild.size === 0) this.pendings.delete(c.buffer);
        return;
      case 'rewind':
        this.pendings.delete(c.dropped);
        this.pendings.delete(c.flight);
        for (const start of c.positions) this.deps.seek(start.topic, start.partition, start.offset);
        this.deps.log.info('read back after rows the server refused: the batches judged meanwhile are judged again', { partitions: c.positions.map((p) => tpOf(p.topic, p.partition)) });
        for (const stream of streams) stream.reset();
        return;
      case 'rebuild':
        for (const stream of this.pendings.get(c.flight)?.rebuild ?? []) stream.reset();
        this.pendings.delete(c.flight);
        return;
      default:
      // readBack, judge, buffer, fence, write, commit, await: requests the driver carries out.
    }
  }
}
