/**
 * Faults of the local cluster (ClickHouse 18.16, two shards of two replicas)
 * under a real `ingest` process, each asserting nothing lost and nothing
 * doubled, per loop and verdict, on every replica.
 *
 * A lagging replica while a new owner reads back: every replica stops fetching, so
 * each holds only the parts written to it; an `ingest` process stores the
 * first half of every loop's chain, and a second one (a new owner with an
 * empty cache) takes the second half and byte-identical redeliveries of part
 * of the first. The new owner's heads and versions are in parts some
 * replicas lack: read through the Distributed table alone, it would judge an
 * honest next link a gap and store redeliveries a second time. Read from
 * every replica (src/clickhouse/replicas.ts), nothing changes: every
 * link once, every verdict ok, and once fetches resume, the two replicas of
 * each shard hold the same rows. Runs only with AGENTLEDGER_TEST_CLUSTER=1
 * (as cluster-stack.test.ts: a cluster it started is stopped at the end).
 *
 * Then, under a running `ingest`: a ClickHouse replica SIGKILLed and started
 * again, ZooKeeper SIGKILLed for 30 s, and the leader broker of a partition
 * SIGKILLed while the second half of the traffic is produced. Each prints
 * what the fault cost in seconds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultViolationPlan, generateTraffic } from '../../src/demo/traffic/index.js';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { runToEnd } from '../support/cli-run.js';
import type { TestContext } from '../support/context.js';
import { chain } from '../support/envelope-chain.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { assertTrafficStored, CLUSTER_SKIP, clusterPid, clusterContexts, perLoop, query, SERVERS, SHARDS, stack } from '../support/cluster.js';
import { prng, runCli, sleep, until } from '../support/processes.js';

const skip = CLUSTER_SKIP;
const FIRST = SHARDS[0][0];
const LOOPS = 40;
const LINKS = 10;
const HALF = 5;

const BROKERS = '127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094';
const clusterContext = clusterContexts().make;

/**
 * Once the replicas have fetched: the two of each shard hold the same rows,
 * every loop its `perChain` links once and ok, and the Distributed table read
 * from `via` counts `loops` × `perChain` ok rows, each (loop, seq) once.
 */
async function assertEveryReplica(db: string, loops: number, perChain: number, via: number): Promise<void> {
  for (const [a, b] of SHARDS) {
    const deadline = Date.now() + 60_000;
    while ((await perLoop(a, db)) !== (await perLoop(b, db)) && Date.now() < deadline) await sleep(500);
    assert.equal(await perLoop(b, db), await perLoop(a, db), `the replicas of the shard of :${a} agree`);
    const wrong = (await perLoop(a, db)).split('\n').filter((line) => !line.endsWith(`\tok\t${perChain}\t${perChain}`));
    assert.deepEqual(wrong.slice(0, 5), [], `every loop on :${a} has its ${perChain} links once, ok (loop, verdict, rows, highest seq)`);
  }
  assert.equal(
    await query(via, `SELECT verdict, count(), uniqExact(loop_id, seq) FROM envelopes GROUP BY verdict SETTINGS prefer_localhost_replica = 0 FORMAT TSV`, db),
    `ok\t${loops * perChain}\t${loops * perChain}`,
  );
  // loop_heads: every loop's head at its last link, on every replica.
  for (const port of SERVERS) {
    const deadline = Date.now() + 60_000;
    const heads = (): Promise<string> => query(port, `SELECT count(), min(s), max(s) FROM (SELECT loop_id, max(seq) AS s FROM loop_heads_local GROUP BY loop_id) FORMAT TSV`, db);
    const shardLoops = Number(await query(port, 'SELECT uniqExact(loop_id) FROM envelopes_local', db));
    while ((await heads()) !== `${shardLoops}\t${perChain}\t${perChain}` && Date.now() < deadline) await sleep(500);
    assert.equal(await heads(), `${shardLoops}\t${perChain}\t${perChain}`, `loop_heads on :${port}`);
  }
}

