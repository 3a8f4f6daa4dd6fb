/**
 * Bad input never stops the pipeline: every kind of malformed record lands in
 * the dead-letter topic with its original bytes, key, source and reason,
 * while the loops around it are stored and verified.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Partitioners } from 'kafkajs';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { generateTraffic, malformedRecords } from '../../src/demo/traffic/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { migrate } from '../../src/migrate/migrate.js';
import { createKafka, ensureTopics, TOPIC_CONFIG } from '../../src/kafka/client.js';
import { testContext, type TestContext } from '../support/context.js';
import { runCli } from '../support/processes.js';

const log = createLogger('warn');
let ctx: TestContext;

before(async () => {
  ctx = await testContext('dlq');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
});
after(async () => {
  await ctx.cleanup();
});

test('malformed records go to the dead-letter topic and the loops around them verify', { timeout: 300_000 }, async () => {
  const kafka = createKafka(ctx.config.kafka, log);
  const { envelopes: topic, deadLetter } = ctx.config.kafka.topics;
  await ensureTopics(kafka, [
    { topic, numPartitions: 2, configEntries: TOPIC_CONFIG },
    { topic: deadLetter, numPartitions: 1, configEntries: TOPIC_CONFIG },
  ]);
  const traffic = generateTraffic({ loops: 30, envelopesPerLoop: 20, seed: 5, payloadBytes: 300 });
  const good = [...traffic.records];
  const bad = malformedRecords();
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  // Bad records in the middle of the good ones, on every partition.
  const half = Math.floor(good.length / 2);
  await producer.send({ topic, acks: -1, messages: good.slice(0, half).map((r) => ({ key: r.key, value: r.value })) });
  for (const [i, b] of bad.entries()) await producer.send({ topic, acks: -1, messages: [{ key: b.key, value: b.value, partition: i % 2 }] });
  await producer.send({ topic, acks: -1, messages: good.slice(half).map((r) => ({ key: r.key, value: r.value })) });
  await producer.disconnect();

  const run = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], ctx.env);
  assert.equal(await run.exited, 0, run.stderr());

  // The loops verify: every envelope ok, none lost around the bad records.
  const ch = createClickHouse(ctx.config.clickhouse);
  const verdicts = await ch
    .query({ query: 'SELECT verdict, count() AS n FROM envelopes GROUP BY verdict ORDER BY verdict', format: 'JSONEachRow' })
    .then((r) => r.json<{ verdict: string; n: string }>());
  await ch.close();
  assert.deepEqual(
    verdicts.map((v) => [v.verdict, Number(v.n)]),
    [
      ['malformed', bad.length],
      ['ok', traffic.expected.envelopes],
    ],
  );

  // Every bad record is in the dead-letter topic, byte for byte, with its reason and source.
  const consumer = kafka.consumer({ groupId: `${ctx.config.kafka.groupId}.dlq-reader`, maxBytes: 64 * 1024 * 1024 });
  await consumer.connect();
  await consumer.subscribe({ topic: deadLetter, fromBeginning: true });
  const seen: { key: string | null; value: Buffer; reason: string; source: string }[] = [];
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        eachMessage: async ({ message }) => {
          const h = (name: string): string => message.headers?.[name]?.toString() ?? '';
          seen.push({
            key: message.key?.toString() ?? null,
            value: message.value ?? Buffer.alloc(0),
            reason: h('x-agentledger-reason'),
            source: `${h('x-source-topic')}/${h('x-source-partition')}/${h('x-source-offset')}`,
          });
          if (seen.length >= bad.length) resolve();
          return Promise.resolve();
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  assert.equal(seen.length, bad.length);
  for (const b of bad) {
    const match = seen.find((s) => s.value.equals(b.value));
    assert.ok(match, `${b.name}: in the dead-letter topic with its original bytes`);
    assert.ok(match.reason.length > 0, `${b.name}: has a reason`);
    assert.match(match.source, new RegExp(`^${topic.replace(/\./g, '\\.')}/[01]/\\d+$`), `${b.name}: names its source`);
    if (b.key !== null && b.key !== '') assert.equal(match.key, b.key);
  }
});
