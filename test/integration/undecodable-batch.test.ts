/**
 * A record batch the consumer cannot decode (issue 20): a corrupt compressed
 * payload, or a codec id Kafka does not define. Retrying or restarting reads
 * the same bytes again, and skipping them would lose records without a trace,
 * so ingest must stop, with one line saying which topic, partition and
 * offsets and which codec, count it in agentledger_undecodable_batches_total,
 * and store and commit nothing from that batch on.
 *
 * The broker checks a batch when it is produced (Kafka 4.1 refuses both a
 * broken gzip trailer and codec id 6 with UNKNOWN_SERVER_ERROR, tried with a
 * kafkajs producer given such codecs), so the bad batch is made after it was
 * stored: the test
 * rewrites bytes of the partition's log segment, which the broker then serves
 * as they are (kafkajs checks no CRC). Only on the local stack, where the
 * broker's files are on this machine; skipped, saying so, elsewhere.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { EnvelopeStream } from '../../src/pipeline/envelopes.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { EnvelopeStore } from '../../src/store/envelope-store.js';
import { migrate } from '../../src/migrate/migrate.js';
import { kafkaGroup } from '../../src/kafka/group.js';
import { ingestEdges } from '../../src/ingest/edges.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { createKafka, ensureTopics, TOPIC_CONFIG } from '../../src/kafka/client.js';
import { runToEnd } from '../support/cli-run.js';
import { machineSkip } from '../support/skips.js';
import { query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { chain } from '../support/envelope-chain.js';
import { kafkaLogReadable, overwriteBatch, storedBatches, type StoredBatch } from '../support/kafka-log.js';
import { services } from '../support/services.js';

const log = createLogger('error');
const svc = await services();
const skip = machineSkip(svc.kind !== 'local' ? 'Kafka is not the local stack: its log segments cannot be rewritten from here' : kafkaLogReadable() ? undefined : 'no broker log files under .state/kafka/data');

let ctx: TestContext;
let topic: string;
/** The batch made undecodable (offsets 30..49), and the good one after it. */
let bad: StoredBatch;

const links = (loop: string, n: number) =>
  chain(
    loop,
    Array.from({ length: n }, (_, i) => [`2026-11-30T10:00:${String(i).padStart(2, '0')}Z`, i === 0 ? 'LoopStarted' : 'IterationStarted', `{"n":${i}}`] as const),
  );

async function stored(): Promise<number> {
  const [row] = await query<{ n: string }>(ctx, 'SELECT count() AS n FROM envelopes');
  return Number(row?.n ?? 0);
}

