/**
 * Exactly once against adversaries (issue 8): a redelivery and a second
 * version that arrive before the flush, a fork redelivered, a zombie member
 * that wakes up after its session expired with a full buffer while
 * redeliveries are in flight, and one flush per part. After each scenario
 * every reader agrees exactly with the one-by-one reference over the same
 * records (`agentledger verify`): `envelopes FINAL`, a plain count() after
 * OPTIMIZE … FINAL, the `chain_violations` view and `report`.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { AssignerProtocol, Partitioners } from 'kafkajs';
import { NO_SLOTS } from '../../src/rows/envelope-facts.js';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { defaultViolationPlan, generateTraffic } from '../../src/demo/traffic/index.js';
import { decodeEnvelope, DEFAULT_DECODE_OPTIONS } from '../../src/decode/envelope.js';
import { parseRfc3339, toClickHouseDateTime } from '../../src/decode/time.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { EnvelopeStore } from '../../src/store/envelope-store.js';
import { migrate } from '../../src/migrate/migrate.js';
import { createKafka, ensureTopics, TOPIC_CONFIG } from '../../src/kafka/client.js';
import { MemoryChains } from '../../src/verify/memory-chains.js';
import { command, query } from '../support/clickhouse.js';
import { FAULT_THREADS, testContext, type TestContext } from '../support/context.js';
import { runCli, sleep, until, type Running } from '../support/processes.js';
import { closedPort } from '../support/cli-run.js';

const log = createLogger('warn');
const contexts: TestContext[] = [];
after(async () => {
  for (const c of contexts) await c.cleanup();
});

interface Record_ {
  readonly key: string;
  readonly value: Buffer;
}

async function context(name: string, overrides: Record<string, string>): Promise<TestContext> {
  const ctx = await testContext(name, { ...FAULT_THREADS, ...overrides });
  contexts.push(ctx);
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  await ensureTopics(createKafka(ctx.config.kafka, log), [{ topic: ctx.config.kafka.topics.envelopes, numPartitions: 4, configEntries: TOPIC_CONFIG }]);
  return ctx;
}

/** Everything produced, in order: the reference judges the same sequence (one loop stays in one partition). */
function producer(ctx: TestContext) {
  const sent: Record_[] = [];
  const kafka = createKafka(ctx.config.kafka, log);
  return {
    sent,
    async send(records: readonly Record_[]): Promise<void> {
      const p = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
      await p.connect();
      for (let i = 0; i < records.length; i += 2000) {
        await p.send({ topic: ctx.config.kafka.topics.envelopes, acks: -1, messages: records.slice(i, i + 2000).map((r) => ({ key: r.key, value: r.value })) });
      }
      await p.disconnect();
      sent.push(...records);
    },
  };
}

async function cliJson<T>(ctx: TestContext, ...args: string[]): Promise<T> {
  const run = runCli(args, ctx.env);
  let out = '';
  run.child.stdout?.removeAllListeners('data');
  run.child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const code = await run.exited;
  assert.ok(code === 0 || code === 1, `${args.join(' ')} exited ${code}: ${run.stderr()}`);
  return JSON.parse(out) as T;
}

type Key = string;
const key = (loopId: string, seq: number | string, verdict: string): Key => `${loopId}#${Number(seq)}#${verdict}`;

/**
 * The agreement every scenario ends with: the reference (`agentledger verify`
 * over the records in produce order) against each way of reading the table.
 */
