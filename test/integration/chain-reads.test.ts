/**
 * The chain-verdict reads without `envelopes FINAL` over every envelope
 * (migration 0019's chain_violations, `report`'s verdict counts and latest
 * violations) against the FINAL reads they replace, on the real stack.
 *
 * The corpus: generated chains with every planted kind (mismatch, gap, fork,
 * time regression, reorder, duplicate) and malformed records, through Kafka
 * and `ingest`; then, merges stopped, copies of stored keys inserted again as
 * a retried insert would (same key, same Kafka record), some judged
 * differently: a key stored 'ok' whose later copy is flagged and a flagged
 * key whose later copy is 'ok' (the two insertion orders), identical copies
 * of a flagged and of an 'ok' key, and copies in another month's partition
 * (FINAL merges across partitions and keeps the copy of the later partition,
 * whichever was inserted last). Every read must equal its FINAL reference,
 * before and after the merges collapse the copies; the counts go without FINAL
 * exactly when no two parts can hold a key twice (as ingested, and merged once
 * the other months' copies, which merges never reach, are dropped).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { generateTraffic, malformedRecords } from '../../src/demo/traffic/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse } from '../../src/sink/clickhouse/client.js';
import { migrate } from '../../src/sink/clickhouse/migrate.js';
import { latestViolations, partsMayDuplicate, verdictCounts } from '../../src/sink/clickhouse/chain-reads.js';
import { queryRows } from '../../src/sink/clickhouse/sql.js';
import { command, query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { runCli } from '../support/processes.js';

const log = createLogger('error');
let ctx: TestContext;

const COLUMNS = 'loop_id, seq, verdict, detail, kind, time, time_text, carried_hash, expected_hash, payload, evidence, kafka_topic, kafka_partition, kafka_offset, ingested_at';

/** The 0005 definition: the reference every non-FINAL read is held to. */
const FINAL_VIOLATIONS = `SELECT loop_id, seq, verdict, detail, kind, time, time_text, hash AS carried_hash, computed_hash AS expected_hash,
       payload, evidence, kafka_topic, kafka_partition, kafka_offset, ingested_at
FROM envelopes FINAL WHERE verdict != 'ok'`;

const ORDER = 'ORDER BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset';

before(async () => {
  ctx = await testContext('chain_reads');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  const traffic = generateTraffic({ loops: 40, envelopesPerLoop: 12, seed: 27, payloadBytes: 64, violations: { mismatch: 2, gap: 2, fork: 2, timeRegression: 2, reorder: 2, duplicate: 2 } });
  await produceEnvelopes(ctx, [...traffic.records, ...malformedRecords().map((r) => ({ key: r.key ?? 'malformed', value: r.value }))]);
  const ingest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], ctx.env);
  assert.equal(await ingest.exited, 0, ingest.stderr());
});
after(async () => {
  await command(ctx, 'SYSTEM START MERGES envelopes').catch(() => undefined);
  await ctx.cleanup();
});

async function violationsView(): Promise<unknown[]> {
  return query(ctx, `SELECT ${COLUMNS} FROM chain_violations ${ORDER}`);
}
async function violationsFinal(): Promise<unknown[]> {
  return query(ctx, `SELECT ${COLUMNS} FROM (${FINAL_VIOLATIONS}) ${ORDER}`);
}
async function countsFinal(): Promise<{ verdict: string; envelopes: bigint; loops: bigint }[]> {
  const rows = await query<{ verdict: string; envelopes: string; loops: string }>(ctx, 'SELECT verdict, count() AS envelopes, uniqExact(loop_id) AS loops FROM envelopes FINAL GROUP BY verdict ORDER BY verdict');
  return rows.map((r) => ({ verdict: r.verdict, envelopes: BigInt(r.envelopes), loops: BigInt(r.loops) }));
}
async function latestFinal(limit: number): Promise<unknown[]> {
  const rows = await query<{ loop_id: string; seq: string; verdict: string; detail: string; time_text: string }>(
    ctx,
    `SELECT loop_id, seq, verdict, detail, time_text FROM (${FINAL_VIOLATIONS}) ORDER BY ingested_at DESC, loop_id, seq, kafka_topic, kafka_partition, kafka_offset LIMIT ${limit}`,
  );
  return rows.map((r) => ({ loopId: r.loop_id, seq: BigInt(r.seq), verdict: r.verdict, detail: r.detail, time: r.time_text }));
}

/** Whether verdictCounts reads FINAL here: the parts' offset ranges overlap. */
async function countsNeedFinal(ch: ReturnType<typeof createClickHouse>): Promise<boolean> {
  const ranges = await queryRows<{ part: string; kafka_partition: number; first_offset: string; last_offset: string }>(ch, 'envelope_part_ranges');
  const parts = await queryRows<{ parts: string[] }>(ch, 'chain_summary');
  return partsMayDuplicate(
    ranges.map((r) => ({ part: r.part, partition: Number(r.kafka_partition), first: BigInt(r.first_offset), last: BigInt(r.last_offset) })),
    new Set(parts.flatMap((r) => r.parts)),
  );
}