/**
 * Runs `ingest` on a context's traffic; once it has stored its first rows,
 * provokes `fault`, which says what it did and when it ended (a restart, or
 * the kill itself); waits until `total` links are stored through the
 * Distributed table, prints the seconds that took, and stops ingest with
 * SIGTERM (exit 0: it never gave up).
 */
async function faultDuringIngest(ctx: TestContext, total: number, fault: () => Promise<{ said: string; endedAt: number; ended: string }>): Promise<void> {
  const db = ctx.config.clickhouse.database;
  const stored = async (): Promise<number> => Number(await query(FIRST, 'SELECT count() FROM envelopes SETTINGS prefer_localhost_replica = 0', db));
  // At info, so a failure shows what ingest did last (its joins, its progress, a retry that succeeded).
  const run = runCli(['ingest', '--no-migrate'], { ...ctx.env, AGENTLEDGER_LOG_LEVEL: 'info' });
  try {
    await until('the first rows stored', 120_000, async () => (Number(await query(FIRST, 'SELECT count() FROM envelopes_local', db)) > 0 ? true : undefined), [run]);
    // A failure says what ingest said last and where the rows are: CI keeps only the test's output.
    const told = async (err: unknown): Promise<Error> =>
      new Error(`${(err as Error).message}\n--- the replicas now:\n${await replicaStates(db)}\n--- ingest's last lines:\n${run.stderr().slice(-6000)}`, { cause: err });
    const { said, endedAt, ended } = await fault().catch(async (err: unknown) => {
      throw await told(err);
    });
    await until('every link stored', 240_000, async () => ((await stored()) >= total ? true : undefined), [run]).catch(async (err: unknown) => {
      throw await told(err);
    });
    console.log(`${said}; every link stored ${((Date.now() - endedAt) / 1000).toFixed(1)} s after ${ended}`);
  } finally {
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0, run.stderr().slice(-3000));
  }
}

/** Per server: its rows in `envelopes_local` and the state of its two tables ingest writes (read-only, session expired, queue, delay), or why it did not answer. */
async function replicaStates(db: string): Promise<string> {
  const lines: string[] = [];
  for (const port of SERVERS) {
    const rows = await query(port, 'SELECT count() FROM envelopes_local', db).catch((err: unknown) => String(err).slice(0, 200));
    const replicas = await query(port, `SELECT table, is_readonly, is_session_expired, queue_size, inserts_in_queue, absolute_delay FROM system.replicas WHERE database = '${db}' AND table IN ('envelopes_local', 'loop_heads_local') FORMAT TSV`).catch((err: unknown) => String(err).slice(0, 200));
    lines.push(`  :${port} envelopes_local ${rows}; table, read-only, session expired, queue, inserts queued, delay s:\n    ${replicas.split('\n').join('\n    ')}`);
  }
  return lines.join('\n');
}

/** Starts again whatever of the cluster is down, which must include `service`. */
function restart(service: string): number {
  const up = stack('up', '--cluster');
  assert.equal(up.status, 0, up.out);
  assert.match(up.out, new RegExp(`${service}: starting`));
  return Date.now();
}

const links = (loop: string): { key: string; value: Buffer }[] =>
  chain(
    loop,
    Array.from({ length: LINKS }, (_, i) => [`2026-11-01T10:${String(i).padStart(2, '0')}:00Z`, 'ModelCalled', `{"model":"m","provider":"p","usage":{"cost_usd":0.25,"in":${i},"out":1}}`] as const),
  );