async function assertAgreement(ctx: TestContext, sent: readonly Record_[]): Promise<void> {
  const file = join(tmpdir(), `${ctx.id}.jsonl`);
  await writeFile(file, sent.map((r) => r.value.toString('utf8')).join('\n') + '\n');
  const reference = await cliJson<{ envelopes: number; ok: number; duplicates: number; violations: { loopId: string; seq: number; verdict: string }[] }>(
    ctx,
    'verify',
    '--json',
    file,
  );
  const wantRows = reference.envelopes - reference.duplicates;
  const wantViolations = reference.violations.map((v) => key(v.loopId, v.seq, v.verdict)).sort();

  const final = await query<{ loop_id: string; seq: string; verdict: string }>(ctx, 'SELECT loop_id, seq, verdict FROM envelopes FINAL');
  assert.equal(final.length, wantRows, 'envelopes FINAL: one row per record that is not a redelivery');
  assert.equal(final.filter((r) => r.verdict === 'ok').length, reference.ok, 'envelopes FINAL: ok rows');
  assert.deepEqual(final.filter((r) => r.verdict !== 'ok').map((r) => key(r.loop_id, r.seq, r.verdict)).sort(), wantViolations, 'envelopes FINAL: violations');

  const view = await query<{ loop_id: string; seq: string; verdict: string }>(ctx, 'SELECT loop_id, seq, verdict FROM chain_violations');
  assert.deepEqual(view.map((r) => key(r.loop_id, r.seq, r.verdict)).sort(), wantViolations, 'chain_violations');

  const report = await cliJson<{ verdicts: { verdict: string; envelopes: number }[] }>(ctx, 'report', '--json', '--limit', '0');
  const reported = new Map(report.verdicts.map((v) => [v.verdict, v.envelopes]));
  assert.equal(reported.get('ok') ?? 0, reference.ok, 'report: ok');
  assert.equal([...reported.values()].reduce((a, b) => a + b, 0), wantRows, 'report: all verdicts');

  await command(ctx, 'OPTIMIZE TABLE envelopes FINAL');
  const [plain] = await query<{ n: string }>(ctx, 'SELECT count() AS n FROM envelopes');
  assert.equal(Number(plain?.n), wantRows, 'a plain count() after OPTIMIZE … FINAL');
}

/** One `ingest` run until it idles for `ms`; returns what it wrote to stderr. */
async function idleExit(ctx: TestContext, ms = 4000): Promise<string> {
  const run = runCli(['ingest', '--no-migrate', '--idle-exit-ms', String(ms)], ctx.env);
  assert.equal(await run.exited, 0, run.stderr());
  return run.stderr();
}

async function waitFor(what: string, check: () => Promise<boolean>, run?: Running, seconds = 120): Promise<void> {
  let ended = false;
  void run?.exited.then(() => (ended = true));
  for (let i = 0; i < seconds * 10; i++) {
    if (await check()) return;
    if (ended) break;
    await sleep(100);
  }
  throw new Error(`${ended ? 'ingest ended' : 'timed out'} waiting for ${what}: ${run?.stderr().slice(-3000) ?? ''}`);
}

/**
 * What an ingest has judged, from its `/metrics`: records by verdict (before
 * any flush: the counter moves when a batch is judged) and inserts done.
 */
async function judged(port: number): Promise<{ all: number; inserts: number; lags: number[]; byVerdict: Record<string, number> }> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
  const byVerdict: Record<string, number> = {};
  for (const m of text.matchAll(/^agentledger_records_total\{stream="envelopes",verdict="(\w+)"\} (\d+)$/gm)) byVerdict[m[1]!] = Number(m[2]);
  const inserts = Number(/^agentledger_insert_batch_rows_count\{stream="envelopes"\} (\d+)$/m.exec(text)?.[1] ?? 0);
  const lags = [...text.matchAll(/^agentledger_consumer_lag\{[^}]*\} (\d+)$/gm)].map((m) => Number(m[1]));
  return { all: Object.values(byVerdict).reduce((a, b) => a + b, 0), inserts, lags, byVerdict };
}

/** The consumer group now: its state, and each member's partitions of the envelopes topic. */
async function group(ctx: TestContext): Promise<{ state: string; members: { id: string; partitions: number[] }[] }> {
  const admin = createKafka(ctx.config.kafka, log).admin();
  await admin.connect();
  try {
    const { groups } = await admin.describeGroups([ctx.config.kafka.groupId]);
    const g = groups[0]!;
    return {
      state: g.state,
      members: g.members.map((m) => ({
        id: m.memberId,
        partitions: m.memberAssignment.length === 0 ? [] : [...(AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment[ctx.config.kafka.topics.envelopes] ?? [])].sort((x, y) => x - y),
      })),
    };
  } finally {
    await admin.disconnect();
  }
}

/** Per partition of the envelopes topic: the group's committed offset and the end of the partition. */
async function offsets(ctx: TestContext): Promise<{ partition: number; committed: string; end: string }[]> {
  const admin = createKafka(ctx.config.kafka, log).admin();
  await admin.connect();
  try {
    const topic = ctx.config.kafka.topics.envelopes;
    const ends = await admin.fetchTopicOffsets(topic);
    const [committed] = await admin.fetchOffsets({ groupId: ctx.config.kafka.groupId, topics: [topic] });
    return ends
      .map((e) => ({ partition: e.partition, end: e.high, committed: committed?.partitions.find((c) => c.partition === e.partition)?.offset ?? '-1' }))
      .sort((x, y) => x.partition - y.partition);
  } finally {
    await admin.disconnect();
  }
}

