/**
 * A flight carried out: the I/O of the machine's `fence`, `write` and
 * `commit` commands for one sealed buffer, each result fed back to the
 * machine as its event (machine.ts decides what follows, and whether the
 * buffer is still this member's). It runs beside the judging of the next
 * batches; the driver (ingestor.ts) waits for it only when the machine says
 * `await`.
 */
import type { Position } from '../kafka/contract.js';
import { failureMessage, ownershipLost } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Command, Event } from './machine.js';
import type { Pending } from './pending.js';
import type { Writer } from './writer.js';

export interface FlightDeps {
  /** Feeds an event to the machine and carries out its commands other than the flight's own (drop, landed). */
  readonly apply: (event: Event) => readonly Command[];
  /**
   * An offset commit (the fence, the commit) for this member, bounded by the
   * session timeout and told to the coordinator watch; `what` names it in a
   * timeout's message.
   */
  readonly commit: (positions: readonly Position[], what: string) => Promise<void>;
  readonly writer: Writer;
  readonly log: Logger;
  readonly metrics: Metrics;
}

/** One flight's run: over when `done` resolves; `failure` is what it ended with, if it failed. */
export class FlightRun {
  failure: unknown;
  readonly done: Promise<void>;

  constructor(
    readonly buffer: number,
    fence: readonly Position[],
    p: Pending,
    private readonly deps: FlightDeps,
  ) {
    this.done = this.fly(fence, p).catch((err: unknown) => {
      this.failure = err;
    });
  }

  private async fly(fence: readonly Position[], p: Pending): Promise<void> {
    const { apply, log, metrics } = this.deps;
    const buffer = this.buffer;
    try {
      await this.deps.commit(fence, 'ownership check (offset commit)');
    } catch (err) {
      const lost = ownershipLost(err);
      if (lost === undefined) {
        apply({ type: 'flushFailed', buffer, atFence: true });
        throw err;
      }
      metrics.fenced.inc();
      log.warn('this member no longer owns its partitions; its buffer is dropped, the new owner reads the records again', { error: lost.message });
      apply({ type: 'fenceRefused', buffer });
      throw lost;
    }
    // Dropped meanwhile (a rebalance): nothing more of it is this member's.
    if (!apply({ type: 'fenceHeld', buffer }).some((c) => c.type === 'write')) return;
    let written;
    try {
      written = await this.deps.writer.write(p);
    } catch (err) {
      apply({ type: 'flushFailed', buffer, atFence: false });
      throw err;
    }
    for (const c of apply({ type: 'written', buffer, ...written })) {
      if (c.type !== 'commit') continue;
      log.debug('committing offsets', { partitions: c.positions.length });
      // The rows are durable: committing now only saves re-reading them, and
      // dates them for the next reader.
      const committed = await this.deps.commit(c.positions, 'offset commit').then(
        () => true,
        (err: unknown) => {
          log.warn('offset commit failed (progress is kept in ClickHouse)', { error: failureMessage(err) });
          return false;
        },
      );
      apply({ type: committed ? 'committed' : 'commitFailed', buffer });
    }
  }
}