async function committed(): Promise<string | undefined> {
  const admin = new Kafka({ clientId: 'test-offsets', brokers: [...ctx.config.kafka.brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const [offsets] = await admin.fetchOffsets({ groupId: ctx.config.kafka.groupId, topics: [topic] });
    return offsets?.partitions.find((p) => p.partition === 0)?.offset;
  } finally {
    await admin.disconnect();
  }
}

before(async () => {
  if (skip) return;
  ctx = await testContext('undecodable', { AGENTLEDGER_BATCH_MAX_WAIT_MS: '200' });
  topic = ctx.config.kafka.topics.envelopes;
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  const kafka = createKafka(ctx.config.kafka, log);
  await ensureTopics(kafka, [
    { topic, numPartitions: 1, configEntries: TOPIC_CONFIG },
    { topic: ctx.config.kafka.topics.deadLetter, numPartitions: 1, configEntries: TOPIC_CONFIG },
  ]);
  const producer = kafka.producer();
  await producer.connect();
  try {
    // One request, one batch each: 30 envelopes ingested first, then the
    // batch to corrupt (20) and a good one after it (10).
    await producer.send({ topic, acks: -1, compression: CompressionTypes.GZIP, messages: links('loop-a', 30) });
    const first = await runToEnd(['ingest', '--no-migrate', '--idle-exit-ms', '1500'], ctx.env, { timeoutMs: 90_000 });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(await stored(), 30);
    await producer.send({ topic, acks: -1, compression: CompressionTypes.GZIP, messages: links('loop-b', 20) });
    await producer.send({ topic, acks: -1, messages: links('loop-c', 10) });
  } finally {
    await producer.disconnect();
  }
  const batches = storedBatches(topic, 0);
  bad = batches.find((b) => b.baseOffset === 30n) ?? assert.fail(`no batch at offset 30: ${batches.map((b) => b.baseOffset).join(', ')}`);
  assert.deepEqual([bad.lastOffset, bad.codec], [49n, 1]);
});

after(async () => {
  await ctx?.cleanup();
});

/** What must hold after every stop: only the first 30 stored, the group's commit at the bad batch. */
async function nothingPastIt(): Promise<void> {
  assert.equal(await stored(), 30, 'nothing of the bad batch or after it stored');
  assert.equal(await committed(), '30', 'the group committed up to the bad batch, not past it');
}

test('a corrupt gzip batch: ingest stops with one line naming topic, partition, offsets and codec, counts it, stores and commits nothing from it on', { skip, timeout: 180_000 }, async () => {
  // The gzip trailer (CRC-32 and length of the records) no longer matches.
  overwriteBatch(bad, bad.size - 8, Buffer.from('corrupt!'));
  const place = `topic ${topic}, partition 0, offsets 30..49`;

  // In process, for the metric.
  const clickhouse = createClickHouse(ctx.config.clickhouse);
  const metrics = createMetrics();
  const stream = new EnvelopeStream(topic, new EnvelopeStore(clickhouse), { seqEncoding: ctx.config.envelopes.seqEncoding, maxPayloadBytes: ctx.config.envelopes.maxPayloadBytes });
  const ingestor = new Ingestor({ edges: ingestEdges(kafkaGroup(createKafka(ctx.config.kafka, log), ctx.config), clickhouse), config: ctx.config, log, metrics }, [stream]);
  const fatal = new Promise<Error>((resolve) => (ingestor.onFatal = resolve));
  try {
    await ingestor.start();
    const err = await Promise.race([fatal, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no fatal error in 60 s')), 60_000).unref())]);
    assert.match(err.message, new RegExp(`^a record batch cannot be decoded \\(${place.replace(/\./g, '\\.')}\\): its gzip payload cannot be decompressed \\(.+\\)\\. Nothing from it on is read or committed`));
  } finally {
    await ingestor.stop(false);
    await clickhouse.close();
  }
  const counted = (await metrics.registry.getSingleMetricAsString('agentledger_undecodable_batches_total')).split('\n');
  assert.ok(counted.includes(`agentledger_undecodable_batches_total{topic="${topic}",partition="0"} 1`), counted.join('\n'));
  await nothingPastIt();

  // As a supervisor runs it: exit 1, the reason on one line, no stack trace; and the same again on a restart.
  for (let run = 0; run < 2; run++) {
    const r = await runToEnd(['ingest', '--no-migrate', '--idle-exit-ms', '1500'], ctx.env, { timeoutMs: 90_000 });
    assert.equal(r.code, 1, r.stderr);
    const last = r.stderr.trim().split('\n').filter((l) => l.includes(' ERROR ')).at(-1) ?? '';
    assert.match(last, /consumer stopped on an error it cannot retry/);
    assert.ok(last.includes(`a record batch cannot be decoded (${place}): its gzip payload cannot be decompressed`), last);
    assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace at the default log level');
    await nothingPastIt();
  }
});

test('a batch naming codec id 6 (Kafka defines 0 to 4): the same stop, naming the codec id, never records read as plain', { skip, timeout: 120_000 }, async () => {
  // The attributes' codec bits: gzip (1) becomes 6.
  const attributes = Buffer.alloc(2);
  attributes.writeInt16BE(6);
  overwriteBatch(bad, 21, attributes);
  assert.equal(storedBatches(topic, 0).find((b) => b.baseOffset === 30n)?.codec, 6);
  const r = await runToEnd(['ingest', '--no-migrate', '--idle-exit-ms', '1500'], ctx.env, { timeoutMs: 90_000 });
  assert.equal(r.code, 1, r.stderr);
  const last = r.stderr.trim().split('\n').filter((l) => l.includes(' ERROR ')).at(-1) ?? '';
  assert.ok(
    last.includes(`a record batch cannot be decoded (topic ${topic}, partition 0, fetched from offset 30): the batch names compression codec id 6, which Kafka does not define`),
    last,
  );
  await nothingPastIt();
});
