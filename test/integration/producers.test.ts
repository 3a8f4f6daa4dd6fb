/**
 * Producers that are not kafkajs (issue 20): a Go producer on franz-go (with
 * its defaults, which compress with snappy, and with each codec), the Kafka
 * Java client with each compression.type, and a Java transactional producer
 * that aborts transactions. Each sends generated loop traffic whose verdicts
 * and spend the generator knows (planted violations, loop trees with exact
 * picodollar totals); `agentledger ingest --idle-exit-ms` must then reach its
 * idle exit with every envelope stored once, the planted verdicts and no
 * other, and the generator's spend. The broker's own log files say which
 * codec each batch really has, so a producer that quietly sent its batches
 * uncompressed would fail the test instead of passing it.
 *
 * Skips, saying why, when go or java (or the stack's kafka-clients jar) is
 * missing, or when Kafka is not the local stack (its log files are needed).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, before, test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { generateSpendTraffic, generateTraffic, defaultViolationPlan } from '../../src/demo/traffic/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { createKafka, ensureTopics, TOPIC_CONFIG } from '../../src/kafka/client.js';
import { runToEnd } from '../support/cli-run.js';
import { machineSkip } from '../support/skips.js';
import { query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { chain } from '../support/envelope-chain.js';
import { kafkaLogReadable, storedBatches } from '../support/kafka-log.js';
import { REPO_ROOT, services } from '../support/services.js';

const FRANZ_SOURCE = `${REPO_ROOT}test/fixtures/producers/franz`;
/** Built once per run, beside the rest of the build. */
const FRANZ_BIN = `${REPO_ROOT}dist/test/fixtures/producers/franz/franz`;
const JAVA_PRODUCER = `${REPO_ROOT}test/fixtures/producers/java/LoopProducer.java`;
const KAFKA_LIBS = `${REPO_ROOT}.state/kafka-libs`;
const PARTITIONS = 3;
const CODEC_ID = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;
type Codec = keyof typeof CODEC_ID;

const runs = (cmd: string, args: string[]): boolean => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
const svc = await services();
const stackMissing =
  svc.kind !== 'local' ? 'Kafka is not the local stack: the broker log files that show each batch codec are out of reach' : kafkaLogReadable() ? undefined : 'no broker log files under .state/kafka/data';
const goMissing = machineSkip(runs('go', ['version']) ? stackMissing : 'go is not on PATH: the franz-go producer cannot be built');
const javaMissing = machineSkip(
  !runs('java', ['-version'])
    ? 'java is not on PATH: the Java producer cannot run'
    : !existsSync(KAFKA_LIBS) || !readdirSync(KAFKA_LIBS).some((f) => /^kafka-clients-.*\.jar$/.test(f))
      ? 'no kafka-clients jar in .state/kafka-libs (infra/stack.sh fetches it)'
      : stackMissing,
);

const contexts: TestContext[] = [];
const work = mkdtempSync(`${tmpdir()}/agentledger-producers-`);
after(async () => {
  for (const c of contexts) await c.cleanup();
  rmSync(work, { recursive: true, force: true });
});

before(() => {
  if (goMissing) return;
  // The module's dependencies come from the Go module proxy (pinned in go.sum) on the first build.
  const built = spawnSync('go', ['build', '-o', FRANZ_BIN, '.'], {
    cwd: FRANZ_SOURCE,
    env: { ...process.env, GOWORK: 'off', GOFLAGS: '-buildvcs=false -mod=readonly' },
    encoding: 'utf8',
    timeout: 300_000,
  });
  assert.equal(built.status, 0, `go build of the franz-go producer failed: ${built.stderr}`);
});

/** Loop traffic with planted violations, and loop trees with exact spend: ~2,000 envelopes. */
function load(seed: number) {
  const traffic = generateTraffic({ loops: 40, envelopesPerLoop: [30, 50], seed, payloadBytes: 300, violations: defaultViolationPlan(40) });
  const spend = generateSpendTraffic({ seed, roots: 2 });
  const records = [...traffic.records, ...spend.records];
  return { traffic: traffic.expected, spend: spend.expected, records };
}
type Load = ReturnType<typeof load>;