test('a new owner reads back while every replica lags: no verdict changes, nothing stored twice, the replicas agree once they fetch', { skip, timeout: 900_000 }, async () => {
  const ctx = await clusterContext('cluster_lag');
  const db = ctx.config.clickhouse.database;
  const tables = ['envelopes_local', 'loop_heads_local'];
  const fetches = async (verb: 'STOP' | 'START'): Promise<void> => {
    for (const port of SERVERS) for (const t of tables) await query(port, `SYSTEM ${verb} FETCHES ${db}.${t}`);
  };
  const ingest = async (what: string, env: Record<string, string> = {}): Promise<void> => {
    const r = await runToEnd(['ingest', '--no-migrate', '--idle-exit-ms', '4000'], { ...ctx.env, ...env }, { timeoutMs: 300_000 });
    assert.equal(r.code, 0, `${what}: ${r.stderr.slice(-3000)}`);
  };
  const loops = Array.from({ length: LOOPS }, (_, i) => `lag-loop-${i}`);
  const chains = new Map(loops.map((l) => [l, links(l)]));

  await fetches('STOP');
  try {
    await produceEnvelopes(ctx, loops.flatMap((l) => chains.get(l)!.slice(0, HALF)), 4);
    await ingest('the first owner');
    // The lag is real: a Distributed insert writes a shard it is a replica of
    // locally, so the first owner's rows of shard 1 are on :18123 alone.
    const [a, b] = SHARDS[0];
    const [na, nb] = [Number(await query(a, 'SELECT count() FROM envelopes_local', db)), Number(await query(b, 'SELECT count() FROM envelopes_local', db))];
    assert.ok(na > nb, `:${b} lacks rows :${a} holds (${na}, ${nb})`);
    // The second half, and links 3..5 of every loop again, byte for byte.
    await produceEnvelopes(ctx, loops.flatMap((l) => [...chains.get(l)!.slice(2, HALF), ...chains.get(l)!.slice(HALF)]), 4);
    // The new owner is connected to :18124, the lagging replica of shard 1.
    await ingest('the new owner', { AGENTLEDGER_CLICKHOUSE_URL: `http://127.0.0.1:${b}` });
  } finally {
    await fetches('START');
  }

  // Once fetches resume, the replicas of each shard hold the same rows; read from the replica that lagged.
  await assertEveryReplica(db, LOOPS, LINKS, SHARDS[0][1]);
});

test('a replica SIGKILLed mid-ingest and started again: ingest waits for it, then every link once, and the replicas agree', { skip, timeout: 900_000 }, async () => {
  const ctx = await clusterContext('cluster_kill');
  const loops = Array.from({ length: 60 }, (_, i) => `kill-loop-${i}`);
  await produceEnvelopes(ctx, loops.flatMap((l) => links(l)), 4);
  await faultDuringIngest(ctx, loops.length * LINKS, async () => {
    // clickhouse-4 (:18126) is shard 2's second replica; ingest is connected to :18123.
    process.kill(clusterPid('clickhouse-4'), 'SIGKILL');
    const killedAt = Date.now();
    await sleep(5_000);
    const endedAt = restart('clickhouse-4');
    return { said: `clickhouse-4 down ${((endedAt - killedAt) / 1000).toFixed(1)} s`, endedAt, ended: 'its restart' };
  });
  await assertEveryReplica(ctx.config.clickhouse.database, loops.length, LINKS, SHARDS[1][1]);
});

test('ZooKeeper SIGKILLed for 30 s mid-ingest: the inserts pause (read-only tables) and resume, every link once, and the replicas agree', { skip, timeout: 900_000 }, async () => {
  const ctx = await clusterContext('cluster_zk');
  const db = ctx.config.clickhouse.database;
  const loops = Array.from({ length: 60 }, (_, i) => `zk-loop-${i}`);
  await produceEnvelopes(ctx, loops.flatMap((l) => links(l)), 4);
  await faultDuringIngest(ctx, loops.length * LINKS, async () => {
    process.kill(clusterPid('zookeeper'), 'SIGKILL');
    const killedAt = Date.now();
    await sleep(30_000);
    const stored = Number(await query(FIRST, 'SELECT count() FROM envelopes SETTINGS prefer_localhost_replica = 0', db));
    const endedAt = restart('zookeeper');
    return { said: `zookeeper down ${((endedAt - killedAt) / 1000).toFixed(1)} s (${stored} of ${loops.length * LINKS} links stored by then)`, endedAt, ended: 'its restart' };
  });
  await assertEveryReplica(db, loops.length, LINKS, SHARDS[0][1]);
});

