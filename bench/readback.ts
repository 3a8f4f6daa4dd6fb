/**
 * Read-back at scale (issue 8): does a consumer's restart, rebalance and
 * steady state cost the same over a big envelopes table as over an empty one?
 * Runs on the local stack (Kafka 127.0.0.1:9092, ClickHouse 127.0.0.1:8123).
 *
 *   node dist/bench/readback.js [--rows 20000000] [--loops 400000] [--sample 2000]
 *                               [--ingest-loops 2000] [--ingest-envelopes 50] [--keep]
 *
 * 1. Loads --rows envelope rows over --loops loops into a fresh database,
 *    generated inside ClickHouse (INSERT … SELECT FROM numbers(), in 2M-row
 *    inserts dated over past months, as a long-running deployment leaves
 *    them), and their heads into loop_heads, as the consumer derives them.
 * 2. Read-back of a rebalance, with rows read from system.query_log: the
 *    progress of 4 partitions (the way the consumer reads it: since = the
 *    last commit's stamp − 15 min; and the way it read it before: every
 *    row, since = 0) and the heads of --sample stored loops (from
 *    loop_heads, and from envelopes alone as the first consumer did).
 * 3. Ingest throughput: `agentledger ingest` over the same fresh traffic
 *    (--ingest-loops × --ingest-envelopes, ~1 KB each) into an empty database
 *    and into the loaded one, in one run (order: empty, loaded, empty,
 *    loaded), each group having committed once before (an existing
 *    deployment: its commits carry their flush stamp).
 * Prints the figures and the ratios; targets: loaded/empty >= 0.9 and a
 * rebalance's read-back < 1 s. Not a test: no assertion, exit 0 unless a step fails.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { MIGRATIONS_DIR } from '../src/cli/migrate.js';
import { parseConfig } from '../src/config/index.js';
import { median, sayer, wholeOption } from './support.js';
import { createLogger } from '../src/observability/logger.js';
import { createClickHouse } from '../src/clickhouse/client.js';
import { migrate } from '../src/migrate/migrate.js';
import { querySql } from '../src/store/queries.js';
import { renderSql } from '../src/clickhouse/sql.js';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000000' },
    loops: { type: 'string', default: '400000' },
    sample: { type: 'string', default: '2000' },
    'ingest-loops': { type: 'string', default: '2000' },
    'ingest-envelopes': { type: 'string', default: '50' },
    keep: { type: 'boolean', default: false },
  },
});
const num = (name: string, text: string | undefined): number => wholeOption('readback', name, text);
const ROWS = num('rows', args.rows);
const LOOPS = num('loops', args.loops);
const SAMPLE = num('sample', args.sample);
const INGEST_LOOPS = num('ingest-loops', args['ingest-loops']);
const INGEST_PER_LOOP = num('ingest-envelopes', args['ingest-envelopes']);
const TS = `${Date.now()}_${randomBytes(2).toString('hex')}`;
const say = sayer('readback');
const log = createLogger('warn');
const BIN = new URL('../../bin/agentledger.js', import.meta.url).pathname;

/**
 * A throwaway database per run needs a user that may create one: the local
 * stack's `agentledger_test` (agentledger's own writer has no DDL), unless
 * the environment names another.
 */
const CLICKHOUSE_USER = process.env['AGENTLEDGER_CLICKHOUSE_USER'] ?? 'agentledger_test';
const CLICKHOUSE_PASSWORD = process.env['AGENTLEDGER_CLICKHOUSE_PASSWORD'] ?? (CLICKHOUSE_USER === 'agentledger_test' ? 'agentledger_test' : '');

function env(database: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '',
    AGENTLEDGER_CLICKHOUSE_USER: CLICKHOUSE_USER,
    AGENTLEDGER_CLICKHOUSE_PASSWORD: CLICKHOUSE_PASSWORD,
    AGENTLEDGER_CLICKHOUSE_DATABASE: database,
    AGENTLEDGER_METRICS_PORT: '0',
    AGENTLEDGER_LOG_LEVEL: 'warn',
    // The lines are read by a person, and by patterns here (serve's address).
    AGENTLEDGER_LOG_FORMAT: 'text',
    ...extra,
  };
}

