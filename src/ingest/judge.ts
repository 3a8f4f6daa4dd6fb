/**
 * A batch through the machine (machine.ts): read back where its partition
 * resumes (on its first batch of a session), judge its records from there
 * (isolating the records ClickHouse refuses a read-back query for), buffer
 * the rows. Runs under the driver's lock (ingestor.ts).
 */
import type { GroupBatch } from '../kafka/contract.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { KEY_MISMATCH } from '../pipeline/envelopes.js';
import type { SourceRecord, Stream } from '../pipeline/stream.js';
import type { Buffers } from './buffers.js';
import { processIsolating } from './isolate.js';
import { tpOf, type Command, type Event, type IngestState } from './machine.js';
import { buffer, insertBytes } from './pending.js';
import type { ReadBack } from './read-back.js';

export interface JudgeDeps {
  /** Feeds an event to the machine; returns its commands. */
  readonly apply: (event: Event) => readonly Command[];
  readonly state: () => IngestState;
  readonly streams: ReadonlyMap<string, Stream>;
  readonly resume: Pick<ReadBack, 'resume'>;
  readonly buffers: Pick<Buffers, 'of'>;
  /** Records processed per stream (progress lines). */
  readonly processed: Map<string, number>;
  readonly log: Logger;
  readonly metrics: Metrics;
}

/** A batch through the machine; `batch` is undefined for a fetch the client filtered out entirely (up to `lastOffset`). */
export async function judgeBatch(deps: JudgeDeps, topic: string, partition: number, lastOffset: string, batch: GroupBatch | undefined): Promise<void> {
  const messages = batch?.messages ?? [];
  const stream = deps.streams.get(topic);
  if (!stream) {
    if (batch === undefined) return;
    throw new Error(`no stream for topic ${topic}`);
  }
  const tp = tpOf(topic, partition);
  let commands = deps.apply({ type: 'batch', topic, partition, filtered: batch === undefined });
  for (let c = commands[0]; c !== undefined; c = commands[0]) {
    if (c.type === 'readBack') {
      const position = await deps.resume.resume(stream, topic, partition);
      commands = deps.apply({ type: 'readBack', session: c.session, tp, position });
      continue;
    }
    if (c.type !== 'judge') return;
    const from = c.from;
    const records: SourceRecord[] = messages
      .filter((m) => BigInt(m.offset) >= from)
      .map((m) => ({ topic, partition, offset: m.offset, timestamp: m.timestamp, key: m.key, value: m.value, headers: m.headers }));
    const outcome = records.length > 0 ? await processIsolating(stream, records, deps) : undefined;
    const count = outcome === undefined ? 0 : outcome.rows.length + outcome.deadLetters.length;
    const judged = deps.apply({ type: 'judged', session: c.session, tp, from, lastOffset, count, bytes: insertBytes(records), filtered: batch === undefined, now: Date.now() });
    for (const b of judged) if (b.type === 'buffer' && outcome !== undefined) buffer(deps.buffers.of(b.buffer), stream, records, outcome);
    if (outcome !== undefined) {
      for (const [verdict, n] of outcome.verdicts) {
        // Not a verdict: stored envelopes whose Kafka key is not their LoopID, also counted by their verdict.
        if (verdict === KEY_MISMATCH) deps.metrics.keyMismatches.inc({ topic }, n);
        else deps.metrics.records.inc({ stream: stream.name, verdict }, n);
      }
      deps.processed.set(stream.name, (deps.processed.get(stream.name) ?? 0) + records.length);
    }
    const next = deps.state().sessions.get(tp)?.next;
    if (batch !== undefined && next !== undefined) deps.metrics.lag.set({ topic, partition: String(partition) }, Number(BigInt(batch.highWatermark) - next));
    return;
  }
}

