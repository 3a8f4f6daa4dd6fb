/**
 * craze end to end on the real services: journal files -> `craze push` ->
 * Kafka -> `ingest` -> ClickHouse -> `sessions`, against totals worked out by
 * hand (test/fixtures/craze/GROUND_TRUTH.md), to the picodollar, including a
 * session above $9,007. The same corpus sent as plain Kafka records gives the
 * same tables; pushing twice changes nothing; SIGKILLs change no total; a
 * follower restarted mid-file sends no line twice; unreadable lines are
 * reported, counted and skipped, and everything readable is sent.
 */
import assert from 'node:assert/strict';
import { appendFile, mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Partitioners } from 'kafkajs';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { migrate } from '../../src/migrate/migrate.js';
import { completeLines, JournalParser } from '../../src/sources/craze-journal.js';
import { createKafka, ensureTopics, TOPIC_CONFIG } from '../../src/kafka/client.js';
import { MAX_LINE_BYTES } from '../../src/sources/lines.js';
import { FAULT_THREADS, testContext, type TestContext } from '../support/context.js';
import { prng, runCli, sleep } from '../support/processes.js';
import { closedPort } from '../support/cli-run.js';

const JOURNALS = fileURLToPath(new URL('../../../test/fixtures/craze/journal/', import.meta.url));
const EXPECTED = fileURLToPath(new URL('../../../test/fixtures/craze/expected.json', import.meta.url));
const log = createLogger('warn');
const contexts: TestContext[] = [];
after(async () => {
  for (const c of contexts) await c.cleanup();
});

type Summary = Record<string, string | number | string[]>;
const expectedSessions = (JSON.parse(await readFile(EXPECTED, 'utf8')) as { sessions: Summary[] }).sessions;

async function context(name: string, overrides: Record<string, string> = {}): Promise<TestContext> {
  const ctx = await testContext(name, { AGENTLEDGER_BATCH_MAX_ROWS: '300', AGENTLEDGER_BATCH_MAX_WAIT_MS: '100', ...FAULT_THREADS, ...overrides });
  contexts.push(ctx);
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  await ensureTopics(createKafka(ctx.config.kafka, log), [{ topic: ctx.config.kafka.topics.craze, numPartitions: 3, configEntries: TOPIC_CONFIG }]);
  return ctx;
}

async function cli(ctx: TestContext, ...args: string[]): Promise<string> {
  const run = runCli(args, ctx.env);
  let stdout = '';
  run.child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  assert.equal(await run.exited, 0, run.stderr());
  return stdout;
}

const ingest = (ctx: TestContext): Promise<string> => cli(ctx, 'ingest', '--no-migrate', '--idle-exit-ms', '3000');
const sessions = async (ctx: TestContext): Promise<Summary[]> => JSON.parse(await cli(ctx, 'sessions', '--json')) as Summary[];

function pick(s: Summary, like: Summary): Summary {
  return Object.fromEntries(Object.keys(like).map((k) => [k, s[k] as string | number]));
}

/** Every derived column of craze_events, in a stable order, without where and when it was ingested. */
async function derived(ctx: TestContext): Promise<string[]> {
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    const rows = await ch
      .query({
        query: `SELECT session_id, incarnation, seq, event_type, at_text, agent, replayed, event, verdict, model, report,
                       cost_pico, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_creation_tokens,
                       unpriced, turn_id, turn_outcome, turn_synthetic, err_class, subagent_id, subagent_attempt,
                       subagent_change, subagent_status, tool_name, tool_kind, tool_status, tool_exit_code, ask_kind,
                       ask_outcome, ask_by, compaction_phase, compaction_reason, tokens_before, tokens_after,
                       error_class, error_code, account_state
                FROM craze_events FINAL ORDER BY session_id, incarnation, seq`,
        format: 'JSONEachRow',
      })
      .then((r) => r.json<Record<string, unknown>>());
    return rows.map((r) => JSON.stringify(r));
  } finally {
    await ch.close();
  }
}

async function journalFiles(): Promise<string[]> {
  const out: string[] = [];
  for (const dir of (await readdir(JOURNALS)).sort()) {
    for (const f of (await readdir(join(JOURNALS, dir))).sort()) out.push(join(JOURNALS, dir, f));
  }
  return out;
}

