/**
 * An Ingestor run in this process over one given stream, for tests whose
 * adversary lives inside a stream (a held insert, a failing derived write):
 * it starts, waits until the first records are buffered (and `settleMs`
 * more, for their flush to start), runs `meanwhile` (typically: produce the
 * records to judge while that flush is held), waits until the group has
 * caught up, and stops with a final flush.
 */
import assert from 'node:assert/strict';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Kafka } from 'kafkajs';
import type { Config } from '../../src/config/index.js';
import type { Logger } from '../../src/observability/logger.js';
import { createMetrics } from '../../src/observability/metrics.js';
import type { Stream } from '../../src/pipeline/stream.js';
import { kafkaGroup } from '../../src/kafka/group.js';
import { ingestEdges } from '../../src/ingest/edges.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { sleep } from './processes.js';

export async function ingestWhile(
  deps: { kafka: Kafka; clickhouse: ClickHouseClient; config: Config; log: Logger },
  stream: Stream,
  meanwhile: () => Promise<void>,
  settleMs = 400,
): Promise<{ fatal: Error | undefined }> {
  const ingestor = new Ingestor({ edges: ingestEdges(kafkaGroup(deps.kafka, deps.config), deps.clickhouse), config: deps.config, log: deps.log, metrics: createMetrics() }, [stream]);
  let fatal: Error | undefined;
  ingestor.onFatal = (err) => (fatal = err);
  await ingestor.start();
  try {
    for (let i = 0; i < 300 && ingestor.buffered === 0; i++) await sleep(50);
    await sleep(settleMs);
    await meanwhile();
    for (let i = 0; i < 600 && !(await ingestor.caughtUp()); i++) await sleep(100);
  } finally {
    assert.equal(await ingestor.stop(), true, 'the final flush succeeded');
  }
  return { fatal };
}