/**
 * The broker that coordinates `groupId`: the leader of its partition of
 * __consumer_offsets (Kafka's abs(String.hashCode) mod the partition count).
 */
async function coordinatorOf(admin: Admin, groupId: string): Promise<number> {
  let hash = 0;
  for (const c of groupId) hash = (Math.imul(31, hash) + c.charCodeAt(0)) | 0;
  const meta = await admin.fetchTopicMetadata({ topics: ['__consumer_offsets'] });
  const partitions = meta.topics[0]?.partitions ?? [];
  const leader = partitions.find((p) => p.partitionId === (hash & 0x7fffffff) % partitions.length)?.leader;
  assert.ok(leader !== undefined, `__consumer_offsets has a leader for ${groupId}`);
  return leader;
}

/**
 * Produces `records` (acks=all) while a broker is down, sending them again
 * after a retriable refusal, as a producer that must not drop them does
 * (while the dead broker's leaderships move a send can outlast kafkajs's own
 * retries). A resend may store a record twice in Kafka; ingest
 * stores it once, which the test asserts. Returns the refusals it rode out.
 */
async function produceUntilSent(ctx: TestContext, records: readonly { key: string; value: Buffer }[], deadline: number): Promise<string[]> {
  const refused: string[] = [];
  for (;;) {
    try {
      await produceEnvelopes(ctx, records, 4);
      return refused;
    } catch (err) {
      const e = err as { retriable?: boolean; message?: string };
      if (e.retriable !== true || Date.now() > deadline) throw err;
      refused.push(e.message ?? String(err));
      await sleep(1_000);
    }
  }
}

/**
 * The records of `wanted` the topic does not hold, read back from its start
 * to the high watermarks by a consumer of its own group: an acknowledged
 * send of kafkajs's producer lost the dead leader's records in some runs
 * (the topic held 510 of 600), so the test checks what Kafka holds rather
 * than what the producer said.
 */
