/**
 * Hour rollups (issue 10, migration 0013) against the real stack: generated
 * loop trees, forks whose replays arrive before their ForkedFrom, children
 * before parents, a tampered call, redeliveries and a model past 2^64
 * picodollars go through Kafka and `ingest` while `agentledger worker` sweeps
 * every 300 ms — the worker and the consumer SIGKILLed at random instants and
 * restarted — and the committed rollups must equal the live views and the
 * generator's own totals; then again after `rollups rebuild`, and with
 * uncommitted garbage of a higher version planted in the rollup table.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { generateSpendTraffic } from '../../src/demo/traffic/index.js';
import { createRedis } from '../../src/jobs/redis.js';
import { ROLLUP_TABLES } from '../../src/rollups/recompute.js';
import { createLogger } from '../../src/observability/logger.js';
import { migrate } from '../../src/migrate/migrate.js';
import { querySql } from '../../src/rollups/queries.js';
import { renderSql } from '../../src/clickhouse/sql.js';
import { command, query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { chain } from '../support/envelope-chain.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { BIN, prng, runCli, sleep, type Running } from '../support/processes.js';

const log = createLogger('error');
let ctx: TestContext;
const traffic = generateSpendTraffic({ seed: 11, roots: 8 });
const random = prng(1101);

/** A Decimal128 read exactly on 18.16 too (whose toString breaks from about 10^21): as two parts under 10^20. */
const exact = (x: string): string => `toString(intDiv(${x}, toDecimal128('1000000000000000000', 0))) AS ${x}_hi, toString(${x} - intDiv(${x}, toDecimal128('1000000000000000000', 0)) * toDecimal128('1000000000000000000', 0)) AS ${x}_lo`;
const joined = (r: Record<string, string>, x: string): string => (BigInt(r[`${x}_hi`]!) * 10n ** 18n + BigInt(r[`${x}_lo`]!)).toString();