const rowCount = async (ctx: TestContext): Promise<number> => Number((await query<{ n: string }>(ctx, 'SELECT count() AS n FROM envelopes'))[0]?.n ?? 0);

/** Another version of an envelope: the same loop and seq carrying another hash (a fork). */
function secondVersion(r: Record_): Record_ {
  const v = JSON.parse(r.value.toString('utf8')) as Record<string, unknown> & { Hash: number[] };
  v.Hash = v.Hash.map((b, i) => (i === 0 ? (b + 1) % 256 : b));
  return { key: r.key, value: Buffer.from(JSON.stringify(v)) };
}

test('a redelivery and a second version that arrive in a later batch before the flush are judged as if flushed', { timeout: 180_000 }, async () => {
  const port = await closedPort();
  const ctx = await context('before_flush', { AGENTLEDGER_BATCH_MAX_ROWS: '100000', AGENTLEDGER_BATCH_MAX_WAIT_MS: '8000', AGENTLEDGER_METRICS_PORT: String(port) });
  const traffic = generateTraffic({ loops: 4, envelopesPerLoop: 10, seed: 801, payloadBytes: 200 });
  const records = [...traffic.records];
  const p = producer(ctx);
  const run = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], ctx.env);
  await p.send(records);
  // Fetched and judged (the flush waits 8 s), not yet stored:
  await until('the first records judged', 30_000, async () => ((await judged(port)).all >= records.length ? true : undefined), [run]);
  const first = await judged(port);
  assert.deepEqual({ ...first, lags: [] }, { all: records.length, inserts: 0, lags: [], byVerdict: { ok: records.length } }, 'the first records judged, nothing flushed');
  assert.equal(await rowCount(ctx), 0, 'the first records are still buffered');
  const loop = records.filter((r) => r.key === records[0]!.key);
  const fork = secondVersion(loop[4]!);
  // seq 3 again, a second version of seq 5, and that second version again.
  await p.send([loop[2]!, fork, fork]);
  // The later batch is judged while the first is still buffered: the case this test is about happened.
  await until('the later records judged', 30_000, async () => ((await judged(port)).all >= records.length + 3 ? true : undefined), [run]);
  assert.deepEqual({ ...(await judged(port)), lags: [] }, { all: records.length + 3, inserts: 0, lags: [], byVerdict: { ok: records.length, duplicate: 2, fork: 1 } }, 'the later batch judged before any flush');
  assert.equal(await rowCount(ctx), 0, 'still nothing stored when the later batch was judged');
  assert.equal(await run.exited, 0, run.stderr());
  const stored = await query<{ seq: string; verdict: string }>(ctx, `SELECT seq, verdict FROM envelopes FINAL WHERE loop_id = '${loop[0]!.key}' ORDER BY seq, verdict`);
  assert.deepEqual(
    stored.map((r) => `${r.seq} ${r.verdict}`),
    ['1 ok', '2 ok', '3 ok', '4 ok', '5 fork', '5 ok', '6 ok', '7 ok', '8 ok', '9 ok', '10 ok'],
    'seq 3 again is a duplicate (not a regression); the second version of seq 5 is one fork',
  );
  await assertAgreement(ctx, p.sent);
});

