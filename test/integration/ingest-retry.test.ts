/**
 * The flush retry must not store a batch twice when an insert reached the
 * database but its answer was lost (a timeout, a dropped connection): before
 * inserting again it reads the stored progress back. Real Kafka; the sink is a
 * Stream whose first insert stores its rows and then fails, which a real
 * ClickHouse cannot be made to do on demand.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Partitioners } from 'kafkajs';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import { migrate } from '../../src/migrate/migrate.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { kafkaGroup } from '../../src/kafka/group.js';
import { ingestEdges } from '../../src/ingest/edges.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { createKafka, ensureTopics } from '../../src/kafka/client.js';
import type { StorePort } from '../../src/pipeline/ports.js';
import type { SourceRecord, Stream, StreamBatch } from '../../src/pipeline/stream.js';
import type { KafkaColumns } from '../../src/rows/rows.js';
import { FAULT_THREADS, testContext, type TestContext } from '../support/context.js';
import { sleep } from '../support/processes.js';

type Row = KafkaColumns;

/** An in-memory stream that is its own store (Stream.store). */
class LostAnswerStream implements Stream<Row>, StorePort<Row> {
  readonly name = 'lost-answer';
  readonly store: StorePort<Row> = this;
  readonly stored: Row[] = [];
  inserts = 0;
  constructor(readonly topic: string) {}
  progress(_topic: string, partition: number): Promise<bigint> {
    const offsets = this.stored.filter((r) => r.kafka_partition === partition).map((r) => BigInt(r.kafka_offset));
    return Promise.resolve(offsets.length === 0 ? 0n : offsets.reduce((a, b) => (a > b ? a : b)) + 1n);
  }
  process(records: readonly SourceRecord[]): Promise<StreamBatch<Row>> {
    const rows = records.map((r) => ({ kafka_topic: r.topic, kafka_partition: r.partition, kafka_offset: r.offset, ingested_at: '' }));
    return Promise.resolve({ rows, deadLetters: [], verdicts: new Map([['ok', rows.length]]) });
  }
  insert(rows: readonly Row[]): Promise<void> {
    this.inserts++;
    this.stored.push(...rows);
    // The first insert lands, and then its answer is lost.
    return this.inserts === 1 ? Promise.reject(new Error('socket hang up')) : Promise.resolve();
  }
  probe(): Promise<void> {
    return Promise.resolve();
  }
  quarantine(record: SourceRecord, reason: string): { row: Row; deadLetter: { record: SourceRecord; reason: string } } {
    return { row: { kafka_topic: record.topic, kafka_partition: record.partition, kafka_offset: record.offset, ingested_at: '' }, deadLetter: { record, reason } };
  }
  private sealed = 0;
  seal(): number {
    return this.sealed++;
  }
  durable(): void {}
  derive(): Promise<void> {
    return Promise.resolve();
  }
  rederive(): Promise<void> {
    return Promise.resolve();
  }
  derivedLost(): Promise<boolean> {
    return Promise.resolve(false);
  }
  reset(): void {}
}

let ctx: TestContext;
after(async () => {
  await ctx.cleanup();
});

test('a retried flush whose first insert landed stores nothing twice', { timeout: 120_000 }, async () => {
  ctx = await testContext('ingest_retry', { AGENTLEDGER_BATCH_MAX_ROWS: '1000', AGENTLEDGER_BATCH_MAX_WAIT_MS: '50', ...FAULT_THREADS });
  const log = createLogger('error');
  // The stream is in memory, but a retry settles the lost insert by its query_id in ClickHouse, in this database.
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  const kafka = createKafka(ctx.config.kafka, log);
  const topic = ctx.config.kafka.topics.envelopes;
  await ensureTopics(kafka, [{ topic, numPartitions: 1 }]);
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: Array.from({ length: 50 }, (_, i) => ({ key: 'k', value: String(i) })) });
  await producer.disconnect();

  const stream = new LostAnswerStream(topic);
  const clickhouse = createClickHouse(ctx.config.clickhouse);
  const ingestor = new Ingestor({ edges: ingestEdges(kafkaGroup(kafka, ctx.config), clickhouse), config: ctx.config, log, metrics: createMetrics() }, [stream]);
  await ingestor.start();
  for (let i = 0; i < 400 && (stream.stored.length < 50 || ingestor.buffered > 0); i++) await sleep(50);
  await sleep(500);
  await ingestor.stop();
  await clickhouse.close();

  assert.ok(stream.inserts >= 1);
  const offsets = stream.stored.map((r) => r.kafka_offset);
  assert.equal(new Set(offsets).size, 50, 'every record stored');
  assert.equal(offsets.length, 50, 'none stored twice');
});