function cli<T>(args: string[]): T {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: { PATH: process.env['PATH'] ?? '', ...ctx.env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as T;
}

const sweepEnv = (): Record<string, string> => ({ ...ctx.env, AGENTLEDGER_ROLLUP_SWEEP_MS: '300', AGENTLEDGER_ROLLUP_LATE_MS: '1000' });

/**
 * Waits for a sweep that began after every row was stored (ingest has
 * exited): its version, taken before it reads, is above the counter now. A
 * sweep whose newest ingest stamp equals the last row's is not enough: a
 * flush stamped the same second can land after that sweep read.
 */
async function caughtUp(worker: Running): Promise<void> {
  const redis = createRedis(ctx.config.redis.url);
  let now: bigint;
  try {
    now = BigInt((await redis.get(`${ctx.config.redis.queuePrefix}:rollups:version`)) ?? '0');
  } finally {
    redis.disconnect();
  }
  // After a SIGKILL the next worker waits for BullMQ to find the dead one's
  // sweep stalled (its lock, 5 s, then the stalled check, every 2.5 s:
  // WORKER_LOCK_OPTIONS), then for a sweep of its own.
  for (let i = 0; i < 300; i++) {
    const [r] = await query<{ v: string }>(ctx, 'SELECT toString(max(version)) AS v FROM rollup_sweeps');
    if (BigInt(r?.v ?? '0') > now) return;
    await sleep(100);
  }
  throw new Error(`no sweep began after the last row was stored, in 30 s: ${worker.stderr().slice(-3000)}`);
}

/** Per hour, source, provider and model: the committed rollups and the live view, as comparable rows. */
async function hourly(): Promise<{ rollup: string[]; live: string[] }> {
  const sums = ['calls', 'input', 'output', 'cost'];
  const rollup = await query<Record<string, string>>(
    ctx,
    `SELECT toString(hour) AS h, source, provider, model, ${sums.map(exact).join(', ')}
     FROM (SELECT hour, source, provider, model, toDecimal128(sum(calls_sum), 0) AS calls, sum(input_tokens_sum) AS input,
                  sum(output_tokens_sum) AS output, sum(cost_pico_sum) AS cost
           FROM spend_rollup_hourly GROUP BY hour, source, provider, model)`,
  );
  const live = await query<Record<string, string>>(
    ctx,
    'SELECT toString(hour) AS h, source, provider, model, toString(calls) AS n, input_tokens_sum, output_tokens_sum, cost_pico_usd FROM spend_by_hour',
  );
  const byModel = await query<Record<string, string>>(
    ctx,
    `SELECT toString(hour) AS h, source, provider, model, ${sums.map(exact).join(', ')}
     FROM (SELECT hour, source, provider, model, toDecimal128(sum(calls_sum), 0) AS calls, sum(input_tokens_sum) AS input,
                  sum(output_tokens_sum) AS output, sum(cost_pico_sum) AS cost
           FROM spend_rollup_model_hourly GROUP BY hour, source, provider, model)`,
  );
  const text = (list: Record<string, string>[]): string[] => list.map((r) => [r['h'], r['source'], r['provider'], r['model'], ...sums.map((x) => joined(r, x))].join(' ')).sort();
  assert.deepEqual(text(byModel), text(rollup), 'spend_rollup_model_hourly = spend_rollup_hourly, per hour, source, provider and model');
  return {
    rollup: text(rollup),
    live: live.map((r) => [r['h'], r['source'], r['provider'], r['model'], r['n'], r['input_tokens_sum'], r['output_tokens_sum'], r['cost_pico_usd']].join(' ')).sort(),
  };
}

/** Counted runtime cost per root and per loop name, from the rollups. */
async function byRootAndName(): Promise<{ roots: string[]; names: string[] }> {
  const roots = await query<Record<string, string>>(ctx, `SELECT root_loop_id, toString(calls) AS n, ${exact('cost_pico')} FROM top_roots WHERE source = 'runtime'`);
  const names = await query<Record<string, string>>(
    ctx,
    `SELECT loop_name, toString(n) AS n, ${exact('cost')} FROM (SELECT loop_name, sum(calls) AS n, sum(cost_pico) AS cost FROM spend_rollup_daily WHERE source = 'runtime' GROUP BY loop_name)`,
  );
  const byName = await query<Record<string, string>>(ctx, `SELECT loop_name, toString(calls) AS n, ${exact('cost_pico')} FROM spend_rollup_by_name`);
  assert.deepEqual(
    byName.map((r) => `${r['loop_name']} ${r['n']} ${joined(r, 'cost_pico')}`).sort(),
    names.map((r) => `${r['loop_name']} ${r['n']} ${joined(r, 'cost')}`).sort(),
    'spend_rollup_by_name = spend_rollup_daily per loop name',
  );
  return {
    roots: roots.map((r) => `${r['root_loop_id']} ${r['n']} ${joined(r, 'cost_pico')}`).sort(),
    names: names.map((r) => `${r['loop_name']} ${r['n']} ${joined(r, 'cost')}`).sort(),
  };
}

/** The event rollups (0015) and the live views they answer (0010), as comparable rows. */
async function events(): Promise<{ rollup: string[]; live: string[] }> {
  const rows = async (sql: string): Promise<string[]> => (await query<Record<string, string>>(ctx, sql)).map((r) => Object.values(r).join(' ')).sort();
  return {
    rollup: [
      ...(await rows("SELECT 'tool', tool, toString(sum(calls)), toString(sum(errors)) FROM tool_errors_hourly GROUP BY tool")),
      ...(await rows("SELECT 'warn', detector, toString(day), toString(warnings), toString(loops) FROM convergence_warnings_daily")),
      ...(await rows("SELECT 'sub', definition, outcome, toString(sum(subagents)) FROM subagent_outcomes_daily GROUP BY definition, outcome")),
    ],
    live: [
      ...(await rows("SELECT 'tool', tool, toString(calls), toString(errors) FROM tool_error_rates")),
      ...(await rows("SELECT 'warn', detector, toString(day), toString(warnings), toString(loops) FROM convergence_warnings")),
      ...(await rows("SELECT 'sub', definition, outcome, toString(subagents) FROM subagent_outcomes")),
    ],
  };
}

/** Per loop and per root, the reconciliation rollups (0015) and the live views (0011, 0012, 0014), as comparable rows. */
async function ledgers(): Promise<{ rollup: string[]; live: string[] }> {
  const money = ['model_cost_pico', 'model_budget_pico', 'budget_pico', 'total_spend_pico', 'child_spend_pico', 'model_minus_model_budget_pico', 'budget_minus_total_spend_pico', 'budget_minus_child_spend_pico'];
  const flags = ['has_total_spend', 'has_child_spend', 'model_disagrees', 'total_spend_disagrees', 'child_spend_disagrees', 'disagrees'];
  const tree = ['tree_model_cost_pico', 'tree_model_budget_pico', 'tree_budget_pico'];
  const rollLoops = await query<Record<string, string>>(ctx, `SELECT loop_id, ${flags.map((x) => `toString(${x}) AS ${x}`).join(', ')}, ${money.map(exact).join(', ')} FROM loop_reconciliation_rollup`);
  const liveLoops = await query<Record<string, string>>(ctx, `SELECT loop_id, ${flags.map((x) => `toString(${x}) AS ${x}`).join(', ')}, ${money.join(', ')} FROM loop_reconciliation`);
  const rollRoots = await query<Record<string, string>>(ctx, `SELECT root_loop_id, toString(loops) AS n, toString(loops_disagreeing) AS bad, ${tree.map(exact).join(', ')} FROM root_reconciliation_rollup`);
  const liveRoots = await query<Record<string, string>>(ctx, `SELECT root_loop_id, toString(loops) AS n, toString(loops_disagreeing) AS bad, ${tree.map(exact).join(', ')} FROM root_reconciliation`);
  return {
    rollup: [
      ...rollLoops.map((r) => ['loop', r['loop_id'], ...flags.map((x) => r[x]), ...money.map((x) => joined(r, x))].join(' ')),
      ...rollRoots.map((r) => ['root', r['root_loop_id'], r['n'], r['bad'], ...tree.map((x) => joined(r, x))].join(' ')),
    ].sort(),
    live: [
      ...liveLoops.map((r) => ['loop', r['loop_id'], ...flags.map((x) => r[x]), ...money.map((x) => r[x])].join(' ')),
      ...liveRoots.map((r) => ['root', r['root_loop_id'], r['n'], r['bad'], ...tree.map((x) => joined(r, x))].join(' ')),
    ].sort(),
  };
}

async function assertRollupsExact(): Promise<void> {
  const led = await ledgers();
  assert.ok(led.live.some((r) => r.startsWith('loop ') && r.split(' ')[7] === '1'), 'some loop disagrees (the tampered one)');
  assert.deepEqual(led.rollup, led.live, 'loop_reconciliation_rollup and root_reconciliation_rollup = loop_reconciliation and root_reconciliation');
  const ev = await events();
  for (const kind of ['tool', 'warn', 'sub']) assert.ok(ev.live.some((r) => r.startsWith(`${kind} `)), `the traffic has ${kind} rows`);
  assert.deepEqual(ev.rollup, ev.live, 'tool_errors_hourly, convergence_warnings_daily and subagent_outcomes_daily = tool_error_rates, convergence_warnings, subagent_outcomes');
  const { rollup, live } = await hourly();
  assert.ok(live.length > 0);
  assert.deepEqual(rollup, live, 'rollups per hour, source, provider and model = spend_by_hour');
  const { roots, names } = await byRootAndName();
  assert.deepEqual(
    roots,
    traffic.expected.roots.filter((r) => r.modelCalls > 0).map((r) => `${r.rootLoopId} ${r.modelCalls} ${r.modelCostPicoUsd}`).sort(),
    'top_roots = the generator\'s roots (each loop once, forks\' replays and unverified calls aside)',
  );
  const spendByName = cli<{ name: string; calls: number; costPicoUsd: string }[]>(['spend', '--json', '--by', 'name', '--source', 'runtime']);
  assert.deepEqual(names, spendByName.map((r) => `${r.name} ${r.calls} ${r.costPicoUsd}`).sort(), 'rollups by loop name = spend --by name');
  const tree = await query<Record<string, string>>(
    ctx,
    `SELECT loop_id, parent_loop_id, root_loop_id, toString(own_calls) AS n, ${exact('own_cost_pico')}, ${exact('subtree_cost_pico')} FROM loop_tree`,
  );
  const loops = cli<{ loopId: string; parentLoopId: string; rootLoopId: string; modelCalls: number; modelCostPicoUsd: string; subtreeModelCostPicoUsd: string }[]>(['loops', '--json']);
  assert.deepEqual(
    tree.map((r) => [r['loop_id'], r['parent_loop_id'], r['root_loop_id'], r['n'], joined(r, 'own_cost_pico'), joined(r, 'subtree_cost_pico')].join(' ')).sort(),
    loops.map((l) => [l.loopId, l.parentLoopId, l.rootLoopId, l.modelCalls, l.modelCostPicoUsd, l.subtreeModelCostPicoUsd].join(' ')).sort(),
    'loop_tree (parent, root, own and subtree cost from the rollups) = loops --json',
  );
  // Per root, the tree's ledgers: the tampered loop's root is the one flagged.
  const recon = await query<Record<string, string>>(ctx, `SELECT root_loop_id, toString(loops_disagreeing) AS bad, ${exact('tree_model_cost_pico')} FROM root_reconciliation`);
  assert.deepEqual(
    recon.filter((r) => r['bad'] !== '0').map((r) => r['root_loop_id']).sort(),
    [...new Set(traffic.expected.planted.tampered.map((t) => loops.find((l) => l.loopId === t.loopId)!.rootLoopId))].sort(),
  );
  assert.deepEqual(
    recon.filter((r) => joined(r, 'tree_model_cost_pico') !== '0').map((r) => `${r['root_loop_id']} ${joined(r, 'tree_model_cost_pico')}`).sort(),
    traffic.expected.roots.filter((r) => r.modelCalls > 0).map((r) => `${r.rootLoopId} ${r.modelCostPicoUsd}`).sort(),
  );
  const days = await query<Record<string, string>>(ctx, `SELECT toString(day) AS d, toString(n) AS n, ${exact('cost')} FROM (SELECT day, sum(calls) AS n, sum(cost_pico) AS cost FROM spend_rollup_daily WHERE source = 'runtime' GROUP BY day)`);
  assert.deepEqual(
    days.map((r) => `${r['d']} ${r['n']} ${joined(r, 'cost')}`).sort(),
    traffic.expected.days.filter((d) => d.modelCalls > 0).map((d) => `${d.day} ${d.modelCalls} ${d.modelCostPicoUsd}`).sort(),
    'spend_rollup_daily = the generator\'s days',
  );
}

before(async () => {
  ctx = await testContext('rollups');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  await produceEnvelopes(ctx, traffic.records);

  // Small batches, so the rows land over many sweeps; the worker and the
  // consumer are killed at random instants and restarted.
  const ingestEnv = { ...ctx.env, AGENTLEDGER_BATCH_MAX_ROWS: '40', AGENTLEDGER_BATCH_MAX_WAIT_MS: '100' };
  let worker: Running = runCli(['worker'], sweepEnv());
  let ingest: Running = runCli(['ingest', '--no-migrate'], ingestEnv);
  // Several sweeps while the rows land: after a kill, the next worker waits
  // for BullMQ to find the dead one's job stalled (up to its lock duration).
  await sleep(2000);
  for (let kill = 0; kill < 4; kill++) {
    await sleep(300 + Math.floor(random() * 1500));
    worker.child.kill('SIGKILL');
    await worker.exited;
    if (kill === 1) {
      ingest.child.kill('SIGKILL');
      await ingest.exited;
      ingest = runCli(['ingest', '--no-migrate'], ingestEnv);
    }
    worker = runCli(['worker'], sweepEnv());
  }
  ingest.child.kill('SIGTERM');
  await ingest.exited;
  const rest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], ctx.env);
  assert.equal(await rest.exited, 0, rest.stderr());
  await caughtUp(worker);
  worker.child.kill('SIGTERM');
  assert.equal(await worker.exited, 0, worker.stderr());
});
after(async () => {
  await ctx.cleanup();
});