/** The corpus as plain Kafka records (no journal metadata), as another producer would publish them. */
async function plainRecords(rename: (sessionId: string) => string = (s) => s): Promise<{ key: string; value: string }[]> {
  const records: { key: string; value: string }[] = [];
  for (const file of await journalFiles()) {
    const parser = new JournalParser();
    const { lines } = completeLines(await readFile(file, 'utf8'));
    const events = lines.flatMap((l) => parser.line(l));
    const sessionId = rename(parser.sessionId!);
    for (const e of events) {
      records.push({
        key: sessionId,
        value: `{"sessionId":${JSON.stringify(sessionId)},"incarnation":${JSON.stringify(parser.meta!.incarnation)},"seq":${e.seq},"event":${e.eventText}}`,
      });
    }
  }
  return records;
}

async function produce(ctx: TestContext, records: { key: string; value: string }[]): Promise<void> {
  const producer = createKafka(ctx.config.kafka, log).producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  for (let i = 0; i < records.length; i += 2000) await producer.send({ topic: ctx.config.kafka.topics.craze, acks: -1, messages: records.slice(i, i + 2000) });
  await producer.disconnect();
}

test('journals pushed and ingested give the hand-computed totals; pushing twice changes nothing; plain Kafka records give the same tables', { timeout: 300_000 }, async () => {
  const pushed = await context('craze_push');
  const out = await cli(pushed, 'craze', 'push', JOURNALS);
  assert.match(out, /pushed \d+ event\(s\) from 7 journal file\(s\)/);
  assert.match(out, /1 omitted event\(s\) skipped, 1 gap line\(s\)/);
  await ingest(pushed);
  const got = await sessions(pushed);
  assert.equal(got.length, expectedSessions.length);
  for (const want of expectedSessions) {
    const s = got.find((g) => g['sessionId'] === want['sessionId']);
    assert.ok(s, `session ${String(want['sessionId'])}`);
    assert.deepEqual(pick(s, want), want);
  }
  assert.equal(got[0]?.['sessionId'], '01956fd5-3e77-7d10-a2b4-6c8e0f2a4b56', 'costliest first');
  assert.ok(BigInt(got[0]?.['costPicoUsd'] as string) > 9_007_199_254_740_991n, 'beyond JavaScript exact integers');
  assert.equal(got.find((g) => g['provider'] !== '') !== undefined, true, 'journal metadata kept');
  // `spend` counts craze the way `sessions` does: per session (its own root), the hand-computed spend.
  const spend = JSON.parse(await cli(pushed, 'spend', '--json', '--by', 'root', '--source', 'craze')) as { rootLoopId: string; costPicoUsd: string }[];
  assert.deepEqual(
    spend.map((r) => [r.rootLoopId, r.costPicoUsd]).sort(),
    expectedSessions.filter((w) => BigInt(w['costPicoUsd'] as string) > 0n).map((w) => [w['sessionId'], w['costPicoUsd']]).sort(),
  );

  const tables = await derived(pushed);
  await cli(pushed, 'craze', 'push', JOURNALS);
  await ingest(pushed);
  assert.deepEqual(await derived(pushed), tables, 'a second push changes no row');
  assert.deepEqual(await sessions(pushed), got, 'nor any total');

  const plain = await context('craze_plain');
  await produce(plain, await plainRecords());
  await ingest(plain);
  assert.deepEqual(await derived(plain), tables, 'the same rows from plain Kafka records');
  const plainSessions = await sessions(plain);
  for (const want of expectedSessions) assert.deepEqual(pick(plainSessions.find((g) => g['sessionId'] === want['sessionId'])!, want), want);
});

test('SIGKILLs during craze ingestion change no total', { timeout: 600_000 }, async () => {
  const ctx = await context('craze_kill');
  const copies = 250;
  const records: { key: string; value: string }[] = [];
  for (let k = 0; k < copies; k++) records.push(...(await plainRecords((s) => `${s}-k${k}`)));
  await produce(ctx, records);
  const seed = Date.now() % 100_000;
  const random = prng(seed);
  const ch = createClickHouse(ctx.config.clickhouse);
  const stored = async (): Promise<number> =>
    Number((await ch.query({ query: 'SELECT count() AS n FROM craze_events', format: 'JSONEachRow' }).then((r) => r.json<{ n: string }>()))[0]?.n);
  let before = 0;
  let midway = 0;
  for (let kill = 0; kill < 8 && before < records.length; kill++) {
    const run = runCli(['ingest', '--no-migrate'], ctx.env);
    for (let i = 0; i < 1200 && (await stored()) <= before; i++) await sleep(50);
    await sleep(Math.floor(random() * 400));
    run.child.kill('SIGKILL');
    await run.exited;
    before = await stored();
    if (before > 0 && before < records.length) midway++;
  }
  await ch.close();
  assert.ok(midway >= 4, `kills landed mid-ingest (seed ${seed})`);
  await ingest(ctx);
  const got = await sessions(ctx);
  assert.equal(got.length, expectedSessions.length * copies);
  for (const s of got) {
    const base = expectedSessions.find((e) => String(s['sessionId']).startsWith(`${String(e['sessionId'])}-k`));
    assert.ok(base, String(s['sessionId']));
    assert.deepEqual(pick(s, base), { ...base, sessionId: s['sessionId'] });
  }
});