test('a zombie member woken after its session expired, with a full buffer and redeliveries in flight, changes nothing', { timeout: 300_000 }, async () => {
  const ctx = await context('zombie', {
    AGENTLEDGER_BATCH_MAX_ROWS: '100000',
    AGENTLEDGER_BATCH_MAX_WAIT_MS: '5000',
    AGENTLEDGER_KAFKA_SESSION_TIMEOUT_MS: '6000',
    // Its joins are info lines: the rejoin that drops a zombie's buffer is seen.
    AGENTLEDGER_LOG_LEVEL: 'info',
  });
  const traffic = generateTraffic({ loops: 400, envelopesPerLoop: 20, seed: 802, payloadBytes: 300, violations: defaultViolationPlan(400) });
  const records = [...traffic.records];
  const p = producer(ctx);
  const half = Math.floor(records.length / 2);
  await p.send(records.slice(0, half));
  const aPort = await closedPort();
  const a: Running = runCli(['ingest', '--no-migrate'], { ...ctx.env, AGENTLEDGER_METRICS_PORT: String(aPort) });
  const b: Running = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '12000'], ctx.env);
  // Both members own partitions and have flushed once: the group is settled.
  await waitFor('a first flush', async () => (await rowCount(ctx)) > 0, b);
  const settled = await until('both members assigned partitions, the group stable', 60_000, async () => {
    const g = await group(ctx);
    return g.state === 'Stable' && g.members.length === 2 && g.members.every((m) => m.partitions.length > 0) ? g : undefined;
  }, [a, b]);
  assert.equal(settled.members.reduce((n, m) => n + m.partitions.length, 0), 4, 'the 4 partitions shared by the two');
  await until('the first half stored and committed', 60_000, async () => ((await offsets(ctx)).every((x) => x.committed === x.end) ? true : undefined), [a, b]);
  // A fills its buffer (5 s between flushes) and freezes with it: idle, every
  // record of its partitions judged (lag 0), none of the second half flushed.
  const before = await judged(aPort);
  await p.send(records.slice(half));
  const full = await until('A judged its share of the second half and idles with it buffered', 30_000, async () => {
    const now = await judged(aPort);
    return now.all > before.all && now.lags.length > 0 && now.lags.every((l) => l === 0) ? now : undefined;
  }, [a]);
  a.child.kill('SIGSTOP');
  assert.equal(full.inserts, before.inserts, 'A froze holding its second-half records unflushed');
  // While A is frozen past its session timeout, B takes A's partitions; then
  // redeliveries arrive: copies of records A holds unflushed, which B must judge.
  // Sent only once B owns everything: sent earlier, they could answer the
  // fetch A had open when it froze, and A would wake to that batch (its
  // handler, then a heartbeat, finds the membership lost and the rejoin drops
  // the buffer) instead of to its timer flush, the moment the fence is for.
  const alone = await until('B alone in the group, owning every partition', 120_000, async () => {
    const g = await group(ctx);
    return g.state === 'Stable' && g.members.length === 1 ? g : undefined;
  }, [b]);
  assert.deepEqual(alone.members[0]!.partitions, [0, 1, 2, 3], 'B owns every partition');
  await p.send(records.slice(half, half + 600));
  // B has stored and committed every partition to its end: it took A's over (A, frozen, cannot commit).
  const end = await until('every partition committed to its end by B', 120_000, async () => {
    const o = await offsets(ctx);
    return o.every((x) => x.committed === x.end) ? o : undefined;
  }, [b]);
  assert.equal(end.length, 4);
  const taken = await group(ctx);
  assert.equal(taken.members.length, 1, `A left the group while frozen: ${JSON.stringify(taken)}`);
  assert.deepEqual(taken.members[0]!.partitions, [0, 1, 2, 3], 'B owns every partition');
  a.child.kill('SIGCONT');
  assert.equal(await b.exited, 0, b.stderr());
  // Nothing was left to insert once B had committed every partition: an
  // insert by A after waking could only be its stale buffer.
  const woke = await judged(aPort);
  a.child.kill('SIGTERM');
  await a.exited;
  assert.equal(woke.inserts, before.inserts, `the zombie inserted nothing after waking: ${a.stderr()}`);
  // On waking the zombie either flushes its full buffer from the timer, and
  // the fence refuses it, or meets the lost membership first (a heartbeat of
  // a batch it was frozen in, kafkajs's own heartbeat) and the rejoin drops
  // the buffer: which one depends on the instant it was frozen at. The fence
  // alone is tested without services in test/unit/ingest/machine.test.ts.
  const fenced = /no longer owns its partitions; its buffer is dropped/.test(a.stderr());
  const rejoined = (a.stderr().match(/joined consumer group/g) ?? []).length >= 2;
  assert.ok(fenced || rejoined, `the zombie's buffer was dropped by the fence or by its rejoin: ${a.stderr()}`);
  console.log(`zombie: buffer dropped by ${fenced ? 'the fence' : 'the rejoin'}`);
  await idleExit(ctx);
  await assertAgreement(ctx, p.sent);
});

