/**
 * The Kafka contract (src/kafka/contract.ts) under the local cluster's broker
 * kill, through the interface alone: the broker leading a partition of the
 * topic is SIGKILLed while records are sent and consumed. A send that
 * resolves has every record in the topic (the member is handed each one); a
 * send that fails fails typed (transient, or a lost membership), never
 * fatal, and is sent again; the member's commits land once the group has
 * settled, and the group's lag is then nothing. The kill itself (and finding
 * the leader to kill) is the test's business, with kafkajs's admin and the
 * stack's pids; what is asserted goes through the contract. Runs only with
 * AGENTLEDGER_TEST_CLUSTER=1 (test/integration/kafka-contract.test.ts runs
 * the same contract on the single broker).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { AgentledgerError, failureMessage, kindOf } from '../../src/errors/errors.js';
import type { Position } from '../../src/kafka/contract.js';
import { createKafka } from '../../src/kafka/client.js';
import { kafkaGroup } from '../../src/kafka/group.js';
import { createLogger } from '../../src/observability/logger.js';
import { CLUSTER_SKIP, clusterPid, stack, useCluster } from '../support/cluster.js';
import { testContext, type TestContext } from '../support/context.js';
import { letters, Told, until } from '../support/kafka-contract.js';

const BROKERS = '127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094';
const ROUNDS = 6;
const PER_ROUND = 100;

const contexts: TestContext[] = [];
useCluster(() => []);
after(async () => {
  for (const ctx of contexts) await ctx.cleanup();
});

/** The partitions' leaders once every replica of the topic is in sync (Kafka moves a leadership only to an in-sync replica). */
async function leadersInSync(topic: string): Promise<number[]> {
  const admin = new Kafka({ clientId: 'cluster-kafka-contract', brokers: BROKERS.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    let leaders: number[] = [];
    await until('every replica of the topic in sync', async () => {
      const partitions = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions ?? [];
      leaders = partitions.map((p) => p.leader);
      return partitions.length === 4 && partitions.every((p) => p.isr.length === 3);
    });
    return leaders;
  } finally {
    await admin.disconnect();
  }
}

test('a partition leader SIGKILLed while records are sent and consumed: every send that resolves is in the topic, failures are typed and sent again, the commits land, no lag is left', { skip: CLUSTER_SKIP, timeout: 600_000 }, async () => {
  const ctx = await testContext('kafka_contract_kill', { AGENTLEDGER_KAFKA_BROKERS: BROKERS });
  contexts.push(ctx);
  const topic = ctx.config.kafka.topics.deadLetter;
  const make = (): ReturnType<typeof kafkaGroup> => kafkaGroup(createKafka(ctx.config.kafka, createLogger('error')), ctx.config);
  const producer = make();
  await producer.ensureTopics([topic]);
  await producer.connect();
  const victim = (await leadersInSync(topic))[0]!;

  const told = new Told();
  const seen = new Map<string, string>();
  const last = new Map<number, bigint>();
  const member = make();
  member.listen(told);
  await member.connect();
  await member.run([topic], async ({ batch, resolveOffset, heartbeat }) => {
    for (const m of batch.messages) seen.set(String(m.key), String(m.headers?.['x-agentledger-reason']));
    const end = BigInt(batch.lastOffset());
    if (end > (last.get(batch.partition) ?? -1n)) last.set(batch.partition, end);
    resolveOffset(batch.lastOffset());
    await heartbeat();
  });

  const refusals: string[] = [];
  let killed = false;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      if (round === 2) {
        process.kill(clusterPid(`kafka-${victim}`), 'SIGKILL');
        killed = true;
      }
      const batch = letters(PER_ROUND, `r${round}`);
      await until(`round ${round} sent`, async () => {
        try {
          await producer.sendDeadLetters(batch);
          return true;
        } catch (err) {
          assert.ok(err instanceof AgentledgerError && kindOf(err) !== 'fatal', `a failed send is typed, and not fatal: ${failureMessage(err)}`);
          refusals.push(failureMessage(err, 120));
          return false;
        }
      });
    }
    await until('the member is handed every record sent', () => seen.size >= ROUNDS * PER_ROUND);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, d] of letters(PER_ROUND, `r${round}`).entries()) assert.equal(seen.get(String(d.record.key)), d.reason, `record ${i} of round ${round}`);
    }
    // The member commits what it was handed; a commit refused while the group settles is typed and tried again.
    await until("the member's commit lands", async () => {
      const positions: Position[] = [...last].map(([partition, end]) => ({ topic, partition, offset: String(end + 1n) }));
      try {
        await member.commit(positions);
        return (await member.uncommitted([topic])) === 0n;
      } catch (err) {
        assert.ok(err instanceof AgentledgerError && kindOf(err) !== 'fatal', `a failed commit or lag read is typed, and not fatal: ${failureMessage(err)}`);
        return false;
      }
    });
    const committed = await member.committedOffsets(topic);
    assert.equal(await member.uncommitted([topic]), 0n, 'no lag left');
    for (const [partition, end] of last) assert.equal(committed.get(partition)?.offset, String(end + 1n), `partition ${partition} committed to its end`);
    process.stdout.write(`kafka-${victim} SIGKILLed after 2 of ${ROUNDS} rounds; ${refusals.length} send(s) refused and sent again${refusals.length > 0 ? ` (${[...new Set(refusals)].slice(0, 3).join('; ')})` : ''}\n`);
  } finally {
    await member.disconnect().catch(() => undefined);
    await producer.disconnect().catch(() => undefined);
    if (killed) {
      const up = stack('up', '--cluster');
      assert.equal(up.status, 0, up.out);
    }
  }
});
