/**
 * Loop-runtime spend end to end (issue 10), against the real stack: generated
 * loop trees (child-first and parent-first), forks whose replays arrive before
 * their ForkedFrom, redeliveries, a tampered ModelCalled, a second version,
 * USD texts with exponents and exact halves, and a model whose total passes
 * 2^64 picodollars, go through Kafka and `ingest` — killed once mid-way — and
 * `loops --json` and `spend --json` must give exactly the totals the
 * generator computed on its own (src/demo/traffic/spend-expected.ts, BigInt
 * over the USD texts it wrote).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { generateSpendTraffic } from '../../src/demo/traffic/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { migrate } from '../../src/migrate/migrate.js';
import { query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { BIN, runCli, sleep } from '../support/processes.js';

const log = createLogger('error');
let ctx: TestContext;
const traffic = generateSpendTraffic({ seed: 7, roots: 6 });

before(async () => {
  ctx = await testContext('runtime_spend');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  await produceEnvelopes(ctx, traffic.records);

  // Killed once rows have started to land, then run to its idle exit.
  const first = runCli(['ingest', '--no-migrate'], { ...ctx.env, AGENTLEDGER_BATCH_MAX_ROWS: '50', AGENTLEDGER_BATCH_MAX_WAIT_MS: '100' });
  for (let i = 0; i < 600; i++) {
    const [row] = await query<{ n: string }>(ctx, 'SELECT count() AS n FROM envelopes');
    if (Number(row?.n ?? 0) > 0) break;
    await sleep(50);
  }
  first.child.kill('SIGKILL');
  await first.exited;
  const rest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], ctx.env);
  assert.equal(await rest.exited, 0, rest.stderr());
});
after(async () => {
  await ctx.cleanup();
});

function cli<T>(args: string[]): T {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: { PATH: process.env['PATH'] ?? '', ...ctx.env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as T;
}

test('every envelope stored once, with the planted verdicts', async () => {
  const [row] = await query<{ n: string }>(ctx, 'SELECT count() AS n FROM envelopes FINAL');
  // One row per (loop, seq), plus the second versions kept as evidence.
  assert.equal(Number(row?.n), traffic.expected.envelopes + traffic.expected.planted.secondVersions.length);
  const violations = await query<{ loop_id: string; seq: number; verdict: string }>(
    ctx,
    "SELECT loop_id, seq, verdict FROM envelopes FINAL WHERE verdict != 'ok' ORDER BY loop_id, seq",
  );
  assert.deepEqual(
    violations.map((v) => ({ loopId: v.loop_id, seq: Number(v.seq), verdict: v.verdict })),
    traffic.expected.violations.map((v) => ({ loopId: v.loopId, seq: v.seq, verdict: v.verdict })),
  );
});

test('loops --json gives every loop its tree place and exact own, budget, unverified and subtree spend', () => {
  const loops = cli<Record<string, unknown>[]>(['loops', '--json']);
  const keys = ['loopId', 'parentLoopId', 'rootLoopId', 'depth', 'name', 'outcome', 'error', 'modelCalls', 'inputTokens', 'outputTokens', 'modelCostPicoUsd', 'budgetPicoUsd', 'unverifiedModelCostPicoUsd', 'subtreeModelCostPicoUsd', 'forkedFrom', 'forkedAtSeq'] as const;
  const pick = (o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(keys.map((k) => [k, o[k]]));
  assert.deepEqual(
    loops.map(pick),
    traffic.expected.loops.map((l) => pick(l as unknown as Record<string, unknown>)),
  );
  // --root: one tree, its root first.
  const root = traffic.expected.roots[0]!.rootLoopId;
  const tree = cli<{ loopId: string; rootLoopId: string }[]>(['loops', '--json', '--root', root]);
  assert.equal(tree[0]?.loopId, root);
  assert.equal(tree.length, traffic.expected.roots[0]!.loops);
  assert.ok(tree.every((l) => l.rootLoopId === root));
});

test('spend --json by model, root and day gives the generator\'s totals, past 2^64 picodollars', () => {
  const byModel = cli<{ provider: string; model: string; calls: number; inputTokens: string; outputTokens: string; costPicoUsd: string }[]>(['spend', '--json', '--by', 'model', '--source', 'runtime']);
  const counted = traffic.expected.models.filter((m) => m.calls > 0);
  assert.deepEqual(
    byModel.map((m) => [m.provider, m.model, m.calls, m.inputTokens, m.outputTokens, m.costPicoUsd]).sort(),
    counted.map((m) => [m.provider, m.model, m.calls, String(m.inputTokens), String(m.outputTokens), m.costPicoUsd]).sort(),
  );
  const whale = byModel.find((m) => m.model === traffic.expected.planted.whale.model);
  assert.ok(whale && BigInt(whale.costPicoUsd) > 2n ** 64n, 'the whale model passes 2^64 picodollars');

  const byRoot = cli<{ rootLoopId: string; calls: number; costPicoUsd: string }[]>(['spend', '--json', '--by', 'root', '--source', 'runtime']);
  assert.deepEqual(
    byRoot.map((r) => [r.rootLoopId, r.calls, r.costPicoUsd]).sort(),
    traffic.expected.roots.filter((r) => r.modelCalls > 0).map((r) => [r.rootLoopId, r.modelCalls, r.modelCostPicoUsd]).sort(),
  );

  const byDay = cli<{ day: string; calls: number; costPicoUsd: string }[]>(['spend', '--json', '--by', 'day', '--source', 'runtime']);
  assert.deepEqual(
    byDay.map((d) => [d.day, d.calls, d.costPicoUsd]).sort(),
    traffic.expected.days.filter((d) => d.modelCalls > 0).map((d) => [d.day, d.modelCalls, d.modelCostPicoUsd]).sort(),
  );

  const [total] = cli<{ costPicoUsd: string; calls: number }[]>(['spend', '--json', '--by', 'source', '--source', 'runtime']);
  assert.equal(total?.costPicoUsd, traffic.expected.totals.modelCostPicoUsd);
  assert.equal(total?.calls, traffic.expected.totals.modelCalls);
});

test('loop_reconciliation: the three ledgers agree for every loop but the one whose model call was tampered with', async () => {
  const rows = await query<{
    loop_id: string;
    model_cost_pico: string;
    model_budget_pico: string;
    budget_pico: string;
    has_total_spend: number;
    has_child_spend: number;
    model_minus_model_budget_pico: string;
    disagrees: number;
    model_disagrees: number;
  }>(ctx, 'SELECT * FROM loop_reconciliation ORDER BY loop_id');
  assert.equal(rows.length, traffic.expected.loops.length);
  const tampered = traffic.expected.planted.tampered.map((t) => t.loopId);
  assert.deepEqual(
    rows.filter((r) => Number(r.disagrees) === 1).map((r) => r.loop_id),
    tampered,
  );
  // The tampered call is not verified: its loop's model cost is short of what its budget was charged, by exactly that call.
  for (const id of tampered) {
    const r = rows.find((x) => x.loop_id === id)!;
    const expected = traffic.expected.loops.find((l) => l.loopId === id)!;
    assert.equal(Number(r.model_disagrees), 1);
    assert.equal(r.model_cost_pico, expected.modelCostPicoUsd);
    assert.ok(BigInt(r.model_minus_model_budget_pico) < 0n);
  }
  // Every finished loop reported a total, every completed sub-agent was reported by its parent.
  const finished = new Set(traffic.expected.loops.filter((l) => l.outcome !== '').map((l) => l.loopId));
  assert.deepEqual(rows.filter((r) => Number(r.has_total_spend) === 1).map((r) => r.loop_id).sort(), [...finished].sort());
  assert.ok(rows.some((r) => Number(r.has_child_spend) === 1));
});
