/**
 * The poison-isolation path of judging a batch (step 2 of
 * src/ingest/ingestor.ts): when ClickHouse refuses a read-back query built
 * from the records' content, the records that cause it are found by halving
 * and quarantined, so one bad record does not stall its partition.
 */
import { failureMessage, kindOf } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { SourceRecord, Stream, StreamBatch } from '../pipeline/stream.js';
import type { KafkaColumns } from '../rows/rows.js';
import { where } from './writer.js';

/** What the isolation says of the records it quarantines. */
export interface IsolateDeps {
  readonly metrics: Metrics;
  readonly log: Logger;
}

/**
 * stream.process(), and when ClickHouse refuses a read-back query built
 * from the records' content, the same on halves, down to the records that
 * cause it: each becomes a malformed row and a dead letter, the others are
 * judged as usual and in order (a half that succeeds has moved the
 * stream's pending state exactly as one call would have).
 */
export async function processIsolating(stream: Pick<Stream, 'topic' | 'process' | 'quarantine'>, records: readonly SourceRecord[], deps: IsolateDeps): Promise<StreamBatch<KafkaColumns>> {
  try {
    return await stream.process(records);
  } catch (err) {
    if (kindOf(err) !== 'content') throw err;
    if (records.length === 1) {
      const reason = `refused by ClickHouse: ${failureMessage(err)}`;
      const { row, deadLetter } = stream.quarantine(records[0]!, reason);
      deps.metrics.poisonRecords.inc({ topic: stream.topic });
      deps.log.warn('a record made ClickHouse refuse a query; it is dead-lettered', { ...where(records[0]!), reason });
      return { rows: [row], deadLetters: [deadLetter], verdicts: new Map([['malformed', 1]]) };
    }
    const half = records.length >>> 1;
    const first = await processIsolating(stream, records.slice(0, half), deps);
    return concatBatches(first, await processIsolating(stream, records.slice(half), deps));
  }
}

/** Two outcomes of consecutive records of one partition, as one. */
function concatBatches<Row>(a: StreamBatch<Row>, b: StreamBatch<Row>): StreamBatch<Row> {
  const verdicts = new Map(a.verdicts);
  for (const [v, n] of b.verdicts) verdicts.set(v, (verdicts.get(v) ?? 0) + n);
  return { rows: [...a.rows, ...b.rows], deadLetters: [...a.deadLetters, ...b.deadLetters], verdicts };
}
