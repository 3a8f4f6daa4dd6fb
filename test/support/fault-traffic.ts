/**
 * The traffic of the fault tests (a broker, ClickHouse or the process going
 * away mid-ingest): generated chains with planted violations on a test
 * context's envelope topic, and the check that each (loop, seq) was stored
 * exactly once and each planted violation recorded once.
 */
import assert from 'node:assert/strict';
import { Partitioners } from 'kafkajs';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { generateTraffic, type ExpectedTraffic } from '../../src/demo/traffic/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { migrate } from '../../src/migrate/migrate.js';
import { createKafka, ensureTopics, TOPIC_CONFIG } from '../../src/kafka/client.js';
import { query } from './clickhouse.js';
import { FAULT_THREADS, testContext, type TestContext } from './context.js';
import { runCli, sleep } from './processes.js';

const log = createLogger('warn');

export interface FaultTraffic {
  readonly ctx: TestContext;
  readonly expected: ExpectedTraffic;
  /** Produces the records held back (see `holdBack`). */
  produceRest(): Promise<void>;
}

/**
 * A context (its cleanup is the caller's), migrated, whose envelope topic
 * holds `loops` chains of 40 envelopes but the last `holdBack` records.
 */
export async function faultTraffic(name: string, loops: number, overrides: Record<string, string> = {}, holdBack = 0): Promise<FaultTraffic> {
  const ctx = await testContext(name, { AGENTLEDGER_BATCH_MAX_ROWS: '1000', AGENTLEDGER_BATCH_MAX_WAIT_MS: '200', ...FAULT_THREADS, ...overrides });
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  const kafka = createKafka(ctx.config.kafka, log);
  const topic = ctx.config.kafka.topics.envelopes;
  await ensureTopics(kafka, [{ topic, numPartitions: 4, configEntries: TOPIC_CONFIG }]);
  const traffic = generateTraffic({ loops, envelopesPerLoop: 40, seed: loops, payloadBytes: 600, violations: { fork: 3, gap: 3, mismatch: 3 } });
  const records = [...traffic.records];
  const send = async (from: number, to: number): Promise<void> => {
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    for (let i = from; i < to; i += 2000) {
      await producer.send({ topic, acks: -1, messages: records.slice(i, Math.min(i + 2000, to)).map((r) => ({ key: r.key, value: r.value })) });
    }
    await producer.disconnect();
  };
  const split = records.length - holdBack;
  await send(0, split);
  return { ctx, expected: traffic.expected, produceRest: () => send(split, records.length) };
}

export async function assertExactlyOnce(ctx: TestContext, expected: ExpectedTraffic): Promise<void> {
  const [keys] = await query<{ rows: string; keys: string }>(
    ctx,
    "SELECT count() AS rows, uniqExact(loop_id, seq) AS keys FROM envelopes WHERE verdict NOT IN ('fork', 'malformed')",
  );
  assert.equal(Number(keys?.rows), expected.stored.length, 'no (loop, seq) stored twice');
  assert.equal(Number(keys?.keys), expected.stored.length, 'every (loop, seq) stored');
  const flagged = await query<{ n: string }>(ctx, "SELECT count() AS n FROM chain_violations WHERE verdict != 'malformed'");
  assert.equal(Number(flagged[0]?.n), expected.violations.length, 'each planted violation recorded once');
}

/** One more `ingest` to the end of the topic, which must exit 0. */
export async function finish(ctx: TestContext, overrides: Record<string, string> = {}): Promise<void> {
  const last = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '4000'], { ...ctx.env, ...overrides });
  assert.equal(await last.exited, 0, last.stderr());
}

/** Waits until the context's envelopes table holds at least `atLeast` rows (`seconds` at most, 30 unless told). */
export async function waitForRows(ctx: TestContext, atLeast: number, seconds = 30): Promise<number> {
  for (let i = 0; i < seconds * 10; i++) {
    const [r] = await query<{ n: string }>(ctx, 'SELECT count() AS n FROM envelopes').catch(() => [{ n: '0' }]);
    const n = Number(r?.n ?? 0);
    if (n >= atLeast) return n;
    await sleep(100);
  }
  throw new Error(`fewer than ${atLeast} rows after ${seconds} s`);
}

/** Waits until the context's envelopes table holds rows and its count has held still for 1.5 s: what was produced so far is stored. */
export async function waitForQuiet(ctx: TestContext): Promise<number> {
  let rows = await waitForRows(ctx, 1);
  for (let still = 0; still < 15; ) {
    await sleep(100);
    const now = await waitForRows(ctx, rows);
    still = now === rows ? still + 1 : 0;
    rows = now;
  }
  return rows;
}