test('one flush is one part: one ingested_at per insert, however many Kafka batches it holds', { timeout: 180_000 }, async () => {
  const port = await closedPort();
  const ctx = await context('one_part', { AGENTLEDGER_BATCH_MAX_ROWS: '2000', AGENTLEDGER_BATCH_MAX_WAIT_MS: '1500', AGENTLEDGER_METRICS_PORT: String(port) });
  // Parts stay as the inserts made them: each part is exactly one insert.
  await command(ctx, 'SYSTEM STOP MERGES envelopes');
  const traffic = generateTraffic({ loops: 200, envelopesPerLoop: 30, seed: 803, payloadBytes: 300 });
  const p = producer(ctx);
  await p.send([...traffic.records]);
  const run = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], ctx.env);
  await waitFor('every record stored', async () => (await rowCount(ctx)) >= traffic.expected.envelopes, run);
  // Every row is stored; ingest idles 3 s before it exits. The last insert's
  // rows are visible a moment before its answer is counted, so the count is
  // read until it stops moving.
  const insertCount = async (): Promise<number> => {
    const metrics = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
    return Number(/agentledger_insert_batch_rows_count\{stream="envelopes"\} (\d+)/.exec(metrics)?.[1]);
  };
  let inserts = await insertCount();
  for (let i = 0; i < 10; i++) {
    await sleep(100);
    inserts = Math.max(inserts, await insertCount());
  }
  assert.equal(await run.exited, 0, run.stderr());
  const parts = await query<{ part: string; stamps: string; rows: string }>(ctx, 'SELECT _part AS part, uniqExact(ingested_at) AS stamps, count() AS rows FROM envelopes GROUP BY _part');
  assert.ok(inserts > 1, `several inserts (${inserts})`);
  assert.equal(parts.length, inserts, 'one part per insert');
  for (const part of parts) assert.equal(Number(part.stamps), 1, `part ${part.part} has one ingested_at`);
  await command(ctx, 'SYSTEM START MERGES envelopes');
  await assertAgreement(ctx, p.sent);
});

test('chain_violations is a plain view of the envelopes (deduplicated as FINAL would, 0019): no materialized view derives anything from a raw insert', { timeout: 60_000 }, async () => {
  const ctx = await context('views', {});
  const tables = await query<{ name: string; engine: string }>(ctx, 'SELECT name, engine FROM system.tables WHERE database = currentDatabase() ORDER BY name');
  assert.equal(tables.find((t) => t.name === 'chain_violations')?.engine, 'View');
  assert.deepEqual(tables.filter((t) => t.engine === 'MaterializedView'), []);
});

test('loop_heads emptied (TRUNCATE, a restore without it) changes no verdict: the next owner writes every partition\'s heads again before reading any', { timeout: 180_000 }, async () => {
  const ctx = await context('heads_lag', { AGENTLEDGER_BATCH_MAX_ROWS: '500', AGENTLEDGER_BATCH_MAX_WAIT_MS: '200' });
  const traffic = generateTraffic({ loops: 60, envelopesPerLoop: 30, seed: 804, payloadBytes: 200, violations: { fork: 2, gap: 2, mismatch: 2 } });
  const records = [...traffic.records];
  const p = producer(ctx);
  await p.send(records.slice(0, Math.floor(records.length / 2)));
  await idleExit(ctx, 2000);
  const [heads] = await query<{ n: string }>(ctx, 'SELECT count() AS n FROM loop_heads');
  assert.equal(Number(heads?.n), 60, 'one head per loop written before the commit');
  // Every derived row lost, the commits kept: heads are read from loop_heads
  // alone, so without rebuilding it every loop would look new (false gaps).
  await command(ctx, 'TRUNCATE TABLE loop_heads');
  await p.send(records.slice(Math.floor(records.length / 2)));
  const stderr = await idleExit(ctx, 2000);
  assert.equal((stderr.match(/derived rows of this partition are all gone/g) ?? []).length, 4, `each of the 4 partitions rebuilt: ${stderr}`);
  await assertAgreement(ctx, p.sent);
});