test('craze push --follow tails a growing journal and, restarted, sends no line twice', { timeout: 300_000 }, async () => {
  const ctx = await context('craze_follow');
  const dir = await mkdtemp(join(tmpdir(), 'craze-follow-'));
  const source = (await journalFiles())[0]!;
  const lines = (await readFile(source, 'utf8')).split('\n').filter((l) => l.length > 0);
  /** The events in the journal's first `n` lines. */
  const eventsIn = (n: number): number => {
    const parser = new JournalParser();
    return lines.slice(0, n).flatMap((l) => parser.line(l)).length;
  };
  const events = eventsIn(lines.length);
  const topic = ctx.config.kafka.topics.craze;
  /** Waits for the follower to have sent `n` records (the topic exists once it sent its first). */
  const sent = async (n: number): Promise<void> => {
    for (let i = 0; i < 1200 && (await recordsOn(ctx, topic).catch(() => 0)) < n; i++) await sleep(50);
    assert.ok((await recordsOn(ctx, topic)) >= n, `the follower sent ${n} records within a minute`);
  };
  await mkdir(join(dir, 'slug'));
  const target = join(dir, 'slug', source.split('/').pop()!);
  const state = join(dir, 'state.json');
  /**
   * Waits for the follower's state to record the journal's first `n` lines as
   * sent. It writes its state once the broker acknowledged those lines'
   * records: a SIGKILL between that acknowledgement and the write resends
   * them (harmless: ingest drops events it stored), so the kill below waits
   * for the write, which is the promise under test.
   */
  const saved = async (n: number): Promise<void> => {
    const bytes = Buffer.byteLength(lines.slice(0, n).join('\n') + '\n');
    const offset = async (): Promise<number> => {
      const text = await readFile(state, 'utf8').catch(() => '{}');
      return Math.max(0, ...Object.values(JSON.parse(text) as Record<string, { offset: number }>).map((f) => f.offset));
    };
    for (let i = 0; i < 1200 && (await offset()) < bytes; i++) await sleep(50);
    assert.ok((await offset()) >= bytes, `the follower recorded ${n} lines as sent within a minute`);
  };
  const cut = Math.floor(lines.length / 2);
  await writeFile(target, lines.slice(0, cut).join('\n') + '\n');

  const args = ['craze', 'push', dir, '--follow', '--state', state, '--interval-ms', '50'];
  let follower = runCli(args, ctx.env);
  await sent(eventsIn(cut));
  // craze appends; a line arrives in two writes (torn until the second).
  const rest = lines.slice(cut);
  const first = rest.shift()!;
  await appendFile(target, first.slice(0, 20));
  // The fault itself: the torn line stays on disk for six of the follower's polls (50 ms), none of which may send it.
  await sleep(300);
  await appendFile(target, first.slice(20) + '\n');
  await appendFile(target, rest.slice(0, 3).join('\n') + '\n');
  await sent(eventsIn(cut + 4));
  await saved(cut + 4);
  follower.child.kill('SIGKILL');
  await follower.exited;
  await appendFile(target, rest.slice(3).join('\n') + '\n');
  follower = runCli(args, ctx.env);
  await sent(events);
  follower.child.kill('SIGTERM');
  assert.equal(await follower.exited, 0, follower.stderr());

  // Every event on the topic once: a second copy would be a wasted redelivery.
  const consumer = createKafka(ctx.config.kafka, log).consumer({ groupId: `${ctx.config.kafka.groupId}.reader` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  // Everything the topic holds, a second copy included: its high watermarks count every record (an idempotent producer, no transactions).
  const onTopic = await recordsOn(ctx, topic);
  const seqs: number[] = [];
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        eachMessage: ({ message }) => {
          seqs.push((JSON.parse(message.value?.toString() ?? '{}') as { seq: number }).seq);
          if (seqs.length >= onTopic) resolve();
          return Promise.resolve();
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  assert.equal(seqs.length, events, 'each event sent once');
  assert.equal(new Set(seqs).size, events);
});

/** Records on a topic: the sum of its partitions' high watermarks (an idempotent producer, no transactions). */
async function recordsOn(ctx: TestContext, topic: string): Promise<number> {
  const admin = createKafka(ctx.config.kafka, log).admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);
  } finally {
    await admin.disconnect();
  }
}

test('craze push reports, counts and skips unreadable lines (corrupted, over the cap, random bytes), sends every readable event and exits 1', { timeout: 120_000 }, async () => {
  const ctx = await context('craze_unreadable');
  const dir = await mkdtemp(join(tmpdir(), 'craze-unreadable-'));
  await mkdir(join(dir, 'slug'));
  // Session B1: no torn last line; seq 20 is on line 26.
  const source = join(JOURNALS, '--home-dev-src-shop--', '20250305T101230Z_019565ca-e2b0-73c4-95e6-f708192a3b4c.jsonl');
  const lines = (await readFile(source, 'utf8')).trimEnd().split('\n');
  assert.match(lines[25]!, /"seq":20,/);
  const expected = ((parser) => lines.flatMap((l) => parser.line(l)).filter((e) => e.seq !== 20).length)(new JournalParser());
  const corrupted = [...lines.slice(0, 25), lines[25]!.slice(0, 90) + '\u0000\u0000\u001b[2J', ...lines.slice(26, 40), 'x'.repeat(MAX_LINE_BYTES + 1), ...lines.slice(40)];
  const journal = join(dir, 'slug', 'b1.jsonl');
  await writeFile(journal, corrupted.join('\n') + '\n');
  // 200 KB of random bytes named .jsonl.
  const random = prng(9);
  const noise = Buffer.from(Array.from({ length: 200_000 }, () => Math.floor(random() * 256)));
  const garbage = join(dir, 'slug', 'random.jsonl');
  await writeFile(garbage, noise);
  // The reference count: complete lines that are not blank (none is JSON); the torn rest is dropped unreported.
  const noiseLines = noise.toString('utf8').split('\n').slice(0, -1).filter((l) => l.trim() !== '').length;
  assert.ok(noiseLines > 20);
  const state = join(dir, 'state.json');

  const run = async (): Promise<{ code: number | string; stdout: string }> => {
    const r = runCli(['craze', 'push', dir, '--state', state], ctx.env);
    let stdout = '';
    r.child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    return { code: await r.exited, stdout };
  };
  const first = await run();
  assert.equal(first.code, 1, first.stdout);
  const printed = first.stdout.split('\n').filter((l) => l.startsWith('unreadable line skipped: '));
  assert.deepEqual(printed.slice(0, 2), [
    `unreadable line skipped: ${journal}:26: not JSON`,
    `unreadable line skipped: ${journal}:41: line of ${MAX_LINE_BYTES + 1} bytes exceeds the 16 MiB cap`,
  ]);
  assert.equal(printed.length, 2 + 20, 'the first 20 per file are printed');
  assert.ok(printed.slice(2).every((l) => l.startsWith(`unreadable line skipped: ${garbage}:`)));
  assert.ok(first.stdout.includes(`  … and ${noiseLines - 20} more unreadable line(s) in ${garbage}\n`), first.stdout);
  assert.match(first.stdout, new RegExp(`pushed ${expected} event\\(s\\) from 2 journal file\\(s\\) .* ${2 + noiseLines} unreadable line\\(s\\) skipped`));
  assert.doesNotMatch(first.stdout, /[^\P{Cc}\n]/u, 'nothing raw from the journal reaches the terminal');
  assert.equal(await recordsOn(ctx, ctx.config.kafka.topics.craze), expected, 'every readable event sent once');

  // Again with the state: the journal was sent to its end and is not read
  // again; the random file never named a session, so it is read and
  // reported again.
  const second = await run();
  assert.equal(second.code, 1, second.stdout);
  assert.doesNotMatch(second.stdout, /b1\.jsonl/);
  assert.match(second.stdout, new RegExp(`pushed 0 event\\(s\\) from 2 journal file\\(s\\) .* ${noiseLines} unreadable line\\(s\\) skipped`));
  assert.equal(await recordsOn(ctx, ctx.config.kafka.topics.craze), expected, 'nothing sent twice');
});

test('a session cache of 5 over 300 sessions: sessions evicted and read back from their head rows give the hand-computed totals, the same rows in every copy', { timeout: 300_000 }, async () => {
  const port = await closedPort();
  const ctx = await context('craze_small_cache', { AGENTLEDGER_CRAZE_CACHE_ENTRIES: '5', AGENTLEDGER_METRICS_PORT: String(port) });
  // 100 copies of the corpus (3 sessions, 7 incarnations: resumes, a load
  // that only replays), renamed, interleaved at random (each copy's order
  // kept), as a topic of many sessions carries them.
  const copies = 100;
  const rename = (k: number) => (s: string) => `${s}-${k}`;
  const queues = await Promise.all(Array.from({ length: copies }, (_, k) => plainRecords(rename(k))));
  const rnd = prng(812);
  const records: { key: string; value: string }[] = [];
  // Ten copies (30 sessions) live at a time: a session comes back within a few sends.
  for (let wave = 0; wave < copies; wave += 10) {
    for (let left = queues.slice(wave, wave + 10); left.length > 0; left = left.filter((q) => q.length > 0)) {
      records.push(...left[Math.floor(rnd() * left.length)]!.splice(0, 1 + Math.floor(rnd() * 5)));
    }
  }
  // Last, long after their sessions left the cache: redeliveries of early records.
  const later = Array.from({ length: 200 }, () => records[Math.floor(rnd() * (records.length / 3))]!);
  // Produced while one ingest runs, in small sends: Kafka batches stay
  // small, so a session's events span batches judged while the buffers of
  // the earlier ones are still pending (sealed or not), and sessions are
  // evicted around them.
  const run = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '4000'], ctx.env);
  const ch = createClickHouse(ctx.config.clickhouse);
  const count = async (): Promise<number> => Number((await ch.query({ query: 'SELECT count() AS n FROM craze_events', format: 'JSONEachRow' }).then((r) => r.json<{ n: string }>()))[0]?.n);
  const producer = createKafka(ctx.config.kafka, log).producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  try {
    for (let i = 0; i < records.length; i += 40) {
      await producer.send({ topic: ctx.config.kafka.topics.craze, acks: -1, messages: records.slice(i, i + 40) });
      await sleep(5);
    }
    for (let i = 0; i < 600 && (await count()) < records.length; i++) await sleep(200);
    assert.equal(await count(), records.length, 'every record stored');
    await producer.send({ topic: ctx.config.kafka.topics.craze, acks: -1, messages: later });
  } finally {
    await producer.disconnect();
    await ch.close();
  }
  let metrics = '';
  const exited = run.exited.then((code) => code);
  for (let done = false; !done; ) {
    metrics = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => metrics);
    done = await Promise.race([exited.then(() => true), sleep(500).then(() => false)]);
  }
  assert.equal(await exited, 0, run.stderr());

  const got = await sessions(ctx);
  assert.equal(got.length, copies * expectedSessions.length);
  for (let k = 0; k < copies; k++) {
    for (const want of expectedSessions) {
      const id = rename(k)(want['sessionId'] as string);
      const s = got.find((g) => g['sessionId'] === id);
      assert.ok(s, `session ${id}`);
      assert.deepEqual(pick(s, want), { ...want, sessionId: id }, `session ${id}`);
    }
  }
  // Every derived column, the accounting state included, is the same in every copy.
  const byCopy = new Map<string, string[]>();
  for (const row of await derived(ctx)) {
    const k = /"session_id":"[^"]*-(\d+)"/.exec(row)![1]!;
    // The copy's session ids back to the corpus's (they are in the accounting state too).
    const original = expectedSessions.reduce((r, want) => r.replaceAll(rename(Number(k))(want['sessionId'] as string), want['sessionId'] as string), row);
    byCopy.set(k, [...(byCopy.get(k) ?? []), original]);
  }
  assert.equal(byCopy.size, copies);
  const first = byCopy.get('0');
  for (const [k, rows] of byCopy) assert.deepEqual(rows, first, `copy ${k}`);
  const metric = (name: string): number => Number(new RegExp(`^${name}\\{cache="craze_sessions"\\} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  // Not vacuous: sessions were evicted, and each session of the redeliveries, long evicted, was read back again.
  assert.ok(metric('agentledger_cache_evictions_total') >= 300 - 5 - 30, metrics);
  assert.ok(metric('agentledger_cache_misses_total') >= 300 + new Set(later.map((r) => r.key)).size, metrics);
});
