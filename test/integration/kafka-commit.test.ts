/**
 * The fence's commit against the real client: kafkajs's consumer.commitOffsets
 * returns as if it had committed when its runner is not running (stopping,
 * or restarting after a crash, while it waits for the batch in flight), and
 * sends nothing. A fence that passed on that return would let a member whose
 * session may already be gone insert its buffer. kafkaGroup().commit must
 * fail instead (CommitNotSent, a lost membership to the flusher), and a
 * commit sent while the runner runs must still pass and land.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Partitioners } from 'kafkajs';
import { kafkaGroup } from '../../src/kafka/group.js';
import { CommitNotSent, membershipError } from '../../src/kafka/errors.js';
import { createLogger } from '../../src/observability/logger.js';
import { createKafka, ensureTopics } from '../../src/kafka/client.js';
import { testContext, type TestContext } from '../support/context.js';
import { sleep } from '../support/processes.js';

let ctx: TestContext | undefined;

after(async () => {
  await ctx?.cleanup();
});

test('a commit kafkajs does not send (its runner stopping while a batch is in flight) fails as a lost membership; one it sends lands', async () => {
  ctx = await testContext('kafka_commit');
  const log = createLogger('error');
  const kafka = createKafka(ctx.config.kafka, log);
  const topic = ctx.config.kafka.topics.envelopes;
  await ensureTopics(kafka, [{ topic, numPartitions: 1 }]);
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  await producer.send({ topic, messages: [{ value: 'a' }, { value: 'b' }, { value: 'c' }] });
  await producer.disconnect();

  const edges = kafkaGroup(kafka, ctx.config);
  edges.listen({ rebalancing: () => undefined, joined: () => undefined, filtered: () => undefined, crashed: () => undefined, lost: () => undefined });
  await edges.connect();
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let fetched!: () => void;
  const inBatch = new Promise<void>((r) => (fetched = r));
  await edges.run([topic], async () => {
    fetched();
    await held;
  });
  let stopping: Promise<void> | undefined;
  try {
    await inBatch;
    // While the runner runs, the commit is sent and the group holds it.
    await edges.commit([{ topic, partition: 0, offset: '1' }]);
    assert.equal((await edges.committedOffsets(topic)).get(0)?.offset, '1', 'a commit sent while the runner runs lands');

    // The runner stops (as on a crash, or disconnect) and waits for the batch
    // in flight: from now on kafkajs's commitOffsets returns without sending.
    stopping = edges.disconnect();
    await sleep(300);
    const refused = await edges.commit([{ topic, partition: 0, offset: '2' }]).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.ok(refused instanceof CommitNotSent, `the unsent commit fails: ${String(refused)}`);
    assert.ok(membershipError(refused) !== undefined, 'and the flusher reads it as a lost membership (its fence drops the buffer)');
    const admin = kafka.admin();
    await admin.connect();
    try {
      const [offsets] = await admin.fetchOffsets({ groupId: ctx.config.kafka.groupId, topics: [topic] });
      assert.equal(offsets?.partitions.find((p) => p.partition === 0)?.offset, '1', 'nothing was committed by the unsent commit');
    } finally {
      await admin.disconnect();
    }
  } finally {
    release();
    await (stopping ?? edges.disconnect());
  }
});