test('a member that died between its envelopes insert and its loop_heads insert: the next owner writes those heads again before reading any', { timeout: 180_000 }, async () => {
  const ctx = await context('heads_rederive', { AGENTLEDGER_BATCH_MAX_ROWS: '500', AGENTLEDGER_BATCH_MAX_WAIT_MS: '200' });
  const traffic = generateTraffic({ loops: 60, envelopesPerLoop: 30, seed: 806, payloadBytes: 200, violations: { fork: 2, gap: 2, mismatch: 2 } });
  const records = [...traffic.records];
  const p = producer(ctx);
  await p.send(records.slice(0, Math.floor(records.length / 2)));
  await idleExit(ctx, 2000);
  // The state such a death leaves: rows stored past the last commit, their
  // loop_heads rows missing. (Here every flush's; the commit back to offset 0,
  // with no date: since = 0.)
  await command(ctx, 'TRUNCATE TABLE loop_heads');
  const admin = createKafka(ctx.config.kafka, log).admin();
  await admin.connect();
  try {
    await admin.setOffsets({ groupId: ctx.config.kafka.groupId, topic: ctx.config.kafka.topics.envelopes, partitions: [0, 1, 2, 3].map((partition) => ({ partition, offset: '0' })) });
  } finally {
    await admin.disconnect();
  }
  // The next owner takes every partition over (new loops on each make it read them).
  const others = [...generateTraffic({ loops: 40, envelopesPerLoop: 3, seed: 807, payloadBytes: 200 }).records];
  await p.send(others);
  await idleExit(ctx, 2000);
  // Before any later commit could move `since` past those rows: every loop's
  // head in loop_heads is its highest head-moving row in envelopes again.
  const [heads] = await query<{ loops: string; wrong: string }>(
    ctx,
    `SELECT toString(count()) AS loops, toString(countIf(h != s)) AS wrong
     FROM (SELECT loop_id, max(seq) AS s FROM envelopes WHERE verdict IN ('ok', 'mismatch', 'gap', 'time_regression') GROUP BY loop_id)
     ANY LEFT JOIN (SELECT loop_id, max(seq) AS h FROM loop_heads GROUP BY loop_id) USING loop_id`,
  );
  assert.deepEqual(heads, { loops: '100', wrong: '0' }, 'loop_heads holds every loop at its stored head');
  await p.send(records.slice(Math.floor(records.length / 2)));
  await idleExit(ctx, 2000);
  await assertAgreement(ctx, p.sent);
});

test('a time outside DateTime range is stored clamped, as written, on ClickHouse 18.16 too', { timeout: 60_000 }, async () => {
  const ctx = await context('clamp', {});
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    const row = { loop_id: 'l', seq: 1, time_text: '9999-12-31T23:59:59Z', kind: 'LoopStarted', kind_class: 'LoopStarted', hash: '', computed_hash: '', payload: '', verdict: 'ok', detail: '', evidence: '' };
    const kafka = { kafka_topic: 't', kafka_partition: 0, kafka_offset: '0', ingested_at: '2026-11-30 12:00:00' };
    const time = toClickHouseDateTime(parseRfc3339('9999-12-31T23:59:59Z')!);
    await new EnvelopeStore(ch).insert([{ ...row, ...NO_SLOTS, ...kafka, time }]);
  } finally {
    await ch.close();
  }
  assert.deepEqual(await query<{ t: string }>(ctx, 'SELECT toString(time) AS t FROM envelopes'), [{ t: '2105-12-31 23:59:59' }]);
});

test('an insert that fails half-way (its rows landed, then a view on it threw) is settled, not stored twice; chain_violations stays exact', { timeout: 180_000 }, async () => {
  const port = await closedPort();
  const ctx = await context('half_way', { AGENTLEDGER_BATCH_MAX_ROWS: '400', AGENTLEDGER_BATCH_MAX_WAIT_MS: '200', AGENTLEDGER_METRICS_PORT: String(port) });
  // The adversary: a materialized view that throws after the envelopes part is
  // written, as the old chain_violations view's target did ("Too many parts").
  await command(ctx, 'CREATE TABLE hostile_sink (n UInt8) ENGINE = Log');
  await command(ctx, 'CREATE MATERIALIZED VIEW hostile TO hostile_sink AS SELECT throwIf(seq >= 0) AS n FROM envelopes');
  const traffic = generateTraffic({ loops: 100, envelopesPerLoop: 20, seed: 805, payloadBytes: 200, violations: { fork: 2, gap: 2, mismatch: 2 } });
  const p = producer(ctx);
  await p.send([...traffic.records]);
  const run = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], ctx.env);
  // Rows land while every insert reports an error; then the view goes away.
  // Rows are visible before the failed insert is settled and found landed, so
  // the counter is awaited, not read once.
  await waitFor('rows stored by failing inserts', async () => (await rowCount(ctx)) > 0, run);
  await waitFor(
    'an insert found landed after its error',
    async () => /agentledger_insert_failures_total [1-9]/.test(await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '')),
    run,
  );
  await command(ctx, 'DROP TABLE hostile');
  assert.equal(await run.exited, 0, run.stderr());
  assert.match(run.stderr(), /ClickHouse answered an insert with an error, but its rows are stored/, 'inserts failed after their rows landed');
  // Not one row twice, even before any merge: each failed insert was found landed, not repeated.
  const [counts] = await query<{ rows: string; keys: string }>(ctx, 'SELECT count() AS rows, uniqExact(kafka_partition, kafka_offset) AS keys FROM envelopes');
  assert.equal(Number(counts?.rows), Number(counts?.keys), 'no record stored twice');
  await assertAgreement(ctx, p.sent);
});

