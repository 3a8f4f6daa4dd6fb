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
import { createClickHouse } from '../../src/clickhouse/client.js';
import { migrate } from '../../src/migrate/migrate.js';
import { latestViolations, verdictCounts } from '../../src/read/chain-reads.js';
import { createRedis } from '../../src/jobs/redis.js';
import { migratorSettings } from '../../src/config/clickhouse.js';
import { pruneChainFlags, recomputeChainFlags } from '../../src/rollups/chain.js';
import type { RollupDeps } from '../../src/rollups/deps.js';
import { rebuild, sweep } from '../../src/rollups/rollups.js';
import { command, query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { runCli, sleep } from '../support/processes.js';

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

/** chain_violations_now (0021): the kept flags and the loops stored since the mark read live. */
async function violationsNow(): Promise<unknown[]> {
  return query(ctx, `SELECT ${COLUMNS} FROM chain_violations_now ${ORDER}`);
}
/** The kept flags alone (each loop's highest committed version), whatever was stored since. */
async function violationsKept(): Promise<unknown[]> {
  return query(ctx, `SELECT ${COLUMNS} FROM chain_flags WHERE (loop_id, version) IN (SELECT loop_id, current_version FROM chain_flag_current) ${ORDER}`);
}
/** The loops chain_violations_now reads live. */
async function liveLoops(): Promise<string[]> {
  return (await query<{ loop_id: string }>(ctx, 'SELECT loop_id FROM chain_loops_changed ORDER BY loop_id')).map((r) => r.loop_id);
}

async function assertSameAsFinal(when: string): Promise<void> {
  const final = await violationsFinal();
  assert.deepEqual(await violationsView(), final, `chain_violations = FINAL (${when})`);
  assert.deepEqual(await violationsNow(), final, `chain_violations_now = FINAL (${when})`);
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    assert.deepEqual(await verdictCounts(ch), await countsFinal(), `verdict counts = FINAL (${when})`);
    for (const limit of [0, 3, 1000]) assert.deepEqual(await latestViolations(ch, limit), await latestFinal(limit), `latest ${limit} = FINAL (${when})`);
  } finally {
    await ch.close();
  }
}

/** Inserts again, as one insert, the stored rows `where` picks, with this verdict and ingest time. */
async function copy(where: string, verdict: string, ingestedAt: string): Promise<void> {
  const cols = await query<{ name: string; default_type: string }>(ctx, 'DESCRIBE TABLE envelopes');
  // Every stored column; the facts are ALIAS columns over the slots (0022), which an insert cannot name.
  const names = cols.filter((c) => c.default_type !== 'ALIAS').map((c) => c.name);
  const select = names.map((n) => (n === 'verdict' ? `${verdict} AS verdict` : n === 'ingested_at' ? `toDateTime('${ingestedAt}', 'UTC') AS ingested_at` : n)).join(', ');
  await command(ctx, `INSERT INTO envelopes (${names.join(', ')}) SELECT ${select} FROM envelopes WHERE ${where}`);
}

test('the stored corpus has every verdict kind, and the reads equal FINAL', async () => {
  const verdicts = (await countsFinal()).map((c) => c.verdict);
  for (const v of ['ok', 'mismatch', 'gap', 'fork', 'regression', 'time_regression', 'malformed']) assert.ok(verdicts.includes(v), `${v} stored (${verdicts.join(', ')})`);
  await assertSameAsFinal('as ingested, before any sweep');
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
  await assertSameAsFinal('copies unmerged');

  await command(ctx, 'SYSTEM START MERGES envelopes');
  await command(ctx, 'OPTIMIZE TABLE envelopes FINAL');
  // Merges are per partition: the copies in 2020's and 2099's partitions stay.
  await assertSameAsFinal('merged');
  await command(ctx, "ALTER TABLE envelopes DROP PARTITION 202001");
  await command(ctx, "ALTER TABLE envelopes DROP PARTITION 209901");
  await assertSameAsFinal('merged, the other months dropped');
});

const deps = (ch: ReturnType<typeof createClickHouse>, redis: ReturnType<typeof createRedis>): RollupDeps => ({
  ch,
  redis,
  prefix: ctx.config.redis.queuePrefix,
  scanLoops: ctx.config.rollups.scanLoops,
  log,
});

