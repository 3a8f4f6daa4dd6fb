/**
 * An Ingestor run in this process over one given stream, for tests whose
 * adversary lives inside a stream (a held insert, a failing derived write):
 * it starts, waits until the first records are buffered (and `settleMs`
 * more, for their flush to start), runs `meanwhile` (typically: produce the
 * records to judge while that flush is held), waits until the group has
 * caught up, and stops with a final flush.
 */
import assert from 'node:assert/strict';
import { createMetrics } from '../../src/observability/metrics.js';
import { kafkaEdges } from '../../src/ingest/group.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { sleep } from './processes.js';
export async function ingestWhile(deps, stream, meanwhile, settleMs = 400) {
    const ingestor = new Ingestor({ edges: kafkaEdges(deps.kafka, deps.clickhouse, deps.config), config: deps.config, log: deps.log, metrics: createMetrics() }, [stream]);
    let fatal;
    ingestor.onFatal = (err) => (fatal = err);
    await ingestor.start();
    try {
        for (let i = 0; i < 300 && ingestor.buffered === 0; i++)
            await sleep(50);
        await sleep(settleMs);
        await meanwhile();
        for (let i = 0; i < 600 && !(await ingestor.caughtUp()); i++)
            await sleep(100);
    }
    finally {
        assert.equal(await ingestor.stop(), true, 'the final flush succeeded');
    }
    return { fatal };
}
//# sourceMappingURL=in-process-ingest.js.map