test('a head cache of 50 over 1,500 loops: evicted heads read back from loop_heads, their redeliveries and second versions judged as the reference judges them', { timeout: 300_000 }, async () => {
  const port = await closedPort();
  const ctx = await context('small_cache', {
    AGENTLEDGER_HEAD_CACHE_ENTRIES: '50',
    AGENTLEDGER_BATCH_MAX_ROWS: '1000',
    AGENTLEDGER_BATCH_MAX_WAIT_MS: '300',
    AGENTLEDGER_METRICS_PORT: String(port),
  });
  const traffic = generateTraffic({ loops: 1500, envelopesPerLoop: 8, seed: 811, payloadBytes: 200, violations: defaultViolationPlan(1500) });
  const records = [...traffic.records];
  // Last: long after their loops left the cache, redeliveries of early
  // envelopes, and a second version of the head of early loops (a fork).
  let x = 811;
  const rnd = (): number => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const later = Array.from({ length: 300 }, () => records[Math.floor(rnd() * (records.length / 2))]!);
  const lastOf = new Map<string, (typeof records)[number]>();
  for (const r of records.slice(0, records.length / 2)) lastOf.set(r.key, r);
  for (const r of [...lastOf.values()].slice(0, 40)) {
    later.push({ key: r.key, value: Buffer.from(r.value.toString('utf8').replace(/"Time":"[^"]*"/, '"Time":"2027-01-01T00:00:00Z"')) });
  }
  // Produced in rounds while one ingest runs, each stored before the next
  // is sent: a Kafka batch would otherwise hold a whole partition, and its
  // heads be read back once.
  const rounds = [...Array.from({ length: 6 }, (_, i) => records.slice((i * records.length) / 6, ((i + 1) * records.length) / 6)), later];
  const chains = new MemoryChains('binary');
  let stored = 0;
  const p = producer(ctx);
  const run = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '4000'], ctx.env);
  let metrics = '';
  for (const round of rounds) {
    await p.send(round);
    for (const r of round) {
      const d = decodeEnvelope(r.value, DEFAULT_DECODE_OPTIONS);
      if (!d.ok || chains.verify(d.value).verdict !== 'duplicate') stored++;
    }
    await waitFor(`${stored} rows stored`, async () => (await rowCount(ctx)) >= stored, run);
  }
  const exited = run.exited.then((code) => code);
  for (let done = false; !done; ) {
    metrics = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => metrics);
    done = await Promise.race([exited.then(() => true), sleep(500).then(() => false)]);
  }
  assert.equal(await exited, 0, run.stderr());
  await assertAgreement(ctx, p.sent);
  const metric = (name: string): number => Number(new RegExp(`^${name}\\{cache="loop_heads"\\} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  // Not vacuous: the cache was full and evicted, and each loop of the last round, long evicted, was read back again.
  assert.ok(metric('agentledger_cache_evictions_total') > 1500, metrics);
  assert.ok(metric('agentledger_cache_misses_total') >= 1500 + new Set(later.map((r) => r.key)).size, metrics);
  assert.ok(metric('agentledger_cache_entries') <= 50, metrics);
  const forks = await query<{ n: string }>(ctx, "SELECT count() AS n FROM envelopes FINAL WHERE verdict = 'fork' AND time_text = '2027-01-01T00:00:00Z'");
  assert.equal(Number(forks[0]?.n), 40, 'each second version of an evicted head is a fork');
});