function run(cli: string[], e: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...cli], { env: e, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

async function database(name: string) {
  const config = parseConfig(env(name));
  await migrate(config.clickhouse, MIGRATIONS_DIR, log);
  return { config, ch: createClickHouse(config.clickhouse) };
}

type Ch = Awaited<ReturnType<typeof database>>['ch'];

/** Runs a query with query_log on; returns its wall time and the rows it read. */
async function measured(ch: Ch, sql: string): Promise<{ ms: number; rows: number; bytes: number }> {
  const queryId = `readback-${randomBytes(6).toString('hex')}`;
  const started = performance.now();
  await ch.query({ query: sql, format: 'JSONEachRow', query_id: queryId, clickhouse_settings: { log_queries: 1 } }).then((r) => r.json());
  const ms = performance.now() - started;
  await ch.command({ query: 'SYSTEM FLUSH LOGS' });
  const [row] = await ch
    .query({ query: `SELECT read_rows, read_bytes FROM system.query_log WHERE query_id = '${queryId}' AND type = 2`, format: 'JSONEachRow' })
    .then((r) => r.json<{ read_rows: string; read_bytes: string }>());
  return { ms, rows: Number(row?.read_rows ?? NaN), bytes: Number(row?.read_bytes ?? NaN) };
}

async function load(ch: Ch): Promise<void> {
  const chunk = 2_000_000;
  const padding = 'x'.repeat(680);
  const started = performance.now();
  for (let from = 0; from < ROWS; from += chunk) {
    const n = Math.min(chunk, ROWS - from);
    // Row i: loop i % LOOPS, seq i / LOOPS + 1; dated over the past 6 months,
    // one stamp per insert, as a flush would; ~700 bytes of payload.
    const month = 6 - Math.floor((from / ROWS) * 6);
    await ch.command({
      query: `INSERT INTO envelopes (loop_id, seq, time, time_text, kind, kind_class, hash, computed_hash, payload, verdict, detail, evidence,
                                     kafka_topic, kafka_partition, kafka_offset, ingested_at)
        SELECT concat('bench-loop-', toString(n % ${LOOPS})) AS loop_id, intDiv(n, ${LOOPS}) + 1 AS seq,
               now() - ${month * 30 * 86400} AS time, '2026-05-01T00:00:00Z' AS time_text, 'ModelCalled' AS kind, 'ModelCalled' AS kind_class,
               hex(SHA256(toString(n))) AS hash, hex(SHA256(toString(n))) AS computed_hash,
               concat('{"provider":"bench","model":"m","response":"', toString(n), '${padding}', '"}') AS payload,
               'ok' AS verdict, '' AS detail, '' AS evidence,
               'bench.old' AS kafka_topic, toUInt32(n % 4) AS kafka_partition, intDiv(n, 4) AS kafka_offset,
               now() - ${month * 30 * 86400} AS ingested_at
        FROM (SELECT number + ${from} AS n FROM numbers(${n}))`,
      clickhouse_settings: { max_insert_block_size: String(n + 1) },
    });
    say(`loaded ${(from + n).toLocaleString()} of ${ROWS.toLocaleString()} rows (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  await ch.command({
    query: `INSERT INTO loop_heads
      SELECT loop_id, max(seq), argMax(hash, seq), argMax(computed_hash, seq), argMax(time_text, seq), 'ok',
             any(kafka_topic), any(kafka_partition), max(kafka_offset), max(ingested_at)
      FROM envelopes GROUP BY loop_id`,
  });
  await ch.command({ query: 'OPTIMIZE TABLE loop_heads FINAL' });
  say(`loaded in ${((performance.now() - started) / 1000).toFixed(0)} s; letting merges settle`);
  for (let i = 0; i < 600; i++) {
    const [m] = await ch.query({ query: 'SELECT count() AS n FROM system.merges', format: 'JSONEachRow' }).then((r) => r.json<{ n: string }>());
    if (Number(m?.n) === 0) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const [parts] = await ch
    .query({ query: "SELECT count() AS n FROM system.parts WHERE database = currentDatabase() AND table = 'envelopes' AND active", format: 'JSONEachRow' })
    .then((r) => r.json<{ n: string }>());
  say(`envelopes: ${ROWS.toLocaleString()} rows in ${parts?.n} active parts`);
}

async function readback(ch: Ch): Promise<void> {
  const since = Math.floor(Date.now() / 1000) - 15 * 60;
  const ids = Array.from({ length: SAMPLE }, (_, i) => `bench-loop-${Math.floor((i * LOOPS) / SAMPLE)}`);
  const rows: string[] = [];
  for (const [label, s] of [
    ['now (since = last commit − 15 min)', since],
    ['before (since = 0: every row)', 0],
  ] as const) {
    let ms = 0;
    let read = 0;
    for (let p = 0; p < 4; p++) {
      const m = await measured(ch, renderSql(querySql('envelope_progress'), { topic: 'bench.old', partition: p, since: s }));
      ms += m.ms;
      read += m.rows;
    }
    const heads = await measured(ch, renderSql(querySql('envelope_heads'), { loop_ids: ids }));
    // The heads the consumer used to read: envelopes only, every row.
    const old =
      s === 0
        ? await measured(
            ch,
            `SELECT loop_id, seq, hash, computed_hash, time_text, verdict FROM envelopes WHERE loop_id IN (${ids.map((i) => `'${i}'`).join(', ')}) AND verdict IN ('ok', 'mismatch', 'gap', 'time_regression') ORDER BY loop_id, seq DESC LIMIT 1 BY loop_id`,
          )
        : undefined;
    rows.push(
      `${label}: progress of 4 partitions ${ms.toFixed(0)} ms, ${read.toLocaleString()} rows read; heads of ${SAMPLE} loops ${heads.ms.toFixed(0)} ms, ${heads.rows.toLocaleString()} rows read` +
        (old ? `; heads from envelopes alone (the old query) ${old.ms.toFixed(0)} ms, ${old.rows.toLocaleString()} rows read` : '') +
        `; rebalance read-back ${(ms + heads.ms).toFixed(0)} ms`,
    );
  }
  for (const r of rows) say(r);
}

/** Produces fresh traffic to a new topic; a group commits once on it (its stamp in the metadata), as a running deployment would have. */
async function ingestRate(db: string, topic: string, records: number, label: string): Promise<number> {
  const group = `bench.readback.${TS}.${label}`;
  const e = env(db, { AGENTLEDGER_ENVELOPE_TOPIC: topic, AGENTLEDGER_KAFKA_GROUP_ID: group, AGENTLEDGER_CRAZE_TOPIC: `${topic}.craze` });
  const kafka = new Kafka({ clientId: 'readback', brokers: ['127.0.0.1:9092'], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: group });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  let joined!: () => void;
  const ready = new Promise<void>((r) => (joined = r));
  consumer.on(consumer.events.GROUP_JOIN, () => joined());
  await consumer.run({ autoCommit: false, eachBatch: () => Promise.resolve() });
  await ready;
  consumer.pause([{ topic }]);
  const stamp = String(Math.floor(Date.now() / 1000));
  await consumer.commitOffsets([0, 1, 2, 3].map((partition) => ({ topic, partition, offset: '0', metadata: stamp })));
  await consumer.disconnect();
  const { ch } = await database(db);
  const [before] = await ch.query({ query: 'SELECT count() AS n FROM envelopes', format: 'JSONEachRow' }).then((r) => r.json<{ n: string }>());
  const started = performance.now();
  const result = await run(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], e);
  if (result.code !== 0) throw new Error(`ingest failed: ${result.err.slice(-2000)}`);
  const [after] = await ch.query({ query: 'SELECT count() AS n FROM envelopes', format: 'JSONEachRow' }).then((r) => r.json<{ n: string }>());
  await ch.close();
  const stored = Number(after?.n) - Number(before?.n);
  if (stored !== records) throw new Error(`${label}: stored ${stored} of ${records}`);
  // The idle wait (3 s) is not ingest time.
  const seconds = (performance.now() - started) / 1000 - 3;
  return records / seconds;
}

async function main(): Promise<void> {
  const admin = createClickHouse(parseConfig(env('default')).clickhouse, 'default');
  const loadedDb = `bench_readback_${TS}`;
  const { ch } = await database(loadedDb);
  await load(ch);
  await readback(ch);

  const topic = `bench.readback.${TS}`;
  const produced = await run(
    ['produce-demo', '--loops', String(INGEST_LOOPS), '--envelopes', String(INGEST_PER_LOOP), '--seed', '7', '--payload-bytes', '1024', '--json'],
    env(loadedDb, { AGENTLEDGER_ENVELOPE_TOPIC: topic }),
  );
  if (produced.code !== 0) throw new Error(`produce-demo failed: ${produced.err}`);
  const records = INGEST_LOOPS * INGEST_PER_LOOP;
  const rates: Record<'empty' | 'loaded', number[]> = { empty: [], loaded: [] };
  for (const [i, which] of (['empty', 'loaded', 'loaded', 'empty'] as const).entries()) {
    const db = which === 'empty' ? `bench_readback_${TS}_empty${i}` : loadedDb;
    if (which === 'loaded') await ch.command({ query: `ALTER TABLE envelopes DELETE WHERE kafka_topic = '${topic}'` });
    if (which === 'loaded') await ch.command({ query: `ALTER TABLE loop_heads DELETE WHERE kafka_topic = '${topic}'` });
    if (which === 'loaded') await waitMutations(ch);
    const rate = await ingestRate(db, topic, records, `${which}${i}`);
    rates[which].push(rate);
    say(`ingest ${records.toLocaleString()} envelopes into the ${which} table: ${Math.round(rate).toLocaleString()} envelopes/s`);
    if (which === 'empty' && !args.keep) await admin.command({ query: `DROP DATABASE IF EXISTS ${db}` });
  }
  const ratio = median(rates.loaded) / median(rates.empty);
  say(`ingest into ${ROWS.toLocaleString()} rows / into an empty table: ${ratio.toFixed(2)} (target >= 0.9)`);
  await ch.close();
  if (!args.keep) {
    await admin.command({ query: `DROP DATABASE IF EXISTS ${loadedDb}` });
    const k = new Kafka({ clientId: 'readback', brokers: ['127.0.0.1:9092'], logLevel: logLevel.NOTHING }).admin();
    await k.connect();
    await k.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await k.disconnect();
  }
  await admin.close();
}

async function waitMutations(ch: Ch): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const [m] = await ch
      .query({ query: 'SELECT count() AS n FROM system.mutations WHERE database = currentDatabase() AND is_done = 0', format: 'JSONEachRow' })
      .then((r) => r.json<{ n: string }>());
    if (Number(m?.n) === 0) return;
    await new Promise((r) => setTimeout(r, 500));
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`readback: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