async function assertSameAsFinal(when: string, needsFinal: boolean): Promise<void> {
  assert.deepEqual(await violationsView(), await violationsFinal(), `chain_violations = FINAL (${when})`);
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    assert.equal(await countsNeedFinal(ch), needsFinal, `verdict counts ${needsFinal ? 'from FINAL' : 'without FINAL'} (${when})`);
    assert.deepEqual(await verdictCounts(ch), await countsFinal(), `verdict counts = FINAL (${when})`);
    for (const limit of [0, 3, 1000]) assert.deepEqual(await latestViolations(ch, limit), await latestFinal(limit), `latest ${limit} = FINAL (${when})`);
  } finally {
    await ch.close();
  }
}

/** Inserts again, as one insert, the stored rows `where` picks, with this verdict and ingest time. */
async function copy(where: string, verdict: string, ingestedAt: string): Promise<void> {
  const cols = await query<{ name: string }>(ctx, 'DESCRIBE TABLE envelopes');
  const names = cols.map((c) => c.name);
  const select = names.map((n) => (n === 'verdict' ? `${verdict} AS verdict` : n === 'ingested_at' ? `toDateTime('${ingestedAt}', 'UTC') AS ingested_at` : n)).join(', ');
  await command(ctx, `INSERT INTO envelopes (${names.join(', ')}) SELECT ${select} FROM envelopes WHERE ${where}`);
}

test('the stored corpus has every verdict kind, and the reads equal FINAL', async () => {
  const verdicts = (await countsFinal()).map((c) => c.verdict);
  for (const v of ['ok', 'mismatch', 'gap', 'fork', 'regression', 'time_regression', 'malformed']) assert.ok(verdicts.includes(v), `${v} stored (${verdicts.join(', ')})`);
  await assertSameAsFinal('as ingested', false);
});

test('copies of keys, judged differently, in either order and in two partitions: the reads equal FINAL; after the merges too', async () => {
  await command(ctx, 'SYSTEM STOP MERGES envelopes');
  const ok = await query<{ loop_id: string; seq: string }>(ctx, `SELECT loop_id, seq FROM envelopes FINAL WHERE verdict = 'ok' AND kind_class = 'ModelCalled' ${ORDER} LIMIT 5`);
  const flagged = await query<{ loop_id: string; seq: string; verdict: string }>(ctx, `SELECT loop_id, seq, verdict FROM envelopes FINAL WHERE verdict IN ('mismatch', 'gap', 'time_regression') ${ORDER}`);
  assert.ok(ok.length === 5 && flagged.length >= 3, 'keys to copy');
  const key = (r: { loop_id: string; seq: string }): string => `loop_id = '${r.loop_id}' AND seq = ${r.seq}`;
  const now = (await query<{ t: string }>(ctx, 'SELECT toString(max(ingested_at)) AS t FROM envelopes'))[0]!.t;
  // 'ok' first, a flagged copy later: FINAL keeps the flagged one.
  await copy(key(ok[0]!), "'mismatch'", now);
  // Flagged first, an 'ok' copy later: FINAL keeps 'ok', no violation.
  await copy(key(flagged[0]!), "'ok'", now);
  // Identical copies, flagged and 'ok': one each.
  await copy(key(flagged[1]!), 'verdict', now);
  await copy(key(ok[1]!), 'verdict', now);
  // Another month: a flagged copy inserted last but in an earlier partition
  // loses to the stored 'ok' one; an 'ok' copy in a later partition wins over
  // a stored flagged one; a flagged copy in a later partition wins over 'ok'.
  await copy(key(ok[2]!), "'regression'", '2020-01-01 00:00:00');
  await copy(key(flagged[2]!), "'ok'", '2099-01-01 00:00:00');
  await copy(key(ok[3]!), "'gap'", '2099-01-01 00:00:00');
  // And a copy of the copy: three copies of one key.
  await copy(key(ok[4]!), "'mismatch'", now);
  await copy(key(ok[4]!), "'ok'", now);

  const [copies] = await query<{ n: string }>(ctx, 'SELECT count() - uniqExact(loop_id, seq, kafka_topic, kafka_partition, kafka_offset) AS n FROM envelopes');
  assert.equal(Number(copies?.n), 10, 'the copies are stored beside the originals, unmerged');
  const final = await violationsFinal();
  const has = (r: { loop_id: string; seq: string }): boolean => final.some((v) => (v as { loop_id: string }).loop_id === r.loop_id && String((v as { seq: string }).seq) === String(r.seq));
  // The reference itself says what the cases mean (FINAL's choice).
  assert.ok(has(ok[0]!), 'ok then flagged: flagged');
  assert.ok(!final.some((v) => (v as { loop_id: string }).loop_id === flagged[0]!.loop_id && String((v as { seq: string }).seq) === flagged[0]!.seq && (v as { verdict: string }).verdict === flagged[0]!.verdict), 'flagged then ok: ok');
  assert.ok(!has(ok[2]!), 'a flagged copy in an earlier partition loses');
  assert.ok(has(ok[3]!), 'a flagged copy in a later partition wins');
  assert.ok(!has(ok[4]!), 'ok, flagged, ok: ok');
  await assertSameAsFinal('copies unmerged', true);

  await command(ctx, 'SYSTEM START MERGES envelopes');
  await command(ctx, 'OPTIMIZE TABLE envelopes FINAL');
  // Merges are per partition: the copies in 2020's and 2099's partitions stay,
  // so the counts still need FINAL; without those copies they would not.
  await assertSameAsFinal('merged', true);
  await command(ctx, "ALTER TABLE envelopes DROP PARTITION 202001");
  await command(ctx, "ALTER TABLE envelopes DROP PARTITION 209901");
  await assertSameAsFinal('merged, the other months dropped', false);
});
