/**
 * Every Grafana panel and every page endpoint within memory on a database
 * whose chain reads used to outgrow it (issue 40 item 7; docs/benchmarks.md
 * "Dashboard memory").
 *
 * A database is filled the way `bench:rollups` fills one (bench/rollups/data.ts:
 * INSERT … SELECT FROM numbers() in the real schema, with its 1-in-2000 model
 * calls stored as hash mismatches), about 300,000 envelopes over
 * 18,000 loops, and no chain-flag mark (no sweep has run: every loop is read
 * live, the case the issue hit). Its reads then run with max_memory_usage
 * lowered to LIMIT_BYTES, which stands for the profiles' 4 GB
 * (infra/clickhouse/users.xml) on a database some 20 times bigger:
 * - the before witness: panel 19 "Latest chain violations" over 0021's
 *   chain_violations_now (its SQL read from that migration, which is never
 *   edited) is refused with code 241, as the was;
 * - 0023's view gives the same rows as 0021's;
 * - every panel (macros expanded for the loaded month) and every page endpoint
 *   answers under the same limit, the chain panels and the violations
 *   endpoint with the planted violations (the tree endpoint finds no tree:
 *   loop_roots is the rollup job's, and no rollup has run; bench:rollups
 *   measures it after a rebuild).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ClickHouseClient } from '@clickhouse/client';
import { loadSql, loopId, MODELS } from '../../bench/rollups/data.js';
import { END_UNIX } from '../../bench/rollups/window.js';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { clickhouseErrorCode } from '../../src/clickhouse/errors.js';
import { migrate } from '../../src/migrate/migrate.js';
import { RequestError } from '../../src/serve/server.js';
import { createLogger } from '../../src/observability/logger.js';
import { command, query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { pageReads, panelReads, readerClient } from '../support/dashboard-reads.js';
import { panelQueries, readDashboard } from '../support/grafana-dashboard.js';
import { expandMacros } from '../support/grafana-macros.js';
import { REPO_ROOT } from '../support/services.js';

/** 18.16 used 626 MiB for the old panel 19 at 500,000 envelopes, 50 MiB for the new (docs/benchmarks.md). */
const LIMIT_BYTES = 200_000_000;
const SHAPE = { calls: 180_000, loops: 18_000, days: 30 };
const RANGE = { from: END_UNIX - 30 * 86_400, to: END_UNIX, intervalSeconds: 1800 };

let ctx: TestContext;
let limited: ClickHouseClient;

before(async () => {
  ctx = await testContext('dashboard_memory');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, createLogger('error'));
  for (const chunk of loadSql(SHAPE).chunks) await command(ctx, chunk.sql);
  // The view as 0021 defined it, beside 0023's, under a name of its own.
  const v0021 = readFileSync(join(REPO_ROOT, 'schema', 'clickhouse', '0021_chain_flags.sql'), 'utf8');
  const start = v0021.indexOf('CREATE VIEW IF NOT EXISTS chain_violations_now AS');
  const end = v0021.indexOf(';', start);
  assert.ok(start > 0 && end > start, '0021 defines chain_violations_now');
  await command(ctx, v0021.slice(start, end).replace('chain_violations_now AS', 'chain_violations_0021 AS'));
  limited = readerClient(ctx.config.clickhouse, `agentledger-memtest-${ctx.id}`, { max_memory_usage: String(LIMIT_BYTES) });
});

after(async () => {
  await limited?.close();
  await ctx?.cleanup();
});

const latestViolations = (): string => {
  const q = panelQueries(readDashboard()).find((p) => p.panel.title === 'Latest chain violations');
  assert.ok(q, 'the dashboard has panel "Latest chain violations"');
  return expandMacros(q.sql, RANGE);
};

test('the database is big enough: the old chain view refuses panel 19 for memory (code 241)', async () => {
  const [n] = await query<{ rows: string; flagged: string }>(ctx, "SELECT toString(count()) AS rows, toString(countIf(verdict != 'ok')) AS flagged FROM envelopes");
  assert.ok(Number(n?.rows) > 280_000 && Number(n?.flagged) > 100, `loaded ${n?.rows} envelopes, ${n?.flagged} flagged`);
  const [marks] = await query<{ n: string }>(ctx, 'SELECT toString(count()) AS n FROM chain_flag_marks');
  assert.equal(marks?.n, '0', 'no chain-flag mark: every loop is read live');
  const old = latestViolations().replace('FROM chain_violations_now', 'FROM chain_violations_0021');
  assert.notEqual(old, latestViolations());
  await assert.rejects(
    limited.query({ query: old, format: 'JSONEachRow' }).then((r) => r.json()),
    (err: unknown) => clickhouseErrorCode(err) === 241,
  );
});

test('0023 chain_violations_now gives the rows of 0021', async () => {
  const cols = 'loop_id, seq, verdict, detail, kind, time, time_text, carried_hash, expected_hash, payload, evidence, kafka_topic, kafka_partition, kafka_offset, ingested_at, kind_class, cost_pico, model_name';
  const read = (view: string) => query<Record<string, unknown>>(ctx, `SELECT ${cols} FROM ${view} ORDER BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset`);
  const [now, old] = await Promise.all([read('chain_violations_now'), read('chain_violations_0021')]);
  assert.ok(now.length > 100, `${now.length} violations`);
  assert.deepEqual(now, old);
});

test('every panel and every page endpoint answers under the same limit', async () => {
  const model = MODELS[0].model;
  const reads = [...panelReads(RANGE), ...pageReads(END_UNIX * 1000, loopId(1), model)];
  const answers = new Map<string, unknown>();
  for (const r of reads) {
    try {
      answers.set(r.label, await r.run(limited));
    } catch (err) {
      // No rollup has run, so loop_roots places no tree: its reads ran, and found none.
      if (err instanceof RequestError && err.status === 404 && r.label.startsWith('page /api/tree')) {
        answers.set(r.label, err);
        continue;
      }
      assert.fail(`${r.label}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
  }
  // Not vacuous: the chain reads found the planted violations.
  const [flagged] = await query<{ n: string }>(ctx, "SELECT toString(count()) AS n FROM chain_violations_now WHERE verdict != 'ok'");
  const latest = answers.get(panelReads(RANGE).find((r) => r.label.includes('"Latest chain violations"'))!.label) as unknown[];
  assert.equal(latest.length, Math.min(100, Number(flagged?.n)));
  const count = answers.get(panelReads(RANGE).find((r) => r.label.includes('"Chain violations" '))!.label) as { violations: string | number }[];
  assert.equal(String(count[0]?.violations), flagged?.n);
  const violations = answers.get('page /api/violations') as unknown[];
  assert.ok(violations.length > 0, 'the violations endpoint lists violations');
  assert.ok(answers.get(`page /api/tree?root=${encodeURIComponent(loopId(1))}`) instanceof RequestError);
});
