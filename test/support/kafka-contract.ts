/**
 * The contract of src/kafka/contract.ts, proven against a real broker through
 * the interface alone: a second Kafka adapter is proven by calling
 * kafkaContract() with its own `makeGroup` (test/integration/kafka-contract.test.ts
 * runs it for kafkaGroup() on the local broker).
 *
 * Records reach the topic through the contract too: sendDeadLetters writes
 * to the dead-letter topic, which the members then consume.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Config } from '../../src/config/index.js';
import type { BatchPayload, GroupListener, KafkaGroup, Position } from '../../src/kafka/contract.js';
import { asError, failureMessage, OwnershipLost } from '../../src/errors/errors.js';
import type { DeadLetter } from '../../src/pipeline/stream.js';
import { testContext, type TestContext } from './context.js';
import { sleep } from './processes.js';

/** How long a fact may take to come before the test fails naming it. */
const FACT_MS = 60_000;

/** Waits for `fact`, at most FACT_MS, and fails naming `what`. */
export async function until(what: string, fact: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + FACT_MS;
  while (!(await fact())) {
    if (Date.now() > deadline) assert.fail(`not within ${FACT_MS} ms: ${what}`);
    await sleep(50);
  }
}

/** What a member was told by its group, in order. */
export class Told implements GroupListener {
  readonly joins: { memberId: string; generation: number; assignment: Readonly<Record<string, readonly number[]>> }[] = [];
  revoked = 0;
  readonly crashes: Error[] = [];
  rebalancing(): void {
    this.revoked++;
  }
  joined(memberId: string, generation: number, assignment: Readonly<Record<string, readonly number[]>>): void {
    this.joins.push({ memberId, generation, assignment });
  }
  readonly losses: string[] = [];
  filtered(): void {}
  crashed(error: Error): void {
    this.crashes.push(error);
  }
  lost(why: string): void {
    this.losses.push(why);
  }
  /** The partitions of `topic` given at the last join. */
  owned(topic: string): readonly number[] {
    return this.joins[this.joins.length - 1]?.assignment[topic] ?? [];
  }
}

const PARTITIONS = 4;

/** `n` dead letters with distinct keys (spread over the partitions) and their reason. */
export function letters(n: number, tag: string): DeadLetter[] {
  return Array.from({ length: n }, (_, i) => ({
    record: { topic: 'source', partition: i % 3, offset: String(i), timestamp: '0', key: Buffer.from(`${tag}-${i}`), value: Buffer.from(`value ${i}`), headers: { trace: `t${i}` } },
    reason: `reason ${i}`,
  }));
}

/** Positions after every record a member was handed, per partition. */
function positionsAfter(seen: ReadonlyMap<number, bigint>, topic: string, metadata?: string): Position[] {
  return [...seen].map(([partition, last]) => ({ topic, partition, offset: String(last + 1n), ...(metadata === undefined ? {} : { metadata }) }));
}

/**
 * Registers the contract's tests for the adapter `makeGroup` makes (one
 * call per member); `name` prefixes each test.
 */
