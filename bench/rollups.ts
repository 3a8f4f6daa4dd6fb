/**
 * Dashboard reads at scale (issue 10): how long does each dashboard view take
 * over a month of a busy deployment, on ClickHouse 18.16 (the local server)
 * and on current ClickHouse (25.8, embedded by chdb), and what do the hour
 * rollups cost and buy? Not a test: it prints figures, exit 0 unless a step fails.
 *
 *   npm run bench:rollups -- [--calls 10000000] [--loops 200000] [--days 30]
 *                            [--chdb-calls N] [--no-chdb] [--no-rollups] [--runs 3]
 *                            [--no-views] [--no-serve] [--no-grafana] [--no-ingest]
 *                            [--ingest-loops 4000] [--ingest-envelopes 50] [--sweep-ms 5000] [--keep]
 *
 * 1. Load: a fresh database migrated with the project's migrations, filled by
 *    INSERT … SELECT FROM numbers() inside ClickHouse (loadSql() below says
 *    what the rows are): --calls ModelCalled envelopes over --loops loops (a
 *    quarter roots, the rest sub-agents two levels deep, a few hundred forks)
 *    in the --days before 2026-11-01, with their BudgetCharged, ToolCalled,
 *    ConvergenceWarning, SubAgentSpawned/Completed, LoopStarted/Finished.
 * 2. Every dashboard view read the way a dashboard reads it (VIEW_QUERIES: the
 *    last 24 h or 7 days where the view has a time, else the whole view, at
 *    most 100 rows), one warm-up and --runs timed runs, median wall time at
 *    the client, against 1 s.
 * 3. Rollups, when `agentledger rollups` exists: `rollups rebuild` over the
 *    loaded days, timed; a sweep right after it, timed; the rollup views
 *    (ROLLUP_QUERIES) read as in 2.
 * 4. The floor (FLOOR_QUERIES): what an exact answer at query time costs at
 *    least, every ModelCalled row read and deduplicated by the sort key, timed
 *    as in 2 whatever --no-views says. Then the API (issue 21): `agentledger
 *    serve --port 0` over the loaded and rolled-up database as the read-only
 *    user (AGENTLEDGER_SERVE_CLICKHOUSE_USER, default agentledger_test_readonly),
 *    every request of API_REQUESTS (the read commands with representative
 *    options, `spend` raw and `--rollups` per --by, the page's endpoints) timed
 *    over HTTP as in 2 against 1 s, the floor printed beside them; a 404 is
 *    "missing" (not merged yet), not a failure. --no-serve skips the API.
 * 5. Every Grafana panel's query (infra/grafana/dashboards/agentledger.json),
 *    its macros expanded as the plugin does (test/support/grafana-macros.ts)
 *    for the last 24 h, 7 d and 30 d before 2026-11-01, read as that user on
 *    18.16 as in 2, and on 25.8 in 6. --no-grafana skips it.
 * 6. The same schema, load SQL and reads (views, floor and panels) on ClickHouse 25.8
 *    (bench/rollups_chdb.py with the chdb that test/modern/run.sh installs), the
 *    rollup tables copied over from step 3.
 * 7. Ingest with and without rollups, when `agentledger worker` exists:
 *    `agentledger ingest` over the same produce-demo traffic into the loaded
 *    database, alone and with a worker sweeping every --sweep-ms beside it
 *    (order: alone, with, with, alone), envelopes/s and their ratio against 0.8.
 * M. Peak memory (issue 40 item 7, bench/rollups/memory.ts): every panel per
 *    range and every page endpoint once under the profiles' max_memory_usage,
 *    its peak from system.query_log: right after the load (no sweep yet, every
 *    loop's chain read live) and right after the rebuild of 3. --no-memory skips it.
 * --no-views and --no-ingest skip 2 (and 3's view reads) and 7.
 * Then one table per step, and the throwaway database, topic, groups and Redis keys
 * are dropped (also on failure; --keep leaves the database).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { MIGRATIONS_DIR } from '../src/cli/migrate.js';
import { parseConfig } from '../src/config/index.js';
import { createClickHouse } from '../src/clickhouse/client.js';
import { loadMigrations } from '../src/migrate/migrations.js';
import { migrate } from '../src/migrate/migrate.js';
import { median } from './support.js';
import { args, benchStarted, CALLS, CHDB_CALLS, CLICKHOUSE_USER, DAYS, DB, env, INGEST_LOOPS, INGEST_PER_LOOP, KAFKA_BROKERS, LATE_MS, log, LOOPS, REDIS_PREFIX, RUNS, say, SWEEP_MS, TARGET_MS, TARGET_RATIO } from './rollups/options.js';
import { FINGERPRINT_SQL, type Load, loadSql, loopId, type Shape } from './rollups/data.js';
import { apiVerdict, FLOOR_QUERIES, fmtMs, panelVerdict, ROLLUP_QUERIES, SLOW_WARMUP_MS, timeRead, type Timing, verdict, VIEW_QUERIES, type ViewQuery } from './rollups/reads.js';
import { API_REQUESTS, type ApiTiming, grafanaQueries, READONLY_PASSWORD, READONLY_USER, SINCE_30D, SINCE_7D, startServe, timeGet, UNTIL } from './rollups/api.js';
import { children, cli, migrationsDir, rows, settleMerges } from './rollups/helpers.js';
import { chdbPython, type ChdbResult, exportRollupTables, runChdb, type TableCopy } from './rollups/chdb.js';
import { ingestComparison, type IngestRun } from './rollups/ingest.js';
import { measureMemory, memoryLimit, memoryTable, type MemoryRead } from './rollups/memory.js';

interface Row {
  readonly view: string;
  readonly old?: Timing;
  readonly current?: Timing;
  readonly note?: string;
}

async function loadOld(ch: ClickHouseClient, load: Load): Promise<{ seconds: number; rows: number }> {
  const t = performance.now();
  let stored = 0;
  for (const [i, chunk] of load.chunks.entries()) {
    // Tagged, so that a clean-up can stop it (KILL QUERY) before it drops the database.
    await ch.command({ query: chunk.sql, query_id: `${DB}_load_${i}` });
    const [c] = await rows<{ n: string }>(ch, 'SELECT count() AS n FROM envelopes');
    stored = Number(c?.n);
    const s = (performance.now() - t) / 1000;
    say(`18.16 load ${i + 1}/${load.chunks.length}: loops ${chunk.fromLoop.toLocaleString()}..${(chunk.toLoop - 1).toLocaleString()}, ${stored.toLocaleString()} rows in ${s.toFixed(0)} s (${Math.round(stored / s).toLocaleString()} rows/s)`);
  }
  return { seconds: (performance.now() - t) / 1000, rows: stored };
}

/** Set on SIGINT/SIGTERM: the failure that follows (clients closed under a running step) is not reported. */
let stopping = false;