async function missingFromTopic(brokers: readonly string[], topic: string, wanted: readonly { key: string; value: Buffer }[]): Promise<{ key: string; value: Buffer }[]> {
  const kafka = new Kafka({ clientId: 'cluster-faults-check', brokers: [...brokers], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<number, bigint>();
  try {
    for (const p of await admin.fetchTopicOffsets(topic)) if (BigInt(p.high) > BigInt(p.low)) ends.set(p.partition, BigInt(p.high));
  } finally {
    await admin.disconnect();
  }
  const seen = new Set<string>();
  const consumer = kafka.consumer({ groupId: `cluster-faults-check-${Date.now()}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      if (ends.size === 0) return resolve();
      // Bounded: a partition that cannot be read to its end fails the check instead of hanging the test.
      setTimeout(() => reject(new Error(`the topic was not read back to its end within 60 s (partitions left: ${[...ends.keys()].join(', ')})`)), 60_000).unref();
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            if (message.value) seen.add(message.value.toString('base64'));
            const end = ends.get(partition);
            if (end !== undefined && BigInt(message.offset) + 1n >= end) ends.delete(partition);
            if (ends.size === 0) resolve();
            return Promise.resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return wanted.filter((r) => !seen.has(r.value.toString('base64')));
}

/** Each partition's leader and in-sync replicas, as the brokers still up tell them: what a failure says. */
async function partitionsNow(brokers: readonly string[], topic: string): Promise<string> {
  const admin = new Kafka({ clientId: 'cluster-faults', brokers: [...brokers], logLevel: logLevel.NOTHING, retry: { retries: 2 } }).admin();
  try {
    await admin.connect();
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    return JSON.stringify((meta.topics[0]?.partitions ?? []).map((p) => ({ partition: p.partitionId, leader: p.leader, isr: p.isr })));
  } catch (err) {
    return `unknown (${(err as Error).message})`;
  } finally {
    await admin.disconnect();
  }
}

/**
 * A broker SIGKILLed once ingest has stored its first rows, the second half
 * of the traffic produced while it is down (acks=all, two in-sync replicas
 * left), all of it stored before the broker is started again. `pick` chooses
 * the broker from the leaders of the topic's partitions and the group's
 * coordinator.
 */
async function brokerKilled(name: string, pick: (leaders: readonly number[], coordinator: number) => number, within: number): Promise<void> {
  const brokers = BROKERS.split(',');
  const ctx = await clusterContext(name, { AGENTLEDGER_KAFKA_BROKERS: BROKERS });
  const db = ctx.config.clickhouse.database;
  const loops = Array.from({ length: 60 }, (_, i) => `broker-loop-${i}`);
  const chains = loops.map((l) => links(l));
  await produceEnvelopes(ctx, chains.flatMap((c) => c.slice(0, HALF)), 4);
  const admin = new Kafka({ clientId: 'cluster-faults', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  let victim = 0;
  try {
    // Kafka moves a leadership only to an in-sync replica (no unclean
    // election): on a fresh cluster a follower may still be catching up, and
    // a partition whose only in-sync replica is killed stays offline until it
    // returns. So the kill waits for every replica of the topic's partitions
    // and of the group's offsets to be in sync.
    // On a fresh cluster no group has asked for a coordinator yet and
    // __consumer_offsets does not exist (its metadata is refused with
    // UNKNOWN_TOPIC_OR_PARTITION, which failed CI): asking for this group's
    // coordinator makes Kafka create it.
    await admin.describeGroups([ctx.config.kafka.groupId]);
    const topics = [ctx.config.kafka.topics.envelopes, '__consumer_offsets'];
    const inSync = async (): Promise<true | undefined> => {
      try {
        const all = (await admin.fetchTopicMetadata({ topics })).topics.flatMap((t) => t.partitions);
        return all.every((p) => p.isr.length === 3) ? true : undefined;
      } catch (err) {
        // A topic Kafka is still creating: not in sync yet.
        if ((err as { type?: string }).type === 'UNKNOWN_TOPIC_OR_PARTITION') return undefined;
        throw err;
      }
    };
    await until('every replica in sync before the kill', 120_000, inSync);
    const meta = await admin.fetchTopicMetadata({ topics: [ctx.config.kafka.topics.envelopes] });
    const partitions = meta.topics[0]?.partitions ?? [];
    assert.ok(partitions.length === 4 && partitions.every((p) => p.replicas.length === 3), 'the topic ingest made has three replicas per partition');
    victim = pick(
      partitions.map((p) => p.leader),
      await coordinatorOf(admin, ctx.config.kafka.groupId),
    );
  } finally {
    await admin.disconnect();
  }
  await faultDuringIngest(ctx, loops.length * LINKS, async () => {
    process.kill(clusterPid(`kafka-${victim}`), 'SIGKILL');
    const killedAt = Date.now();
    const second = chains.flatMap((c) => c.slice(HALF));
    const refused = await produceUntilSent(ctx, second, killedAt + within);
    // What the producer said is what the topic holds: kafkajs alone lost a
    // dead leader's records here (src/kafka/checked-send.ts).
    const missing = await missingFromTopic(brokers, ctx.config.kafka.topics.envelopes, second);
    assert.equal(missing.length, 0, `${missing.length} acknowledged record(s) missing from the topic`);
    try {
      await until('every link stored while the broker is down', within, async () =>
        Number(await query(FIRST, 'SELECT count() FROM envelopes SETTINGS prefer_localhost_replica = 0', db)) >= loops.length * LINKS ? true : undefined,
      ).catch(async (err: unknown) => {
        throw new Error(`${(err as Error).message}; the topic's partitions now: ${await partitionsNow(brokers, ctx.config.kafka.topics.envelopes)}`, { cause: err });
      });
    } finally {
      if (stack('status', '--cluster').status !== 0) restart(`kafka-${victim}`);
    }
    const storedAt = Date.now();
    return {
      said: `kafka-${victim} SIGKILLed; every link stored ${((storedAt - killedAt) / 1000).toFixed(1)} s after the kill, while it was down${refused.length === 0 ? '' : ` (the producer sent again after ${refused.length} refusal(s): ${[...new Set(refused)].join('; ')})`}`,
      endedAt: storedAt,
      ended: 'that',
    };
  });
  await assertEveryReplica(db, loops.length, LINKS, SHARDS[1][0]);
}