export function kafkaContract(name: string, makeGroup: (config: Config) => KafkaGroup): void {
  const contexts: TestContext[] = [];
  const groups: KafkaGroup[] = [];
  after(async () => {
    for (const g of groups) await g.disconnect().catch(() => undefined);
    for (const c of contexts) await c.cleanup();
  });
  const member = async (config: Config, told: Told, eachBatch: (payload: BatchPayload) => Promise<void>, topic: string): Promise<KafkaGroup> => {
    const group = makeGroup(config);
    groups.push(group);
    group.listen(told);
    await group.connect();
    await group.run([topic], eachBatch);
    return group;
  };

  /** A fresh context whose dead-letter topic holds `n` letters, sent through the contract: the topic the test's members consume. */
  const topicWith = async (what: string, n: number): Promise<{ config: Config; topic: string; producer: KafkaGroup }> => {
    const ctx = await testContext(`kafka_contract_${what}`);
    contexts.push(ctx);
    const topic = ctx.config.kafka.topics.deadLetter;
    const producer = makeGroup(ctx.config);
    groups.push(producer);
    await producer.ensureTopics([topic]);
    await producer.connect();
    await producer.sendDeadLetters(letters(n, what));
    return { config: ctx.config, topic, producer };
  };

  test(`${name}: topics made once, a send that resolves only with every record stored, batches with their headers, commits with metadata, the group's lag`, async () => {
    const ctx = await testContext('kafka_contract');
    contexts.push(ctx);
    const topic = ctx.config.kafka.topics.deadLetter;
    const admin = makeGroup(ctx.config);
    groups.push(admin);
    await admin.ensureTopics([topic]);
    await admin.ensureTopics([topic]);
    await admin.connect();
    const sent = letters(300, 'a');
    await admin.sendDeadLetters(sent);
    // Resolved: every record is in the topic, before anyone reads it.
    assert.equal(await admin.uncommitted([topic]), 300n, 'every record sent is in the topic once the send resolved');

    const told = new Told();
    const seen = new Map<number, bigint>();
    const got: { key: string; reason: string; source: string; trace: string }[] = [];
    const a = await member(ctx.config, told, async ({ batch, resolveOffset, heartbeat }) => {
      for (const m of batch.messages) {
        const h = m.headers ?? {};
        got.push({ key: String(m.key), reason: String(h['x-agentledger-reason']), source: `${String(h['x-source-topic'])}:${String(h['x-source-partition'])}:${String(h['x-source-offset'])}`, trace: String(h['trace']) });
      }
      seen.set(batch.partition, BigInt(batch.lastOffset()));
      resolveOffset(batch.lastOffset());
      await heartbeat();
    }, topic);
    await until('the member joins', () => told.joins.length > 0);
    assert.equal(told.joins[0]!.generation, 1, 'the first join is generation 1');
    assert.deepEqual([...told.owned(topic)].sort(), [0, 1, 2, 3], 'the only member owns every partition');
    await until('every record is handed to the member', () => got.length >= 300);
    assert.equal(got.length, 300, 'each record handed once');
    got.sort((x, y) => Number(x.key.split('-')[1]) - Number(y.key.split('-')[1]));
    sent.forEach((d, i) => assert.deepEqual(got[i], { key: String(d.record.key), reason: d.reason, source: `source:${d.record.partition}:${d.record.offset}`, trace: `t${i}` }));
    assert.equal(await a.uncommitted([topic]), 300n, 'nothing is committed by the client itself');

    await a.commit(positionsAfter(seen, topic, '1764504000'));
    const committed = await a.committedOffsets(topic);
    for (const [partition, last] of seen) assert.deepEqual(committed.get(partition), { offset: String(last + 1n), metadata: '1764504000' }, `partition ${partition}'s commit and its metadata`);
    assert.equal(await a.uncommitted([topic]), 0n, 'the lag is what lies past the commits');
    assert.equal(await a.uncommitted([topic], { [topic]: [] }), 0n, 'and nothing of partitions not owned');
    assert.equal(told.crashes.length, 0, String(told.crashes[0]));
  });

  test(`${name}: a member expelled while it holds a batch cannot commit (a lost membership, and it is told its partitions are going); the next owner's commit lands`, async () => {
    const { config, topic, producer } = await topicWith('fence', 40);

    const toldA = new Told();
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let holding: { topic: string; partition: number; offset: string } | undefined;
    let refusal: unknown;
    const zombie: { group?: KafkaGroup } = {};
    zombie.group = await member(config, toldA, async ({ batch }) => {
      if (holding !== undefined) return;
      holding = { topic, partition: batch.partition, offset: String(BigInt(batch.lastOffset()) + 1n) };
      // No heartbeat while it holds the batch: the coordinator expels it after the session timeout.
      await released;
      refusal = await zombie.group!.commit([holding]).then(
        () => undefined,
        (err: unknown) => err,
      );
      if (refusal !== undefined) throw asError(refusal);
    }, topic);
    await until('the first member holds a batch', () => holding !== undefined);
    const toldB = new Told();
    const owner = await member(config, toldB, ({ batch, resolveOffset }) => Promise.resolve(resolveOffset(batch.lastOffset())), topic);
    await until('the second member joins with every partition (the first expelled)', () => toldB.owned(topic).length === PARTITIONS);
    // The owner commits the partition's start (before the expelled member wakes and joins again).
    const owned = { ...holding!, offset: '0' };
    await owner.commit([owned]);
    release();
    await until('the expelled member tried its commit', () => refusal !== undefined || toldA.crashes.length > 0 || toldA.revoked > 0);
    assert.ok(refusal !== undefined, 'the commit of an expelled member fails');
    assert.ok(refusal instanceof OwnershipLost, `as a lost membership (OwnershipLost): ${failureMessage(refusal)}`);
    await until('the expelled member is told its partitions are going', () => toldA.revoked > 0);
    assert.equal((await producer.committedOffsets(topic)).get(owned.partition)?.offset, '0', "the owner's commit stands; the refused one did not land");
  });

  test(`${name}: a seek makes the batches fetched before it stale and the next fetch start there; a rejoin is a new generation`, async () => {
    const { config, topic } = await topicWith('seek', 20);
    const told = new Told();
    let first: { partition: number; firstOffset: string | null; staleAfterSeek: boolean } | undefined;
    const firsts: { partition: number; firstOffset: string | null }[] = [];
    let group: KafkaGroup | undefined = undefined;
    group = await member(config, told, ({ batch, resolveOffset, isStale }) => {
      firsts.push({ partition: batch.partition, firstOffset: batch.firstOffset() });
      resolveOffset(batch.lastOffset());
      if (first === undefined && batch.messages.length > 1) {
        assert.equal(isStale(), false, 'a batch is not stale before a seek');
        group!.seek(topic, batch.partition, batch.messages[1]!.offset);
        // Asked at once: the next fetch, which starts at the seek, ends the staleness.
        first = { partition: batch.partition, firstOffset: batch.firstOffset(), staleAfterSeek: isStale() };
      }
      return Promise.resolve();
    }, topic);
    await until('a batch is sought back', () => first !== undefined);
    assert.ok(first!.staleAfterSeek, 'the batch fetched before the seek is stale');
    await until('the partition is fetched again from the seek', () => firsts.filter((f) => f.partition === first!.partition).length >= 2);
    const again = firsts.filter((f) => f.partition === first!.partition)[1]!;
    assert.equal(BigInt(again.firstOffset!), BigInt(first!.firstOffset!) + 1n, 'the next fetch starts at the offset sought');

    const before = told.joins[told.joins.length - 1]!.generation;
    await group.rejoin('the test asks');
    assert.deepEqual(told.losses, ['the test asks'], 'told it loses what it holds first');
    await until('the member joins again', () => (told.joins[told.joins.length - 1]?.generation ?? 0) > before);
    assert.equal(told.joins[told.joins.length - 1]!.generation, before + 1, 'one generation later');
    assert.deepEqual([...told.owned(topic)].sort(), [0, 1, 2, 3], 'with its partitions');
  });
}