/** One record value per line; the producers key each by its LoopID, as the generator did. */
function jsonl(name: string, records: readonly { key: string; value: Buffer }[]): string {
  const file = `${work}/${name}.jsonl`;
  const lines = records.map((r) => {
    const text = r.value.toString();
    assert.ok(!text.includes('\n') && (JSON.parse(text) as { LoopID?: unknown }).LoopID === r.key, 'a record the producers would key differently');
    return text;
  });
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

async function world(name: string): Promise<TestContext> {
  const ctx = await testContext(name, { AGENTLEDGER_BATCH_MAX_WAIT_MS: '200' });
  contexts.push(ctx);
  const kafka = createKafka(ctx.config.kafka, createLogger('error'));
  await ensureTopics(kafka, [
    { topic: ctx.config.kafka.topics.envelopes, numPartitions: PARTITIONS, configEntries: TOPIC_CONFIG },
    { topic: ctx.config.kafka.topics.deadLetter, numPartitions: 1, configEntries: TOPIC_CONFIG },
  ]);
  return ctx;
}

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { cwd: REPO_ROOT, encoding: 'utf8', timeout: 180_000 });
  assert.equal(r.status, 0, `${cmd} ${args.slice(0, 4).join(' ')}… failed (${r.status ?? r.signal}): ${r.stderr}`);
}

const java = (...args: string[]): void => run('java', ['-cp', `${KAFKA_LIBS}/*`, JAVA_PRODUCER, ...args]);

/** The codecs of the topic's data batches, as the broker stored them. */
function codecsStored(ctx: TestContext, topic = ctx.config.kafka.topics.envelopes, partitions = PARTITIONS): Set<number> {
  const codecs = new Set<number>();
  for (let p = 0; p < partitions; p++) for (const b of storedBatches(topic, p)) if (!b.control) codecs.add(b.codec);
  return codecs;
}

async function ingest(ctx: TestContext): Promise<void> {
  const r = await runToEnd(['ingest', '--idle-exit-ms', '1500'], ctx.env, { timeoutMs: 120_000 });
  assert.equal(r.code, 0, `ingest did not reach its idle exit: ${r.stderr.slice(-3000)}`);
}

/** Every (loop, seq) once, the planted verdicts and no other, the generator's spend per root. */
async function assertStored(ctx: TestContext, l: Load): Promise<void> {
  const keys = await query<{ loop_id: string; seq: string; n: string }>(
    ctx,
    "SELECT loop_id, seq, count() AS n FROM envelopes FINAL WHERE verdict NOT IN ('fork', 'malformed') GROUP BY loop_id, seq",
  );
  assert.deepEqual(
    keys.filter((k) => Number(k.n) !== 1),
    [],
    'no (loop, seq) stored twice',
  );
  assert.equal(keys.length, l.traffic.envelopes + l.spend.envelopes, 'every (loop, seq) stored');
  const flagged = await query<{ loop_id: string; seq: string; verdict: string }>(
    ctx,
    "SELECT loop_id, seq, verdict FROM envelopes FINAL WHERE verdict != 'ok' ORDER BY loop_id, seq, verdict",
  );
  const key = (v: { loopId: string; seq: number; verdict: string }): string => `${v.loopId}#${v.seq}#${v.verdict}`;
  assert.deepEqual(
    flagged.map((f) => key({ loopId: f.loop_id, seq: Number(f.seq), verdict: f.verdict })).sort(),
    [...l.traffic.violations, ...l.spend.violations].map(key).sort(),
    'the planted verdicts, and no other',
  );
  const spend = spawnSync(process.execPath, [`${REPO_ROOT}bin/agentledger.js`, 'spend', '--json', '--by', 'root', '--source', 'runtime'], {
    env: { PATH: process.env['PATH'] ?? '', ...ctx.env },
    encoding: 'utf8',
  });
  assert.equal(spend.status, 0, spend.stderr);
  const byRoot = new Map((JSON.parse(spend.stdout) as { rootLoopId: string; calls: number; costPicoUsd: string }[]).map((r) => [r.rootLoopId, [r.calls, r.costPicoUsd]]));
  const roots = l.spend.roots.filter((r) => r.modelCalls > 0);
  assert.ok(roots.length > 0);
  for (const r of roots) assert.deepEqual(byRoot.get(r.rootLoopId), [r.modelCalls, r.modelCostPicoUsd], `spend of ${r.rootLoopId}`);
}

