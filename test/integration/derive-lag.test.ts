/**
 * Heads are read back from loop_heads alone (no union with recent envelopes),
 * so the rows a flush stored must stay in the consumer's pending state until
 * their loop_heads write is done. (A loop_heads that lost a partition's rows:
 * exactly-once.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Partitioners } from 'kafkajs';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import { EnvelopeStream } from '../../src/pipeline/envelopes.js';
import type { SourceRecord, StreamBatch } from '../../src/pipeline/stream.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { EnvelopeStore } from '../../src/store/envelope-store.js';
import { migrate } from '../../src/migrate/migrate.js';
import type { EnvelopeRow } from '../../src/rows/rows.js';
import { createKafka, ensureTopics, TOPIC_CONFIG } from '../../src/kafka/client.js';
import { query } from '../support/clickhouse.js';
import { ingestWhile } from '../support/in-process-ingest.js';
import { testContext, type TestContext } from '../support/context.js';
import { chain } from '../support/envelope-chain.js';
import { Hold } from '../support/hold.js';

const log = createLogger('warn');
const contexts: TestContext[] = [];
after(async () => {
  for (const c of contexts) await c.cleanup();
});

async function context(name: string): Promise<TestContext> {
  const ctx = await testContext(name, { AGENTLEDGER_BATCH_MAX_WAIT_MS: '200' });
  contexts.push(ctx);
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  await ensureTopics(createKafka(ctx.config.kafka, log), [
    { topic: ctx.config.kafka.topics.envelopes, numPartitions: 1, configEntries: TOPIC_CONFIG },
    { topic: ctx.config.kafka.topics.deadLetter, numPartitions: 1, configEntries: TOPIC_CONFIG },
  ]);
  return ctx;
}

/** `n` honest links of a loop, one second apart. */
function loop(loopId: string, n: number): { key: string; value: Buffer }[] {
  return chain(
    loopId,
    Array.from({ length: n }, (_, i) => [`2026-11-30T10:00:${String(i + 1).padStart(2, '0')}Z`, 'IterationStarted', `{"iteration":${i + 1}}`] as const),
  );
}

/**
 * An EnvelopeStore whose first loop_heads write (derive) waits until the
 * ingestor has judged a later batch, then fails as a dropped connection
 * does: the flush's rows are in envelopes, their heads not in loop_heads,
 * while the next batch of the same loops is judged.
 */
class LaggingDeriveStore extends EnvelopeStore {
  readonly hold = new Hold();
  failedDerives = 0;

  override async derive(rows: readonly EnvelopeRow[]): Promise<void> {
    if (this.failedDerives === 0) {
      await this.hold.untilJudged();
      this.failedDerives++;
      throw Object.assign(new Error('connection reset while writing loop_heads'), { code: 'ECONNRESET' });
    }
    return super.derive(rows);
  }
}

/**
 * An EnvelopeStream that tells its LaggingDeriveStore when it judges a batch.
 * Its cache of durable heads holds one loop, so a head let go of to it is
 * evicted at once.
 */
class LaggingDeriveStream extends EnvelopeStream {
  declare readonly store: LaggingDeriveStore;

  constructor(topic: string, store: LaggingDeriveStore) {
    super(topic, store, { seqEncoding: 'binary', maxPayloadBytes: 1024 * 1024 }, 1);
  }

  override async process(records: readonly SourceRecord[]): Promise<StreamBatch<EnvelopeRow>> {
    this.store.hold.judging();
    return super.process(records);
  }
}

test('a batch judged while the previous flush is stored but its loop_heads write fails reads the heads it holds pending, not an old loop_heads', { timeout: 120_000 }, async () => {
  const ctx = await context('derive_lag');
  const kafka = createKafka(ctx.config.kafka, log);
  const topic = ctx.config.kafka.topics.envelopes;
  const a = loop('loop-a', 6);
  const b = loop('loop-b', 6);
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const send = (records: { key: string; value: Buffer }[]) => producer.send({ topic, acks: -1, messages: records });
  await send([...a.slice(0, 3), ...b.slice(0, 3)]);

  const clickhouse = createClickHouse(ctx.config.clickhouse);
  const stream = new LaggingDeriveStream(topic, new LaggingDeriveStore(clickhouse));
  // The rest arrives once the first flush's loop_heads write is held.
  const { fatal } = await ingestWhile({ kafka, clickhouse, config: ctx.config, log }, stream, async () => {
    await stream.store.hold.held();
    await send([...a.slice(3), ...b.slice(3)]);
    await producer.disconnect();
  }).finally(() => clickhouse.close());
  assert.equal(fatal, undefined, 'nothing fatal');
  assert.equal(stream.store.failedDerives, 1, 'the first loop_heads write failed');
  assert.ok(stream.store.hold.judgedDuringHold, 'the next batch was judged while the first flush was stored without its heads');
  const rows = await query<{ row: string }>(ctx, "SELECT concat(loop_id, '/', toString(seq), '/', verdict) AS row FROM envelopes ORDER BY loop_id, seq");
  assert.deepEqual(
    rows.map((r) => r.row),
    ['a', 'b'].flatMap((l) => [1, 2, 3, 4, 5, 6].map((s) => `loop-${l}/${s}/ok`)),
    'every link judged against the head before it',
  );
  const heads = await query<{ head: string }>(ctx, "SELECT concat(loop_id, '/', toString(max(seq))) AS head FROM loop_heads GROUP BY loop_id ORDER BY loop_id");
  assert.deepEqual(heads.map((h) => h.head), ['loop-a/6', 'loop-b/6']);
});
