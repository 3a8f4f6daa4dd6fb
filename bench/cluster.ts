/**
 * Ingest throughput on the local cluster (issue 24): one, two and three
 * `agentledger ingest` processes in one group, against the 3-broker Kafka
 * (127.0.0.1:19092–19094) and the four ClickHouse 18.16 servers (two shards
 * of two replicas, HTTP 18123–18126), started by `infra/stack.sh up --cluster`.
 *
 *   node dist/bench/cluster.js [--loops 2000] [--envelopes 50] [--partitions 6] [--rounds 1] [--keep]
 *
 * 1. produce-demo writes loops × envelopes (~1 KB each) to a fresh topic of
 *    --partitions partitions, three replicas each (not timed).
 * 2. Per round, for 1, 2 and 3 processes (order rotated per round): a fresh
 *    database migrated on the cluster (not timed) and a new group; the
 *    processes start together with `--idle-exit-ms 5000`; the time is from
 *    their start until SELECT count() FROM envelopes (through the
 *    Distributed table, polled every 0.5 s) equals the records produced.
 * Prints envelopes/s per process count and each count's ratio to one
 * process, medians over the rounds. Not a test: no assertion, exit 0 unless
 * a step fails. Everything shares this machine's cores, the cluster's seven
 * servers included.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { MIGRATIONS_DIR } from '../src/cli/migrate.js';
import { parseConfig } from '../src/config/index.js';
import { createLogger } from '../src/observability/logger.js';
import { createClickHouse } from '../src/clickhouse/client.js';
import { migrate } from '../src/migrate/migrate.js';
import { median, sayer, wholeOption } from './support.js';

const { values: args } = parseArgs({
  options: {
    loops: { type: 'string', default: '2000' },
    envelopes: { type: 'string', default: '50' },
    partitions: { type: 'string', default: '6' },
    rounds: { type: 'string', default: '1' },
    keep: { type: 'boolean', default: false },
  },
});
const num = (name: string, text: string | undefined): number => wholeOption('cluster', name, text);
const LOOPS = num('loops', args.loops);
const PER_LOOP = num('envelopes', args.envelopes);
const PARTITIONS = num('partitions', args.partitions);
const ROUNDS = num('rounds', args.rounds);
const RECORDS = LOOPS * PER_LOOP;
const TS = `${Date.now()}_${randomBytes(2).toString('hex')}`;
const TOPIC = `bench.cluster.${TS}`;
const BROKERS = '127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094';
const say = sayer('cluster');
const log = createLogger('warn');
const BIN = new URL('../../bin/agentledger.js', import.meta.url).pathname;

/** The test user may create a database; agentledger's own writer has no DDL. */
function env(database: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '',
    AGENTLEDGER_KAFKA_BROKERS: BROKERS,
    AGENTLEDGER_ENVELOPE_TOPIC: TOPIC,
    AGENTLEDGER_CRAZE_TOPIC: `${TOPIC}.craze`,
    AGENTLEDGER_DLQ_TOPIC: `${TOPIC}.dlq`,
    AGENTLEDGER_CLICKHOUSE_URL: 'http://127.0.0.1:18123',
    AGENTLEDGER_CLICKHOUSE_CLUSTER: 'agentledger',
    AGENTLEDGER_CLICKHOUSE_USER: 'agentledger_test',
    AGENTLEDGER_CLICKHOUSE_PASSWORD: 'agentledger_test',
    AGENTLEDGER_CLICKHOUSE_DATABASE: database,
    AGENTLEDGER_ALERT_EVALUATE_ON_INGEST: 'false',
    AGENTLEDGER_METRICS_PORT: '0',
    AGENTLEDGER_LOG_LEVEL: 'warn',
    AGENTLEDGER_LOG_FORMAT: 'text',
    ...extra,
  };
}

function start(cli: string[], e: Record<string, string>): { child: ChildProcess; done: Promise<{ code: number | null; err: string }> } {
  const child = spawn(process.execPath, [BIN, ...cli], { env: e, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  return { child, done: new Promise((resolve) => child.on('exit', (code) => resolve({ code, err }))) };
}

async function rate(processes: number, round: number): Promise<number> {
  const db = `bench_cluster_${TS}_${processes}_${round}`;
  const e = env(db, { AGENTLEDGER_KAFKA_GROUP_ID: `bench.cluster.${TS}.${processes}.${round}` });
  const config = parseConfig(e);
  await migrate(config.clickhouse, MIGRATIONS_DIR, log);
  const ch = createClickHouse(config.clickhouse);
  try {
    const started = performance.now();
    const runs = Array.from({ length: processes }, () => start(['ingest', '--no-migrate', '--idle-exit-ms', '5000'], e));
    let stored = 0;
    let seconds = 0;
    for (;;) {
      const [row] = await ch.query({ query: 'SELECT count() AS n FROM envelopes', format: 'JSONEachRow' }).then((r) => r.json<{ n: string }>());
      stored = Number(row?.n ?? 0);
      if (stored >= RECORDS) {
        seconds = (performance.now() - started) / 1000;
        break;
      }
      if ((performance.now() - started) / 1000 > 900) throw new Error(`${processes} processes: ${stored} of ${RECORDS} stored after 900 s`);
      await new Promise((r) => setTimeout(r, 500));
    }
    for (const r of await Promise.all(runs.map((x) => x.done))) if (r.code !== 0) throw new Error(`ingest exited ${r.code}: ${r.err}`);
    if (stored !== RECORDS) throw new Error(`${processes} processes stored ${stored} of ${RECORDS}`);
    return RECORDS / seconds;
  } finally {
    if (!args.keep) await ch.command({ query: `DROP DATABASE IF EXISTS ${db} ON CLUSTER agentledger` }).catch(() => undefined);
    await ch.close();
  }
}

async function main(): Promise<void> {
  const kafka = new Kafka({ clientId: 'bench-cluster', brokers: BROKERS.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3 }] });
  say(`producing ${RECORDS.toLocaleString()} envelopes (${LOOPS} loops x ${PER_LOOP}, ~1 KB) to ${TOPIC}, ${PARTITIONS} partitions, 3 replicas`);
  const produced = start(['produce-demo', '--loops', String(LOOPS), '--envelopes', String(PER_LOOP), '--seed', '7', '--payload-bytes', '1024'], env('default'));
  const p = await produced.done;
  if (p.code !== 0) throw new Error(`produce-demo failed: ${p.err}`);
  const counts = [1, 2, 3];
  const rates = new Map<number, number[]>(counts.map((c) => [c, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < counts.length; i++) {
      const processes = counts[(i + round) % counts.length]!;
      const r = await rate(processes, round);
      rates.get(processes)!.push(r);
      say(`round ${round + 1}: ${processes} ingest process${processes > 1 ? 'es' : ''}: ${Math.round(r).toLocaleString()} envelopes/s`);
    }
  }
  const one = median(rates.get(1)!);
  for (const c of counts) {
    const m = median(rates.get(c)!);
    say(`${c} process${c > 1 ? 'es' : ''}: ${Math.round(m).toLocaleString()} envelopes/s (median of ${ROUNDS}), ${(m / one).toFixed(2)}x one process`);
  }
  if (!args.keep) await admin.deleteTopics({ topics: [TOPIC] }).catch(() => undefined);
  await admin.disconnect();
}

main().catch((err: unknown) => {
  console.error(`[cluster] failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