const franzCases = [['default', 'snappy'], ['none', 'none'], ['gzip', 'gzip'], ['snappy', 'snappy'], ['lz4', 'lz4'], ['zstd', 'zstd']] as const satisfies readonly (readonly [string, Codec])[];
for (const [i, [option, codec]] of franzCases.entries()) {
  const what = option === 'default' ? "its default settings (snappy batches)" : `ProducerBatchCompression(${codec})`;
  test(`franz-go with ${what}: ingest stores every envelope once, with the planted verdicts and the exact spend`, { skip: goMissing, timeout: 240_000 }, async () => {
    const ctx = await world(`franz_${option}`);
    const l = load(100 + i);
    run(FRANZ_BIN, ['produce', '-brokers', ctx.config.kafka.brokers.join(','), '-topic', ctx.config.kafka.topics.envelopes, '-in', jsonl(`franz-${option}`, l.records), '-compression', option]);
    // franz-go sends a batch uncompressed when compressing would not make it smaller (a small last batch).
    const stored = [...codecsStored(ctx)];
    assert.ok(stored.includes(CODEC_ID[codec]), `franz-go wrote ${codec} batches (stored codecs: ${stored.join(', ')})`);
    assert.deepEqual(stored.filter((c) => c !== CODEC_ID[codec] && c !== CODEC_ID.none), [], `every batch franz-go wrote is ${codec}, or uncompressed`);
    await ingest(ctx);
    await assertStored(ctx, l);
  });
}

test('the Java client with compression.type gzip, snappy, lz4 and zstd: ingest stores every envelope once, with the planted verdicts and the exact spend', { skip: javaMissing, timeout: 300_000 }, async (t) => {
  const codecs = ['gzip', 'snappy', 'lz4', 'zstd'] as const;
  const worlds = await Promise.all(codecs.map((c) => world(`java_${c}`)));
  const l = load(200);
  // One JVM for the four topics (a single-file launch compiles first).
  java('produce', worlds[0]!.config.kafka.brokers.join(','), jsonl('java', l.records), ...codecs.map((c, i) => `${worlds[i]!.config.kafka.topics.envelopes}=${c}`));
  for (const [i, codec] of codecs.entries()) {
    await t.test(codec, async () => {
      const ctx = worlds[i]!;
      assert.deepEqual([...codecsStored(ctx)], [CODEC_ID[codec]], `every batch the Java client wrote is ${codec}`);
      await ingest(ctx);
      await assertStored(ctx, l);
    });
  }
});