/** Drops the run's database, retrying for a while: a query of a killed child may still hold a table. */
async function dropDatabase(admin: ClickHouseClient): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.command({ query: `DROP DATABASE IF EXISTS ${DB}` });
      return;
    } catch (err) {
      if (attempt >= 20) {
        say(`could not drop database ${DB}: ${String(err)}`);
        return;
      }
      await new Promise((r) => setTimeout(r, 3000));
    }
  }
}

async function main(): Promise<number> {
  if (args['print-sql']) {
    const load = loadSql({ calls: CALLS, loops: LOOPS, days: DAYS });
    process.stdout.write(`-- load: ${load.chunks.length} statements like this one\n${load.chunks[0]!.sql};\n\n`);
    for (const q of [...VIEW_QUERIES, ...ROLLUP_QUERIES, ...FLOOR_QUERIES]) process.stdout.write(`-- ${q.view}\n${q.sql};\n\n`);
    return 0;
  }
  const work = await mkdtemp(join(tmpdir(), 'agentledger-rollups-'));
  const config = parseConfig(env());
  const admin = createClickHouse(config.clickhouse, 'system');
  let ch: ClickHouseClient | undefined;
  let reader: ClickHouseClient | undefined;
  const topics: string[] = [];
  const groups: string[] = [];
  let redisUsed = false;
  const notes: string[] = [];
  const table = new Map<string, Row>();
  const put = (view: string, row: Omit<Row, 'view'>): void => void table.set(view, { ...table.get(view), view, ...row });

  let cleaning: Promise<void> | undefined;
  const cleanup = (): Promise<void> => (cleaning ??= cleanUp());
  const cleanUp = async (): Promise<void> => {
    for (const c of children) c.kill('SIGKILL');
    // The load's inserts run on in the server after their client is gone, holding the table: stopped first.
    await admin.command({ query: `KILL QUERY WHERE query_id LIKE '${DB}%' SYNC` }).catch(() => undefined);
    await reader?.close().catch(() => undefined);
    await ch?.close().catch(() => undefined);
    if (args.keep) say(`--keep: left database ${DB}`);
    else await dropDatabase(admin);
    await admin.close().catch(() => undefined);
    if (topics.length > 0 || groups.length > 0) {
      const k = new Kafka({ clientId: 'bench-rollups', brokers: KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING }).admin();
      try {
        await k.connect();
        if (groups.length > 0) await k.deleteGroups(groups).catch(() => undefined);
        await k.deleteTopics({ topics }).catch(() => undefined);
      } finally {
        await k.disconnect().catch(() => undefined);
      }
    }
    if (redisUsed) {
      // Only this run's keys: its queue prefix is its own.
      const redis = new Redis(config.redis.url, { maxRetriesPerRequest: 3, lazyConnect: true });
      try {
        await redis.connect();
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${REDIS_PREFIX}*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== '0');
      } catch (err) {
        say(`could not delete the Redis keys ${REDIS_PREFIX}*: ${String(err)}`);
      } finally {
        redis.disconnect();
      }
    }
    await rm(work, { recursive: true, force: true });
  };
  const interrupted = (): void => {
    say('interrupted: cleaning up');
    stopping = true;
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);

  try {
    const shape: Shape = { calls: CALLS, loops: LOOPS, days: DAYS };
    const load = loadSql(shape);
    say(`node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}, load avg ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    say(
      `data: ${CALLS.toLocaleString()} model calls, ${LOOPS.toLocaleString()} loops (${load.roots.toLocaleString()} roots, ${load.forks} forks), ${DAYS} days before 2026-11-01, in database ${DB}`,
    );

    // 1. Schema and load, 18.16.
    const migrations = await migrationsDir(work);
    await migrate(config.clickhouse, migrations.dir, log);
    say(`migrated: ${migrations.note}`);
    if (migrations.dir !== MIGRATIONS_DIR) notes.push(migrations.note);
    ch = createClickHouse(config.clickhouse);
    const [version] = await rows<{ v: string }>(ch, 'SELECT version() AS v');
    const oldEngine = version?.v ?? '?';
    const loaded = await loadOld(ch, load);
    say(`18.16 loaded ${loaded.rows.toLocaleString()} rows in ${loaded.seconds.toFixed(1)} s (${Math.round(loaded.rows / loaded.seconds).toLocaleString()} rows/s); letting merges settle`);
    const settleStart = performance.now();
    await settleMerges(ch, 300);
    const [parts] = await rows<{ n: string }>(ch, "SELECT count() AS n FROM system.parts WHERE database = currentDatabase() AND table = 'envelopes' AND active");
    say(`merges settled in ${((performance.now() - settleStart) / 1000).toFixed(0)} s; envelopes in ${parts?.n} active parts`);
    const kinds = await rows<{ kind_class: string; verdict: string; n: string }>(
      ch,
      'SELECT kind_class, verdict, count() AS n FROM envelopes GROUP BY kind_class, verdict ORDER BY kind_class, verdict',
    );
    const [fingerprint] = await rows<{ fingerprint: string }>(ch, FINGERPRINT_SQL);
    say(`fingerprint: ${fingerprint?.fingerprint}`);
    say(`rows: ${kinds.map((k) => `${k.kind_class}${k.verdict === 'ok' ? '' : ` (${k.verdict})`} ${Number(k.n).toLocaleString()}`).join(', ')}`);

    // M. Peak memory of every panel and page endpoint before any sweep: no chain-flag mark, every loop read live.
    const memory: { stage: string; reads: MemoryRead[] }[] = [];
    const limitBytes = await memoryLimit(ch);
    if (args['no-memory']) notes.push('--no-memory: the peak memory of the panels and page endpoints was not measured');
    else memory.push({ stage: 'before any sweep (every loop read live)', reads: await measureMemory(config.clickhouse, ch, 'live', limitBytes, say) });

    // 2. Reads, 18.16: as the dashboard user when it may read this database, else as the test user with readonly=1.
    let readSettings: Record<string, string> = {};
    let readerNote: string;
    const dashboard = createClickHouse(
      parseConfig(env({ AGENTLEDGER_CLICKHOUSE_USER: 'agentledger_dashboard', AGENTLEDGER_CLICKHOUSE_PASSWORD: process.env['AGENTLEDGER_CLICKHOUSE_DASHBOARD_PASSWORD'] ?? 'agentledger_dashboard' })).clickhouse,
    );
    try {
      await dashboard.query({ query: 'SELECT count() FROM envelopes', format: 'JSONEachRow' }).then((r) => r.json());
      reader = dashboard;
      readerNote = 'reads as agentledger_dashboard';
    } catch (err) {
      await dashboard.close();
      reader = createClickHouse(config.clickhouse);
      readSettings = { readonly: '1' };
      readerNote = `reads as ${CLICKHOUSE_USER} with readonly=1: agentledger_dashboard may not open ${DB} (${(err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 120)})`;
    }
    say(readerNote);
    notes.push(readerNote);
    if (args['no-views']) notes.push('--no-views: the dashboard views were not timed');
    for (const q of args['no-views'] ? [] : VIEW_QUERIES) {
      const t = await timeRead(reader, q.sql, readSettings);
      put(q.view, { old: t });
      say(`18.16 ${q.view}: ${fmtMs(t)} ms median of [${t.ms.map((x) => Math.round(x)).join(', ')}] (warm-up ${Math.round(t.warmupMs)}), ${t.rows} rows ${verdict(t)}${t.error ? ` error: ${t.error}` : ''}`);
    }

    // 3. Rollups, 18.16.
    const present = new Set((await rows<{ name: string }>(ch, 'SELECT name FROM system.tables WHERE database = currentDatabase()')).map((r) => r.name));
    const rollupQueries: ViewQuery[] = [];
    for (const q of ROLLUP_QUERIES) {
      if (!present.has(q.view)) continue;
      const cols = new Set((await rows<{ name: string }>(ch, `SELECT name FROM system.columns WHERE database = currentDatabase() AND table = '${q.view}'`)).map((r) => r.name));
      const fits = q.columns.every((c) => cols.has(c));
      rollupQueries.push(fits ? q : { view: q.view, sql: `SELECT * FROM ${q.view} LIMIT 100` });
      if (!fits) put(q.view, { note: 'columns differ from the expected: read whole, LIMIT 100' });
    }
    if (rollupQueries.length === 0) notes.push(`no rollup views (${ROLLUP_QUERIES.map((q) => q.view).join(', ')}) after migrating: not timed`);
    const rollupsCli = (await cli(['rollups', '--help'], env()).done).code === 0;
    const workerCli = (await cli(['worker', '--help'], env()).done).code === 0;
    let rebuild: { seconds: number; line: string } | undefined;
    let sweepSeconds: number | undefined;
    let sweepLine = '';
    let copies: TableCopy[] = [];
    if (args['no-rollups']) notes.push('--no-rollups: rollups rebuild and the ingest comparison skipped');
    else if (!rollupsCli) notes.push('`agentledger rollups` does not exist in this build: rebuild not timed, rollup views read empty');
    if (!args['no-rollups'] && rollupsCli) {
      redisUsed = true;
      // Every day loaded, with no range: a rebuild of everything is recorded as a sweep, so the sweeps timed after it are the steady state's.
      say('rollups rebuild …');
      let lastSaid = 0;
      const t = performance.now();
      const r = await cli(['rollups', 'rebuild'], env(), (line) => {
        if (performance.now() - lastSaid > 15_000 && /\d+\/\d+/.test(line)) {
          lastSaid = performance.now();
          say(`  ${line.trim()} (${((performance.now() - t) / 1000).toFixed(0)} s)`);
        }
      }).done;
      const seconds = (performance.now() - t) / 1000;
      if (r.code !== 0) throw new Error(`rollups rebuild failed (exit ${r.code}): ${r.err.slice(-2000)}`);
      rebuild = { seconds, line: r.out.trim() };
      say(`rollups rebuild: ${seconds.toFixed(1)} s: ${rebuild.line}`);
      // M again, over the rebuilt rollups and chain flags (a rebuild is recorded as a sweep: its mark is stored).
      if (!args['no-memory']) memory.push({ stage: 'after rollups rebuild', reads: await measureMemory(config.clickhouse, ch, 'rebuilt', limitBytes, say) });
      // One sweep by hand, timed: what a sweep costs over this database when nothing new was stored.
      const s0 = performance.now();
      const s = await cli(['rollups', 'sweep'], env()).done;
      if (s.code !== 0) throw new Error(`rollups sweep failed (exit ${s.code}): ${s.err.slice(-2000)}`);
      sweepSeconds = (performance.now() - s0) / 1000;
      sweepLine = s.out.trim();
      say(`a rollups sweep after it, no row ingested since: ${sweepSeconds.toFixed(1)} s: ${sweepLine}`);
      await settleMerges(ch, 120);
    }
    for (const q of args['no-views'] ? [] : rollupQueries) {
      const t = await timeRead(reader, q.sql, readSettings);
      put(q.view, { old: t, ...(rebuild ? {} : { note: 'empty: rollups not built' }) });
      say(`18.16 ${q.view}: ${fmtMs(t)} ms median of [${t.ms.map((x) => Math.round(x)).join(', ')}], ${t.rows} rows ${verdict(t)}${t.error ? ` error: ${t.error}` : ''}`);
    }

    // 4. The floor of an exact answer at query time (not skipped by --no-views: it stands beside the raw spend endpoints).
    for (const q of FLOOR_QUERIES) {
      const t = await timeRead(reader, q.sql, readSettings);
      put(q.view, { old: t });
      say(`18.16 ${q.view}: ${fmtMs(t)} ms median of [${t.ms.map((x) => Math.round(x)).join(', ')}], ${t.rows} rows${t.error ? ` error: ${t.error}` : ''}`);
    }

    // The API of `agentledger serve` over the loaded (and rolled-up) database, as the read-only user.
    const api = new Map<string, ApiTiming>();
    if (args['no-serve']) notes.push('--no-serve: the API endpoints were not timed');
    else {
      const serve = await startServe();
      say(`agentledger serve at ${serve.url} as ${READONLY_USER}`);
      try {
        for (const r of API_REQUESTS) {
          const t = await timeGet(serve.url + r.path.replaceAll('{root}', encodeURIComponent(loopId(1))));
          api.set(r.name, t);
          say(`api ${r.name}: ${t.missing ? 'missing (404)' : `${fmtMs(t)} ms median of [${t.ms.map((x) => Math.round(x)).join(', ')}] (warm-up ${Math.round(t.warmupMs)}), ${t.rows} rows, ${t.bytes ?? 0} bytes ${apiVerdict(t)}`}${t.error ? ` error: ${t.error}` : ''}`);
        }
      } finally {
        await serve.stop();
      }
    }

    // 5. Every Grafana panel's query on 18.16, as the read-only user (on 25.8 in 6).
    const grafana = new Map<string, Row>();
    const panelReads = args['no-grafana'] ? [] : grafanaQueries();
    if (args['no-grafana']) notes.push('--no-grafana: the Grafana panels were not timed');
    else {
      const ro = createClickHouse(parseConfig(env({ AGENTLEDGER_CLICKHOUSE_USER: READONLY_USER, AGENTLEDGER_CLICKHOUSE_PASSWORD: READONLY_PASSWORD })).clickhouse);
      try {
        for (const q of panelReads) {
          const t = await timeRead(ro, q.sql, {});
          grafana.set(q.view, { view: q.view, old: t });
          say(`18.16 grafana ${q.view}: ${fmtMs(t)} ms median of [${t.ms.map((x) => Math.round(x)).join(', ')}] (warm-up ${Math.round(t.warmupMs)}), ${t.rows} rows ${verdict(t)}${t.error ? ` error: ${t.error}` : ''}`);
        }
      } finally {
        await ro.close();
      }
    }

    // 6. The same on 25.8.
    let current: ChdbResult | undefined;
    const chdbShape: Shape = { calls: CHDB_CALLS, loops: Math.max(4, Math.round((LOOPS * CHDB_CALLS) / CALLS)), days: DAYS };
    if (args['no-chdb']) notes.push('--no-chdb: ClickHouse 25.8 skipped');
    else if (chdbPython() === undefined) notes.push('chdb not installed (bash test/modern/run.sh installs it): ClickHouse 25.8 skipped');
    else {
      if (rebuild) {
        copies = await exportRollupTables(ch, work);
        say(`copied the rollup job's tables for 25.8: ${copies.map((c) => `${c.table} ${c.rows.toLocaleString()} rows`).join(', ')}`);
      }
      const statements = (await loadMigrations(migrations.dir)).flatMap((m) => m.statements);
      const scaled = CHDB_CALLS !== CALLS;
      if (scaled) notes.push(`25.8 (chdb) loaded ${CHDB_CALLS.toLocaleString()} calls over ${chdbShape.loops.toLocaleString()} loops (--chdb-calls), not the 18.16 size`);
      say(`25.8 (chdb): ${chdbShape.calls.toLocaleString()} calls over ${chdbShape.loops.toLocaleString()} loops${scaled ? ' (scaled down by --chdb-calls)' : ''}`);
      current = await runChdb(
        {
          database: DB,
          migrations: statements,
          load: loadSql(chdbShape).chunks.map((c) => ({ label: `loops ${c.fromLoop}..${c.toLoop - 1}`, sql: c.sql })),
          imports: copies,
          queries: [...(args['no-views'] ? [] : [...VIEW_QUERIES, ...rollupQueries]), ...FLOOR_QUERIES, ...panelReads],
          fingerprint: FINGERPRINT_SQL,
          runs: RUNS,
          slowWarmupMs: SLOW_WARMUP_MS,
        },
        work,
      );
      for (const q of current.queries) {
        const panel = panelReads.find((p) => p.view === q.view);
        if (panel) grafana.set(q.view, { ...grafana.get(q.view), view: q.view, current: q });
        else put(q.view, { current: q });
      }
      if (!scaled && current.fingerprint === fingerprint?.fingerprint) notes.push('18.16 and 25.8 loaded the same rows (the fingerprint sums agree)');
      else if (!scaled) notes.push(`18.16 and 25.8 loaded DIFFERENT rows: 18.16 ${fingerprint?.fingerprint}; 25.8 ${current.fingerprint}`);
    }

    // 7. Ingest with and without a rollup worker.
    let ingest: IngestRun[] | undefined;
    if (!args['no-rollups'] && rollupsCli && !workerCli) notes.push('`agentledger worker` does not exist in this build: ingest comparison skipped');
    if (args['no-ingest']) notes.push('--no-ingest: the ingest comparison skipped');
    else if (!args['no-rollups'] && rollupsCli && workerCli) ingest = await ingestComparison(ch, topics, groups);

    // Report.
    const w = Math.max(...[...table.keys()].map((k) => k.length), 4);
    const lines: string[] = [];
    lines.push('');
    lines.push(`agentledger rollups benchmark  ${new Date().toISOString().slice(0, 19)}Z   node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}, load avg ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    lines.push(
      `data: ${CALLS.toLocaleString()} model calls, ${LOOPS.toLocaleString()} loops (${load.forks} forks), ${DAYS} days; ${loaded.rows.toLocaleString()} envelope rows; reads relative to 2026-11-01 00:00 UTC`,
    );
    lines.push(
      `load, ${oldEngine}: ${loaded.seconds.toFixed(1)} s, ${Math.round(loaded.rows / loaded.seconds).toLocaleString()} rows/s` +
        (current ? `;  ${current.engine} (chdb ${current.chdb}): ${current.rows.toLocaleString()} rows in ${current.loadSeconds.toFixed(1)} s, ${Math.round(current.rows / current.loadSeconds).toLocaleString()} rows/s` : ''),
    );
    lines.push(`reads: median of ${RUNS} runs after a warm-up, ms at the client (* one run: the warm-up took over ${SLOW_WARMUP_MS / 1000} s); target < ${TARGET_MS} ms`);
    lines.push('');
    lines.push(`${'view'.padEnd(w)}  ${'18.16 ms'.padStart(9)} ${'rows'.padStart(6)} ${''.padEnd(4)}  ${'25.8 ms'.padStart(9)} ${'rows'.padStart(6)} ${''.padEnd(4)}  note`);
    for (const r of table.values()) {
      lines.push(
        `${r.view.padEnd(w)}  ${fmtMs(r.old).padStart(9)} ${(r.old ? String(r.old.rows) : '-').padStart(6)} ${verdict(r.old).padEnd(4)}  ${fmtMs(r.current).padStart(9)} ${(r.current ? String(r.current.rows) : '-').padStart(6)} ${verdict(r.current).padEnd(4)}  ${[r.note, r.old?.error, r.current?.error].filter(Boolean).join('; ')}`,
      );
    }
    const all = [...table.values()].flatMap((r) => [r.old, r.current]).filter((t): t is Timing => t !== undefined);
    const passed = all.filter((t) => verdict(t) === 'PASS').length;
    lines.push('');
    lines.push(`views under ${TARGET_MS} ms: ${passed} of ${all.length} reads`);
    if (api.size > 0) {
      const aw = Math.max(...[...api.keys()].map((k) => k.length), 8);
      lines.push('');
      lines.push(`API of agentledger serve (${READONLY_USER}), HTTP at the client, median of ${RUNS} after a warm-up; data ${SINCE_30D.slice(0, 10)}..${UNTIL.slice(0, 10)}, "since 7d" = since ${SINCE_7D}`);
      lines.push(`${'endpoint'.padEnd(aw)}  ${'ms'.padStart(9)} ${'rows'.padStart(7)} ${'bytes'.padStart(10)}  verdict`);
      // A failed request shows how long it took to fail (e.g. the ClickHouse client's request timeout).
      const apiMs = (t: ApiTiming): string => (t.missing ? '-' : t.error !== undefined && Number.isFinite(t.warmupMs) ? `>${Math.round(t.warmupMs)}` : fmtMs(t));
      for (const [name, t] of api) lines.push(`${name.padEnd(aw)}  ${apiMs(t).padStart(9)} ${String(t.rows).padStart(7)} ${String(t.bytes ?? '-').padStart(10)}  ${apiVerdict(t)}${t.error ? ` ${t.error}` : ''}`);
      // The raw endpoints beside what an exact answer at query time costs at least (FLOOR_QUERIES).
      for (const q of FLOOR_QUERIES) {
        const f = table.get(q.view);
        lines.push(`${q.view.padEnd(aw)}  ${fmtMs(f?.old).padStart(9)}  (25.8: ${fmtMs(f?.current)} ms)`);
      }
      const present = [...api.values()].filter((t) => !t.missing);
      const met = present.filter((t) => apiVerdict(t) === '< 1 s').length;
      lines.push(`API: ${met} of ${present.length} endpoints under ${TARGET_MS} ms${present.length < api.size ? `; ${api.size - present.length} missing (404: not merged yet)` : ''}`);
    }
    if (grafana.size > 0) {
      const gw = Math.max(...[...grafana.keys()].map((k) => k.length), 8);
      lines.push('');
      lines.push(`Grafana panels (${READONLY_USER}; 25.8 via chdb), macros expanded for the range ending 2026-11-01 00:00 UTC, median of ${RUNS} after a warm-up`);
      lines.push(`${'panel'.padEnd(gw)}  ${'18.16 ms'.padStart(9)} ${'rows'.padStart(6)} ${'verdict'.padEnd(7)}  ${'25.8 ms'.padStart(9)} ${'rows'.padStart(6)} verdict`);
      for (const r of grafana.values())
        lines.push(
          `${r.view.padEnd(gw)}  ${fmtMs(r.old).padStart(9)} ${(r.old ? String(r.old.rows) : '-').padStart(6)} ${panelVerdict(r.old).padEnd(7)}  ${fmtMs(r.current).padStart(9)} ${(r.current ? String(r.current.rows) : '-').padStart(6)} ${panelVerdict(r.current)}${[r.old?.error, r.current?.error].filter(Boolean).map((e) => ` ${e}`).join(';')}`,
        );
      for (const [engine, pick] of [['18.16', (r: Row) => r.old], ['25.8', (r: Row) => r.current]] as const) {
        const ts = [...grafana.values()].map(pick).filter((t): t is Timing => t !== undefined);
        if (ts.length > 0) lines.push(`Grafana, ${engine}: ${ts.filter((t) => panelVerdict(t) === '< 1 s').length} of ${ts.length} panel queries under ${TARGET_MS} ms`);
      }
    }
    for (const m of memory) lines.push('', ...memoryTable(m.stage, m.reads, limitBytes));
    if (rebuild) {
      lines.push(`rollups rebuild of ${DAYS} days (18.16): ${rebuild.seconds.toFixed(1)} s (${rebuild.line})`);
      lines.push(`a rollups sweep after it, no row ingested since: ${sweepSeconds?.toFixed(1)} s (${sweepLine})`);
    }
    if (ingest) {
      const alone = median(ingest.filter((r) => r.label === 'alone').map((r) => r.rate));
      const withWorker = median(ingest.filter((r) => r.label === 'with worker').map((r) => r.rate));
      const ratio = withWorker / alone;
      lines.push(
        `ingest into the loaded database, ${(INGEST_LOOPS * INGEST_PER_LOOP).toLocaleString()} envelopes (runs: ${ingest.map((r) => `${r.label} ${Math.round(r.rate).toLocaleString()}/s${r.label === 'with worker' ? ` ${r.sweeps} sweeps` : ''}`).join(', ')}):`,
      );
      lines.push(
        `  alone ${Math.round(alone).toLocaleString()} envelopes/s, with a worker sweeping every ${SWEEP_MS} ms (late window ${LATE_MS} ms) ${Math.round(withWorker).toLocaleString()} envelopes/s: ratio ${ratio.toFixed(2)} ${ratio >= TARGET_RATIO ? 'PASS' : 'FAIL'} (>= ${TARGET_RATIO})`,
      );
    }
    for (const n of notes) lines.push(`note: ${n}`);
    lines.push(`whole run: ${((performance.now() - benchStarted) / 60_000).toFixed(1)} min`);
    lines.push(
      `reproduce: npm run bench:rollups -- --calls ${CALLS} --loops ${LOOPS} --days ${DAYS}${CHDB_CALLS !== CALLS ? ` --chdb-calls ${CHDB_CALLS}` : ''}${(['no-chdb', 'no-rollups', 'no-views', 'no-serve', 'no-grafana', 'no-ingest', 'no-memory'] as const).filter((o) => args[o]).map((o) => ` --${o}`).join('')} (local stack up; chdb from bash test/modern/run.sh)`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  } finally {
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (stopping) return; // the signal handler exits once it has cleaned up
    process.stderr.write(`rollups bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