/** Inserts again one stored row of this key, with this verdict, stored at `at` (Unix seconds). */
async function copyAt(r: { loop_id: string; seq: string }, verdict: string, at: number): Promise<void> {
  await copy(`loop_id = '${r.loop_id}' AND seq = ${r.seq}`, verdict, new Date(at * 1000).toISOString().slice(0, 19).replace('T', ' '));
}

test('the kept chain flags (0021): after a sweep, with rows stored since, a stale recompute, a rebuild: the reads equal FINAL, and read the kept rows', async () => {
  // Margin 0: a loop is read live when it has a row stored at or after the
  // sweep's newest stamp; the stamps below are set apart by seconds.
  const LATE_MS = 0;
  const ch = createClickHouse(ctx.config.clickhouse);
  const redis = createRedis(ctx.config.redis.url);
  try {
    const sweepNow = async (): Promise<void> => {
      const r = await sweep(deps(ch, redis), LATE_MS);
      assert.equal(r.skipped, undefined, 'the sweep ran');
    };
    const [stamp] = await query<{ t: string }>(ctx, 'SELECT toUInt32(max(ingested_at)) AS t FROM envelopes');
    let at = Number(stamp?.t) + 2;
    // Before any chain-flag mark: every loop is live.
    const loops = await query<{ loop_id: string }>(ctx, 'SELECT DISTINCT loop_id FROM envelopes ORDER BY loop_id');
    assert.equal((await liveLoops()).length, loops.length, 'no mark: every loop read live');

    // One row stored after the rest (an identical copy): after the sweep only its loop is live.
    const okKeys = await query<{ loop_id: string; seq: string }>(ctx, `SELECT loop_id, seq FROM envelopes FINAL WHERE verdict = 'ok' AND kind_class = 'ModelCalled' ${ORDER}`);
    const marker = okKeys[okKeys.length - 1]!;
    await copyAt(marker, 'verdict', at);
    await sweepNow();
    assert.deepEqual(await liveLoops(), [marker.loop_id], 'after the sweep: only the loop stored at its newest stamp is live');
    assert.deepEqual(await violationsKept(), await violationsFinal(), 'the kept flags = FINAL after the sweep');
    await assertSameAsFinal('after a sweep');

    // The kept rows are what is read: a row planted in chain_flags under an
    // unchanged loop's current version shows in the view and the counts.
    const kept = await query<{ loop_id: string; seq: string; verdict: string; version: string }>(
      ctx,
      `SELECT loop_id, seq, verdict, current_version AS version FROM chain_flags ANY INNER JOIN chain_flag_current USING loop_id WHERE version = current_version AND verdict IN ('mismatch', 'gap', 'time_regression') AND loop_id != '${marker.loop_id}' ${ORDER}`,
    );
    const seenLoops = new Set<string>();
    const flagged = kept.filter((r) => !seenLoops.has(r.loop_id) && seenLoops.add(r.loop_id));
    assert.ok(flagged.length >= 3, 'kept flags of three unchanged loops');
    const planted = flagged[0]!;
    await command(
      ctx,
      `INSERT INTO chain_flags (loop_id, version, seq, verdict, detail, kafka_topic, kafka_partition, kafka_offset) VALUES ('${planted.loop_id}', ${planted.version}, 999999, 'mismatch', 'planted', 'planted', 0, 0)`,
    );
    const now = (await violationsNow()) as { seq: string; detail: string }[];
    assert.ok(now.some((r) => r.detail === 'planted'), 'the planted kept row is read (the loop is not read live)');
    assert.equal(now.length, (await violationsFinal()).length + 1);
    const counts = await verdictCounts(ch);
    const mismatch = (c: readonly { verdict: string; envelopes: bigint }[]): bigint => c.find((r) => r.verdict === 'mismatch')?.envelopes ?? 0n;
    assert.equal(mismatch(counts), mismatch(await countsFinal()) + 1n, 'report counts the kept rows');
    // `rollups rebuild` recomputes every loop's flags: the planted row is gone.
    await rebuild(deps(ch, redis), { from: 0, until: 4_102_444_800, everything: true, lateMs: LATE_MS });
    assert.deepEqual(await violationsKept(), await violationsFinal(), 'the kept flags = FINAL after a rebuild');
    await assertSameAsFinal('after a rebuild');

    // Stored after the sweep, each changing an unchanged loop's flags: the
    // 'ok' copy of a flagged key landing later (its flag disappears) and a
    // flagged copy of an 'ok' key (one appears). Read live until the next sweep.
    at += 2;
    const dropped = flagged[1]!;
    const raised = okKeys.find((k) => k.loop_id !== marker.loop_id && !seenLoops.has(k.loop_id))!;
    await copyAt(dropped, "'ok'", at);
    await copyAt(raised, "'mismatch'", at);
    assert.notDeepEqual(await violationsKept(), await violationsFinal(), 'the kept flags are stale for the loops stored since');
    assert.deepEqual(await liveLoops(), [marker.loop_id, dropped.loop_id, raised.loop_id].sort(), 'those loops are live (and the one stored at the mark)');
    await assertSameAsFinal('rows stored after the sweep');
    await sweepNow();
    assert.deepEqual(await violationsKept(), await violationsFinal(), 'the next sweep keeps the flag dropped and the one raised');
    await assertSameAsFinal('after the next sweep');

    // A stale recompute: it reads the loop, then a row changes it and a sweep
    // (a higher version) recomputes it; the stale one commits last, lower.
    const [top] = await query<{ v: string }>(ctx, 'SELECT max(version) AS v FROM chain_flag_loops');
    const stale = flagged[2]!;
    let readDone!: () => void;
    const read = new Promise<void>((resolve) => (readDone = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const staleRun = recomputeChainFlags(deps(ch, redis), [stale.loop_id], {
      version: BigInt(top!.v),
      check: async () => {
        readDone();
        await released;
      },
    });
    await read;
    at += 2;
    await copyAt(stale, "'ok'", at);
    await sweepNow();
    release();
    await staleRun;
    const [committed] = await query<{ n: string }>(ctx, `SELECT count() AS n FROM chain_flag_loops WHERE loop_id = '${stale.loop_id}' AND version = ${top!.v}`);
    assert.ok(Number(committed?.n) >= 1, 'the stale recompute committed');
    assert.deepEqual(await violationsKept(), await violationsFinal(), 'a stale recompute (lower version) does not win');
    await assertSameAsFinal('after a stale recompute');

    // Compaction drops every kept flag below its loop's committed version
    // (each sweep wrote a loop's flags again), keeps a recompute's still
    // uncommitted rows (above it), and the reads stay FINAL's.
    const below = async (): Promise<number> =>
      Number((await query<{ n: string }>(ctx, 'SELECT count() AS n FROM chain_flags ANY INNER JOIN chain_flag_current USING loop_id WHERE version < current_version'))[0]?.n);
    assert.ok((await below()) > 0, 'repeated sweeps left flags below their loop’s committed version');
    const [current] = await query<{ loop_id: string; v: string }>(ctx, `SELECT loop_id, toString(current_version) AS v FROM chain_flag_current WHERE loop_id = '${flagged[0]!.loop_id}'`);
    const inFlight = BigInt(current!.v) + 100n;
    await command(
      ctx,
      `INSERT INTO chain_flags (loop_id, version, seq, verdict, detail, kafka_topic, kafka_partition, kafka_offset) VALUES ('${current!.loop_id}', ${inFlight}, 1, 'mismatch', 'in flight', 'x', 0, 0)`,
    );
    const admin = createClickHouse(migratorSettings(ctx.config.clickhouse));
    try {
      assert.ok((await pruneChainFlags(ch, { ch: admin, cluster: undefined })) > 0, 'loops were pruned');
    } finally {
      await admin.close();
    }
    for (let i = 0; (await below()) > 0; i++) {
      if (i >= 600) assert.fail(`flags below the committed versions left after 60 s: ${JSON.stringify(await query(ctx, 'SELECT * FROM system.mutations WHERE database = currentDatabase() AND is_done = 0'))}`);
      await sleep(100);
    }
    const inFlightRows = await query<{ n: string }>(ctx, `SELECT count() AS n FROM chain_flags WHERE loop_id = '${current!.loop_id}' AND version = ${inFlight}`);
    assert.equal(inFlightRows[0]?.n, '1', 'the rows of a recompute not committed yet stay');
    assert.deepEqual(await violationsKept(), await violationsFinal(), 'after pruning: the kept flags = FINAL');
    await assertSameAsFinal('after pruning');
  } finally {
    redis.disconnect();
    await ch.close();
  }
});