test(
  'a broker leading a partition (not the group coordinator) SIGKILLed mid-ingest, records produced while it is down: every link stored before it returns, once, and the replicas agree',
  {
    skip,
    timeout: 900_000,
    // It failed in some runs (3 of 10 on 2026-12-04, 4 of 18 on
    // 2026-12-05) for two causes, both found with it. The records produced
    // after the kill were not all on the topic (once 510 of 600): kafkajs's
    // producer, on a retry, skips a broker that answered already, even when
    // the dead leader's partitions moved to it; the checked send
    // (src/kafka/checked-send.ts) now sends them again, and the test
    // asserts the topic holds them all. And ingest froze: the coordinator
    // watch stopped the consumer while kafkajs rebuilt its fetchers, which
    // then spun on the microtask queue for ever (fixed in
    // src/kafka/runner-stop.ts, and no stop of ours during kafkajs's own
    // join); the frozen-loop guard kills a process that freezes anyway.
  },
  async () => {
    await brokerKilled('cluster_leader', (leaders, coordinator) => leaders.find((l) => l !== coordinator) ?? [1, 2, 3].find((b) => b !== coordinator)!, 240_000);
  },
);

// kafkajs 2.2.4 keeps heartbeating and committing to the coordinator it
// cached (tulios/kafkajs#1779): ingest goes on because a batch whose
// heartbeats have not reached the coordinator, or whose commits it left
// unanswered, for a session timeout gives up as CoordinatorLost
// (src/ingest/retry.ts), and kafkajs joins again, which finds the new
// coordinator.
test('the group coordinator broker SIGKILLed mid-ingest: ingest joins the group again at the new coordinator, every link stored before the broker returns, once, and the replicas agree', { skip, timeout: 900_000 }, async () => {
  await brokerKilled('cluster_coordinator', (_leaders, coordinator) => coordinator, 120_000);
});

test('three ingest processes in one group on the cluster, one SIGKILLed four times: every planted verdict once, nothing else, as on one server', { skip, timeout: 900_000 }, async (t) => {
  const ctx = await clusterContext('cluster_group', { AGENTLEDGER_KAFKA_BROKERS: BROKERS, AGENTLEDGER_BATCH_MAX_ROWS: '300', AGENTLEDGER_BATCH_MAX_WAIT_MS: '100' });
  const db = ctx.config.clickhouse.database;
  const loops = 300;
  const traffic = generateTraffic({ loops, envelopesPerLoop: 20, seed: 31, payloadBytes: 200, violations: defaultViolationPlan(loops) });
  await produceEnvelopes(ctx, [...traffic.records].map((r) => ({ key: r.key, value: r.value })), 6);
  const seed = Date.now() % 100_000;
  const random = prng(seed);
  // Their idle exit is guarded by the caught-up check (every partition committed to its end): a victim's records are not left behind.
  const steady = [0, 1].map(() => runCli(['ingest', '--no-migrate', '--idle-exit-ms', '8000'], ctx.env));
  for (let kill = 0; kill < 4; kill++) {
    const victim = runCli(['ingest', '--no-migrate'], ctx.env);
    await sleep(1500 + Math.floor(random() * 3000));
    victim.child.kill('SIGKILL');
    await victim.exited;
  }
  for (const run of steady) assert.equal(await run.exited, 0, run.stderr().slice(-3000));
  const last = await runToEnd(['ingest', '--no-migrate', '--idle-exit-ms', '4000'], ctx.env, { timeoutMs: 300_000 });
  assert.equal(last.code, 0, last.stderr.slice(-3000));
  t.diagnostic(`seed ${seed}`);

  await assertTrafficStored(db, traffic.expected);
});