test('after kills of the worker and the consumer, the swept rollups equal the live views and the generator\'s totals', async () => {
  const [sweeps] = await query<{ n: string }>(ctx, 'SELECT count() AS n FROM rollup_sweeps');
  assert.ok(Number(sweeps?.n) > 1, 'the rows were rolled up over several sweeps');
  await assertRollupsExact();
  // A compaction that died after its first mutation: one table compacted, the
  // others and the commits not. Readers still take each hour's top version.
  // (The worker compacts after its first sweep: one more sweep by hand makes
  // sure every hour has an obsolete version.)
  const again = spawnSync(process.execPath, [BIN, 'rollups', 'sweep'], { env: { PATH: process.env['PATH'] ?? '', ...ctx.env }, encoding: 'utf8' });
  assert.equal(again.status, 0, again.stderr);
  const obsolete = await query<{ h: number; top: string }>(ctx, querySql('rollup_obsolete'));
  assert.ok(obsolete.length > 0, 'repeated sweeps left obsolete versions');
  await command(ctx, renderSql(querySql('rollup_compact_rows'), { rollup_table: ROLLUP_TABLES[0], hours: obsolete.map((o) => Number(o.h)), tops: obsolete.map((o) => BigInt(o.top)) }));
  await assertRollupsExact();
  // Compaction drops every version a later commit made obsolete (killed
  // sweeps' included); the mutations run in the background.
  const r = spawnSync(process.execPath, [BIN, 'rollups', 'compact'], { env: { PATH: process.env['PATH'] ?? '', ...ctx.env }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^compact: obsolete versions of [1-9]\d* hour\(s\) and the old chain flags of \d+ loop\(s\) dropped/);
  for (let i = 0; ; i++) {
    const [left] = await query<{ rows: string; commits: string }>(
      ctx,
      `SELECT (SELECT count() FROM (${ROLLUP_TABLES.map((table) => `SELECT hour, version FROM ${table}`).join(' UNION ALL ')})
               WHERE (hour, version) NOT IN (SELECT hour, max(version) FROM rollup_commits GROUP BY hour)) AS rows,
              (SELECT count() - uniqExact(hour) FROM rollup_commits) AS commits`,
    );
    if (Number(left?.rows) === 0 && Number(left?.commits) === 0) break;
    if (i >= 1800) {
      const rowsLeft = await query(ctx, 'SELECT toString(hour) AS h, version, count() AS n FROM spend_rollup_hour GROUP BY hour, version ORDER BY hour, version');
      const commits = await query(ctx, 'SELECT toString(hour) AS h, version FROM rollup_commits ORDER BY hour, version');
      const muts = await query(ctx, 'SELECT command, is_done, latest_fail_reason FROM system.mutations WHERE database = currentDatabase() AND is_done = 0');
      assert.fail(`obsolete rollup versions left after 180 s: ${JSON.stringify({ left, rowsLeft, commits, muts })}`);
    }
    await sleep(100);
  }
  const whale = await query<Record<string, string>>(ctx, `SELECT ${exact('c')} FROM (SELECT sum(cost_pico) AS c FROM spend_rollup_daily WHERE model = '${traffic.expected.planted.whale.model}')`);
  assert.ok(BigInt(joined(whale[0]!, 'c')) > 2n ** 64n, 'the whale model passes 2^64 picodollars in the rollups too');
});

test('rollups rebuild gives the same figures, under a new version, reading the whole table per step', async () => {
  const before = await hourly();
  // One loop per step is already "many": the whole-table reads (everyLoopSql), not the per-loop ones the sweeps used.
  const r = spawnSync(process.execPath, [BIN, 'rollups', 'rebuild'], { env: { PATH: process.env['PATH'] ?? '', ...ctx.env, AGENTLEDGER_ROLLUP_SCAN_LOOPS: '1' }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const version = /rebuild: \d+ hour\(s\) recomputed under version (\d+)/.exec(r.stdout)?.[1];
  assert.ok(version, r.stdout);
  assert.deepEqual((await hourly()).rollup, before.rollup);
  await assertRollupsExact();
  // A rebuild of everything is a sweep of every stored row: the next sweep starts from it.
  const swept = async (v: string): Promise<string[]> =>
    (await query<{ ok: number }>(ctx, `SELECT seen_through = (SELECT max(ingested_at) FROM envelopes) AS ok FROM rollup_sweeps WHERE version = ${v}`)).map((x) => String(x.ok));
  assert.deepEqual(await swept(version), ['1'], 'the full rebuild recorded a sweep through the newest stored row');
  // A range is not everything: no sweep recorded.
  const day = await query<{ d: string }>(ctx, 'SELECT toString(toDate(min(hour))) AS d FROM rollup_commits');
  const part = spawnSync(process.execPath, [BIN, 'rollups', 'rebuild', '--from', day[0]!.d, '--to', day[0]!.d], { env: { PATH: process.env['PATH'] ?? '', ...ctx.env }, encoding: 'utf8' });
  assert.equal(part.status, 0, part.stderr);
  const partVersion = /version (\d+)/.exec(part.stdout)?.[1];
  assert.ok(partVersion, part.stdout);
  assert.deepEqual(await swept(partVersion), [], 'a rebuild of one day records no sweep');
  await assertRollupsExact();
});

test('rows of a recompute that never committed are never read, whatever their version; a zombie\'s older version never wins', async () => {
  // A sweep killed between its inserts and its commit, with the highest version there is.
  await command(
    ctx,
    `INSERT INTO spend_rollup_hour (hour, version, source, provider, model, loop_name, root_loop_id, calls, input_tokens, output_tokens, cost_pico, unpriced_calls)
     SELECT hour, 999999999999, source, provider, model, loop_name, root_loop_id, 1000, toDecimal128(1, 0), toDecimal128(1, 0), toDecimal128(1000000, 0), 0
     FROM spend_rollup_hour`,
  );
  await command(
    ctx,
    `INSERT INTO spend_rollup_model_hour (hour, version, source, provider, model, loop_name, calls, input_tokens, output_tokens, cost_pico, unpriced_calls)
     SELECT hour, 999999999999, source, provider, model, loop_name, 1000, toDecimal128(1, 0), toDecimal128(1, 0), toDecimal128(1000000, 0), 0
     FROM spend_rollup_model_hour`,
  );
  await command(
    ctx,
    `INSERT INTO spend_rollup_root_hour (hour, version, source, root_loop_id, calls, input_tokens, output_tokens, cost_pico)
     SELECT hour, 999999999999, source, root_loop_id, 1000, toDecimal128(1, 0), toDecimal128(1, 0), toDecimal128(1000000, 0)
     FROM spend_rollup_root_hour`,
  );
  await command(ctx, 'INSERT INTO event_rollup_hour (hour, version, kind, label, outcome, loop_id, events, flagged) SELECT hour, 999999999999, kind, label, outcome, loop_id, 1000, 1000 FROM event_rollup_hour');
  await assertRollupsExact();
  // A zombie: a sweep frozen with an old version (below every real one) that
  // wakes after newer sweeps, writes stale tree places and wrong rows, and
  // commits them.
  await command(ctx, "INSERT INTO loop_roots (loop_id, root_loop_id, loop_name, parent_loop_id, ancestors, version) SELECT loop_id, 'zombie-root', 'zombie-name', 'zombie-parent', ['zombie-root', 'zombie-parent'], 0 FROM loop_roots");
  await command(
    ctx,
    `INSERT INTO spend_rollup_hour (hour, version, source, provider, model, loop_name, root_loop_id, calls, input_tokens, output_tokens, cost_pico, unpriced_calls)
     SELECT DISTINCT hour, 0, 'runtime', 'zombie', 'zombie', 'zombie-name', 'zombie-root', 1, toDecimal128(1, 0), toDecimal128(1, 0), toDecimal128(1, 0), 0 FROM spend_rollup_hour`,
  );
  await command(ctx, "INSERT INTO event_rollup_hour (hour, version, kind, label, outcome, loop_id, events, flagged) SELECT DISTINCT hour, 0, 'ToolCalled', 'zombie', '', '', 1, 1 FROM event_rollup_hour");
  await command(ctx, 'INSERT INTO rollup_commits (hour, version, committed_at) SELECT DISTINCT hour, 0, now() FROM rollup_commits');
  await command(ctx, "INSERT INTO loop_ledgers (loop_id, version, model_cost, model_budget, budget, has_total_spend, total_spend) SELECT loop_id, 0, toDecimal128(7, 0), toDecimal128(7, 0), toDecimal128(7, 0), 1, toDecimal128(7, 0) FROM loop_ledgers");
  await command(ctx, 'INSERT INTO loop_child_reports (child_loop_id, reporter, version, seq, has_report, spend_pico) SELECT child_loop_id, reporter, 0, 999999, 1, 7 FROM loop_child_reports');
  const zombie = spawnSync(process.execPath, [BIN, 'rollups', 'sweep'], { env: { PATH: process.env['PATH'] ?? '', ...ctx.env }, encoding: 'utf8' });
  assert.equal(zombie.status, 0, zombie.stderr);
  await assertRollupsExact();
  // Versions are read by commit, not by size: a rebuild below the garbage's version still replaces every hour.
  const r = spawnSync(process.execPath, [BIN, 'rollups', 'rebuild'], { env: { PATH: process.env['PATH'] ?? '', ...ctx.env }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  await assertRollupsExact();
});

test('a rollup version counter lost with Redis restarts above the highest committed version', async () => {
  const [top] = await query<{ v: string }>(ctx, 'SELECT toString(max(version)) AS v FROM rollup_commits');
  // Redis without its data: the counter key is gone.
  const redis = createRedis(ctx.config.redis.url);
  try {
    await redis.del(`${ctx.config.redis.queuePrefix}:rollups:version`);
  } finally {
    redis.disconnect();
  }
  const r = spawnSync(process.execPath, [BIN, 'rollups', 'sweep'], { env: { PATH: process.env['PATH'] ?? '', ...ctx.env }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const version = BigInt(/version (\d+)/.exec(r.stdout)?.[1] ?? '0');
  assert.ok(version > BigInt(top!.v), `the sweep's version ${version} is above the committed ${top!.v}`);
  await assertRollupsExact();
});

// Last: it adds loops the generator's totals do not know.
test('a ForkedFrom, or a grandparent link, stored a sweep after the calls it concerns, hours later, recomputes the calls\' hour', { timeout: 120_000 }, async () => {
  const call = (usd: string): string => `{"model":"m-late","provider":"p-late","usage":{"cost_usd":${usd},"in":10,"out":1}}`;
  const started = '{"name":"late-fork"}';
  const tool = '{"tool":"t-late","is_error":true,"duration_ms":5}';
  const source = chain('late-src', [
    ['2026-03-01T10:00:00Z', 'LoopStarted', started],
    ['2026-03-01T10:05:00Z', 'ModelCalled', call('1')],
    ['2026-03-01T10:06:00Z', 'ModelCalled', call('2')],
    ['2026-03-01T10:07:00Z', 'ToolCalled', tool],
  ]);
  // The fork replays the source's four events (its hour 10 calls are the source's money, its tool call the source's), then says so at 12:00.
  const fork = chain('late-fork', [
    ['2026-03-01T10:00:00Z', 'LoopStarted', started],
    ['2026-03-01T10:05:00Z', 'ModelCalled', call('1')],
    ['2026-03-01T10:06:00Z', 'ModelCalled', call('2')],
    ['2026-03-01T10:07:00Z', 'ToolCalled', tool],
    ['2026-03-01T12:00:00Z', 'ForkedFrom', '{"at_seq":4,"source_loop_id":"late-src"}'],
    ['2026-03-01T12:01:00Z', 'ModelCalled', call('4')],
  ]);
  const hour10 = async (): Promise<string[]> =>
    (
      await query<Record<string, string>>(
        ctx,
        `SELECT toString(n) AS n, ${exact('cost')} FROM (SELECT sum(calls_sum) AS n, sum(cost_pico_sum) AS cost FROM spend_rollup_hourly WHERE model = 'm-late' AND hour = toDateTime('2026-03-01 10:00:00', 'UTC'))`,
      )
    ).map((r) => `${r['n']} ${joined(r, 'cost')}`);
  const toolHour10 = async (): Promise<string[]> =>
    (await query<{ n: string; e: string }>(ctx, "SELECT toString(calls) AS n, toString(errors) AS e FROM tool_errors_hourly WHERE tool = 't-late' AND hour = toDateTime('2026-03-01 10:00:00', 'UTC')")).map((r) => `${r.n} ${r.e}`);
  const sweepOnce = (): void => {
    const r = spawnSync(process.execPath, [BIN, 'rollups', 'sweep'], { env: { PATH: process.env['PATH'] ?? '', ...sweepEnv() }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  };
  /**
   * Waits, on the machine's clock as ClickHouse reads it, until every stored
   * envelope was stamped two whole seconds ago: rows stored from then on
   * carry stamps past the late window (1 s, counted in whole seconds) of the
   * ones before, so a sweep of them moves its watermark beyond those.
   */
  const pastLateWindow = async (): Promise<void> => {
    const age = async (): Promise<number> => Number((await query<{ age: string }>(ctx, 'SELECT toString(toUInt32(now()) - toUInt32(max(ingested_at))) AS age FROM envelopes'))[0]?.age);
    for (let i = 0; i < 100 && (await age()) < 2; i++) await sleep(100);
    assert.ok((await age()) >= 2, 'the stored envelopes aged past the late window');
  };
  // A child whose parent is known but not yet its grandparent: its root is its parent until the parent's LoopStarted is stored.
  const child = chain('late-child', [
    ['2026-03-01T09:00:00Z', 'LoopStarted', '{"name":"late-child","parent_id":"late-mid","depth":2}'],
    ['2026-03-01T09:10:00Z', 'ModelCalled', '{"model":"m-tree","provider":"p-late","usage":{"cost_usd":1,"in":1,"out":1}}'],
  ]);
  const mid = chain('late-mid', [['2026-03-01T13:00:00Z', 'LoopStarted', '{"name":"late-mid","parent_id":"late-top","depth":1}']]);
  const treeRoots = async (): Promise<string[]> =>
    (await query<{ root_loop_id: string }>(ctx, "SELECT root_loop_id FROM spend_rollup_hourly WHERE model = 'm-tree'")).map((r) => r.root_loop_id);
  await produceEnvelopes(ctx, [...source, ...fork.slice(0, 4), ...child]);
  const first = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], ctx.env);
  assert.equal(await first.exited, 0, first.stderr());
  sweepOnce();
  // Until the ForkedFrom is stored, the fork's calls are its own: four calls in hour 10.
  assert.deepEqual(await hour10(), ['4 6000000000000']);
  assert.deepEqual(await toolHour10(), ['2 2']);
  assert.deepEqual(await treeRoots(), ['late-mid']);
  // Another loop's rows, stored and swept past the late window (1 s here):
  // the sweeps' watermark moves beyond hour 10's rows, so only the fork path
  // can bring hour 10 back.
  await pastLateWindow();
  await produceEnvelopes(ctx, chain('late-other', [['2026-03-01T15:00:00Z', 'ModelCalled', call('8')]]));
  const between = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], ctx.env);
  assert.equal(await between.exited, 0, between.stderr());
  sweepOnce();
  await pastLateWindow();
  await produceEnvelopes(ctx, [...fork.slice(4), ...mid]);
  const second = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], ctx.env);
  assert.equal(await second.exited, 0, second.stderr());
  // A sweep that folded the new link, wrote loop_roots and died before
  // recomputing the child's hour 9: the next fold sees no change to make.
  for (const loop of ['late-child', 'late-mid']) {
    await command(ctx, `INSERT INTO loop_roots (loop_id, root_loop_id, loop_name, version) SELECT '${loop}', 'late-top', '${loop}', max(version) + 1 FROM rollup_sweeps`);
  }
  sweepOnce();
  assert.deepEqual(await hour10(), ['2 3000000000000'], 'the replays left hour 10 when their ForkedFrom was stored');
  assert.deepEqual(await toolHour10(), ['1 1'], 'the replayed tool call left hour 10 too');
  assert.deepEqual(await treeRoots(), ['late-top'], 'the child\'s hour-9 call moved to its grandparent\'s tree');
  const { rollup, live } = await hourly();
  assert.deepEqual(rollup, live);
  const ev = await events();
  assert.deepEqual(ev.rollup, ev.live);
  const led = await ledgers();
  assert.deepEqual(led.rollup, led.live);
});

test('spend_hourly_now answers the open hour at query time, the closed hours from the rollups', { timeout: 120_000 }, async () => {
  const stamp = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
  // The open hour is frozen, not read off the clock: the hour after this
  // one, ten minutes in. A sweep closes the hours before its newest ingest
  // stamp's hour, so no sweep of this test closes it, whenever the clock
  // crosses an hour (stamped now, a boundary crossed between the produce and
  // the sweep's ingest stamp closed the hour, and the rollups answered it).
  const t0 = Date.now() - (Date.now() % 3_600_000) + 3_600_000 + 600_000;
  const call = (usd: string): string => `{"model":"m-now","provider":"p-now","usage":{"cost_usd":${usd},"in":3,"out":2}}`;
  /** Where the view splits: hours before it from the rollups, from it on live (ms). */
  const split = async (): Promise<number> => 1000 * Number((await query<{ s: string }>(ctx, 'SELECT toString(toUInt32(toStartOfHour(max(seen_through)))) AS s FROM rollup_sweeps'))[0]?.s ?? 0);
  await produceEnvelopes(ctx, chain('now-loop', [
    [stamp(t0), 'LoopStarted', '{"name":"now-task"}'],
    [stamp(t0 + 1000), 'ModelCalled', call('0.25')],
    [stamp(t0 + 2000), 'ModelCalled', call('0.5')],
  ]));
  const ingest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], ctx.env);
  assert.equal(await ingest.exited, 0, ingest.stderr());
  const byModel = async (view: string): Promise<string[]> =>
    (
      await query<Record<string, string>>(
        ctx,
        `SELECT toString(hour) AS h, source, provider, model, loop_name, toString(n) AS n, ${exact('cost')}
         FROM (SELECT hour, source, provider, model, loop_name, sum(calls_sum) AS n, sum(cost_pico_sum) AS cost FROM ${view} GROUP BY hour, source, provider, model, loop_name)`,
      )
    ).map((r) => [r['h'], r['source'], r['provider'], r['model'], r['loop_name'], r['n'], joined(r, 'cost')].join(' ')).sort();
  const nowRow = (name: string): string => `${stamp(t0 - (t0 % 3_600_000)).replace('T', ' ').replace('Z', '')} runtime p-now m-now ${name} 2 750000000000`;
  // Not swept yet: the rollups do not have the calls, the view does (the loop not yet placed: no name).
  assert.equal((await byModel('spend_rollup_model_hourly')).filter((r) => r.includes(' m-now ')).length, 0);
  assert.ok((await split()) <= t0, 'the hour of the calls is open: answered live');
  const before = await byModel('spend_hourly_now');
  assert.ok(before.includes(nowRow('')), before.filter((r) => r.includes('m-now')).join('\n'));
  // Every other hour as the rollups have it: all of it was swept.
  assert.deepEqual(before.filter((r) => !r.includes(' m-now ')), await byModel('spend_rollup_model_hourly'));
  const r = spawnSync(process.execPath, [BIN, 'rollups', 'sweep'], { env: { PATH: process.env['PATH'] ?? '', ...ctx.env }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  // Swept: the open hour is still answered live, now with the loop's name; the rollups agree.
  assert.ok((await split()) <= t0, 'the sweep left the hour of the calls open: still answered live');
  const after = await byModel('spend_hourly_now');
  assert.ok(after.includes(nowRow('now-task')), after.filter((x) => x.includes('m-now')).join('\n'));
  assert.deepEqual(after, await byModel('spend_rollup_model_hourly'));
});