test('a Java transactional producer: nothing of an aborted transaction is stored, and ingest commits past every marker to its idle exit', { skip: javaMissing, timeout: 300_000 }, async () => {
  const ctx = await world('java_txn');
  const l = load(300);
  const half = Math.floor(l.records.length / 2);
  // What must never be stored: a loop of its own, and a second, honestly
  // hashed version of a committed loop's first links (forks, if read).
  const victim = l.records[0]!.key;
  const links = (tag: string) => [
    ['2026-11-30T10:00:00Z', 'LoopStarted', `{"name":"aborted-by-test ${tag}"}`],
    ['2026-11-30T10:00:01Z', 'ModelCalled', `{"provider":"p","model":"aborted-by-test","usage":{"cost_usd":1000}}`],
    ['2026-11-30T10:00:02Z', 'LoopFinished', '{"outcome_kind":"Completed"}'],
  ] as const;
  const aborted = jsonl('aborted', [...chain('aborted-only-loop', links('only')), ...chain(victim, links('fork'))]);
  const brokers = ctx.config.kafka.brokers.join(',');
  const topic = ctx.config.kafka.topics.envelopes;
  java('transact', brokers, topic, 'lz4', `commit:${jsonl('first', l.records.slice(0, half))}`, `abort:${aborted}`, `commit:${jsonl('second', l.records.slice(half))}`);
  const batches = [...Array(PARTITIONS).keys()].flatMap((p) => storedBatches(topic, p));
  assert.ok(batches.some((b) => b.control) && batches.filter((b) => !b.control).every((b) => b.transactional && b.codec === CODEC_ID.lz4), 'transactional lz4 batches and their markers');
  await ingest(ctx);
  await assertStored(ctx, l);
  const leaked = await query<{ n: string }>(ctx, "SELECT count() AS n FROM envelopes WHERE loop_id = 'aborted-only-loop' OR payload LIKE '%aborted-by-test%'");
  assert.equal(Number(leaked[0]?.n), 0, 'nothing of the aborted transaction is stored (kafkajs reads committed records only)');

  // A transaction aborted after everything before it was consumed: the next
  // fetch holds only aborted records and the marker, which kafkajs filters
  // out before eachBatch. Ingest must still commit past them, or the group
  // is never caught up and the idle exit never comes.
  java('transact', brokers, topic, 'zstd', `abort:${aborted}`);
  await ingest(ctx);
  const admin = new Kafka({ clientId: 'test-offsets', brokers: [...ctx.config.kafka.brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const [committed] = await admin.fetchOffsets({ groupId: ctx.config.kafka.groupId, topics: [topic] });
    const high = await admin.fetchTopicOffsets(topic);
    assert.deepEqual(
      committed?.partitions.map((p) => [p.partition, p.offset]).sort(),
      high.map((p) => [p.partition, p.high]).sort(),
      'the group committed every partition to its end, markers and aborted records included',
    );
  } finally {
    await admin.disconnect();
  }
  await assertStored(ctx, l);
});

test("agentledger's own producers: produce-demo --compression snappy and lz4 and craze push --compression zstd write batches of that codec, which the Java client reads, and ingest stores them all", { skip: javaMissing, timeout: 180_000 }, async () => {
  const ctx = await world('own_producers');
  const demo = await runToEnd(['produce-demo', '--loops', '30', '--envelopes', '20', '--payload-bytes', '300', '--compression', 'snappy', '--json'], ctx.env);
  assert.equal(demo.code, 0, demo.stderr);
  const produced = JSON.parse(demo.stdout) as { records: number; envelopes: number };
  assert.equal(produced.records, produced.envelopes);
  const push = await runToEnd(['craze', 'push', `${REPO_ROOT}test/fixtures/craze/journal/`, '--compression', 'zstd'], ctx.env);
  assert.equal(push.code, 0, push.stderr + push.stdout);
  const events = Number(/pushed (\d+) event/.exec(push.stdout)?.[1]);
  assert.ok(events > 0, push.stdout);
  assert.deepEqual([...codecsStored(ctx)], [CODEC_ID.snappy], 'produce-demo wrote snappy batches');
  assert.deepEqual([...codecsStored(ctx, ctx.config.kafka.topics.craze, 4)], [CODEC_ID.zstd], 'craze push wrote zstd batches');
  // The same with lz4, to a topic of its own that only the Java client reads.
  const lz4Topic = `${ctx.config.kafka.topics.envelopes}.lz4`;
  const lz4 = await runToEnd(['produce-demo', '--loops', '30', '--envelopes', '20', '--payload-bytes', '300', '--compression', 'lz4'], { ...ctx.env, AGENTLEDGER_ENVELOPE_TOPIC: lz4Topic });
  assert.equal(lz4.code, 0, lz4.stderr);
  assert.deepEqual([...codecsStored(ctx, lz4Topic, 4)], [CODEC_ID.lz4], 'produce-demo wrote lz4 batches');
  try {
    java('count', ctx.config.kafka.brokers.join(','), `${ctx.config.kafka.topics.envelopes}=${produced.records}`, `${lz4Topic}=${produced.records}`, `${ctx.config.kafka.topics.craze}=${events}`);
  } finally {
    const admin = new Kafka({ clientId: 'test-cleanup', brokers: [...ctx.config.kafka.brokers], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [lz4Topic] }).finally(() => admin.disconnect());
  }
  const bad = await runToEnd(['produce-demo', '--compression', 'brotli'], ctx.env);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--compression takes none, gzip, snappy, lz4, zstd, got "brotli"/);

  await ingest(ctx);
  const [envelopes] = await query<{ n: string }>(ctx, 'SELECT count() AS n FROM envelopes');
  assert.equal(Number(envelopes?.n), produced.envelopes);
  const [craze] = await query<{ n: string }>(ctx, 'SELECT count() AS n FROM craze_events FINAL');
  assert.equal(Number(craze?.n), events);
});
