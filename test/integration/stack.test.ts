/**
 * The foundation: the three real services the pipeline stands on, used the way
 * the pipeline uses them: kafkajs produce + eachBatch consume with manual
 * offset resolution, an @clickhouse/client insert into a migrated table and a
 * read-back, and a BullMQ job enqueued and processed on Redis.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Queue, Worker } from 'bullmq';
import { Partitioners } from 'kafkajs';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { migrate } from '../../src/migrate/migrate.js';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createRedis } from '../../src/jobs/redis.js';
import { createKafka, ensureTopics } from '../../src/kafka/client.js';
import { createLogger } from '../../src/observability/logger.js';
import { testContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
const log = createLogger('warn');

before(async () => {
  ctx = await testContext('stack');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
});

after(async () => {
  await ctx.cleanup();
});

test('Kafka -> kafkajs eachBatch -> ClickHouse -> BullMQ job on Redis', async () => {
  const { config } = ctx;
  const topic = config.kafka.topics.envelopes;
  const kafka = createKafka(config.kafka, log);
  await ensureTopics(kafka, [{ topic, numPartitions: 3 }]);

  // Produce 300 keyed records over 30 "loops".
  const sent = Array.from({ length: 300 }, (_, i) => ({ loop: `loop-${i % 30}`, seq: Math.floor(i / 30) + 1 }));
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: sent.map((s) => ({ key: s.loop, value: JSON.stringify(s) })) });
  await producer.disconnect();

  // Consume with offsets resolved only after the rows are in ClickHouse.
  const ch = createClickHouse(config.clickhouse);
  const consumer = kafka.consumer({ groupId: config.kafka.groupId });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let stored = 0;
  const done = new Promise<void>((resolve, reject) => {
    void consumer
      .run({
        eachBatchAutoResolve: false,
        eachBatch: async ({ batch, resolveOffset, commitOffsetsIfNecessary, heartbeat }) => {
          const rows = batch.messages.map((m) => {
            const v = JSON.parse(m.value?.toString() ?? '{}') as { loop: string; seq: number };
            return {
              loop_id: v.loop,
              seq: v.seq,
              time: '2026-11-30 10:00:00',
              time_text: '2026-11-30T10:00:00Z',
              kind: 'LoopStarted',
              kind_class: 'LoopStarted',
              hash: '',
              computed_hash: '',
              payload: '{}',
              verdict: 'ok',
              detail: '',
              kafka_topic: batch.topic,
              kafka_partition: batch.partition,
              kafka_offset: m.offset,
              ingested_at: '2026-11-30 10:00:00',
            };
          });
          await ch.insert({ table: 'envelopes', values: rows, format: 'JSONEachRow' });
          for (const m of batch.messages) resolveOffset(m.offset);
          await commitOffsetsIfNecessary();
          await heartbeat();
          stored += rows.length;
          if (stored >= sent.length) resolve();
        },
      })
      .catch(reject);
  });
  await done;
  await consumer.disconnect();

  // Read back: every (loop, seq) exactly once, offsets stored as exact integers.
  const [summary] = await ch
    .query({
      query: 'SELECT count() AS n, uniqExact(loop_id, seq) AS keys, uniqExact(loop_id) AS loops, toString(max(kafka_offset)) AS maxOffset FROM envelopes',
      format: 'JSONEachRow',
    })
    .then((r) => r.json<{ n: string; keys: string; loops: string; maxOffset: string }>());
  if (!summary) throw new Error("no summary row");
  assert.equal(Number(summary.n), 300);
  assert.equal(Number(summary.keys), 300);
  assert.equal(Number(summary.loops), 30);

  // The committed offsets cover every record: a restarted consumer would read nothing again.
  const admin = kafka.admin();
  await admin.connect();
  const committed = await admin.fetchOffsets({ groupId: config.kafka.groupId, topics: [topic] });
  const latest = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  for (const p of latest) {
    const c = committed[0]?.partitions.find((x) => x.partition === p.partition);
    assert.equal(c?.offset, p.high, `partition ${p.partition} committed up to its high watermark`);
  }

  // BullMQ: enqueue a job carrying what ClickHouse holds, process it on a worker.
  const connection = createRedis(config.redis.url);
  const workerConnection = createRedis(config.redis.url);
  const queue = new Queue<{ loops: number }, string>('stack-check', { connection, prefix: config.redis.queuePrefix });
  const worker = new Worker<{ loops: number }, string>(
    'stack-check',
    async (job) => {
      const [row] = await ch
        .query({ query: 'SELECT uniqExact(loop_id) AS loops FROM envelopes', format: 'JSONEachRow' })
        .then((r) => r.json<{ loops: string }>());
      return `expected ${job.data.loops}, found ${row?.loops ?? '?'}`;
    },
    { connection: workerConnection, prefix: config.redis.queuePrefix },
  );
  const finished = new Promise<string>((resolve, reject) => {
    worker.on('completed', (_job, result) => resolve(result));
    worker.on('failed', (_job, err) => reject(err));
  });
  await queue.add('check', { loops: 30 }, { removeOnComplete: false });
  assert.equal(await finished, 'expected 30, found 30');
  assert.equal(await queue.getCompletedCount(), 1);

  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  workerConnection.disconnect();
  await ch.close();
});
