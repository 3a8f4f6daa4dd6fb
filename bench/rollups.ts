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
 * --no-views and --no-ingest skip 2 (and 3's view reads) and 7.
 * Then one table per step, and the throwaway database, topic, groups and Redis keys
 * are dropped (also on failure; --keep leaves the database).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import type { ClickHouseClient } from '@clickhouse/client';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { MIGRATIONS_DIR } from '../src/cli/migrate.js';
import { parseConfig } from '../src/config/index.js';
import { createLogger } from '../src/observability/logger.js';
import { createClickHouse } from '../src/sink/clickhouse/client.js';
import { loadMigrations, migrate } from '../src/sink/clickhouse/migrate.js';
import { expandMacros } from '../test/support/grafana-macros.js';
import { median, sayer } from './support.js';

const HELP = `Usage: npm run bench:rollups -- [options]
       node dist/bench/rollups.js [options]

Loads a month of loop-runtime envelopes into a throwaway ClickHouse database
(generated inside ClickHouse), times every dashboard view on ClickHouse 18.16
and on ClickHouse 25.8 (chdb), times \`agentledger rollups rebuild\` and the
rollup views, and compares ingest throughput with and without a rollup worker.
Needs the local stack (infra/stack.sh up); chdb from \`bash test/modern/run.sh\`.

Options:
  --calls N             ModelCalled envelopes to load (default 10000000)
  --loops N             loops (a quarter roots, the rest sub-agents; default 200000)
  --days N              days before 2026-11-01 the loops are spread over (default 30)
  --chdb-calls N        calls (and loops in proportion) on ClickHouse 25.8 (default: --calls)
  --no-chdb             skip ClickHouse 25.8
  --no-rollups          skip rollups rebuild and the ingest comparison
  --no-views            skip timing the dashboard views (2, and the rollup views of 3), on both engines
  --no-serve            skip timing the API endpoints of \`agentledger serve\` (4; the floor is timed anyway)
  --no-grafana          skip timing the Grafana panels' queries (5), on both engines
  --no-ingest           skip the ingest comparison (7)
  --runs N              timed runs per view after one warm-up (default 3)
  --ingest-loops N      produce-demo loops for the ingest comparison (default 4000)
  --ingest-envelopes N  envelopes per loop for it (default 50)
  --sweep-ms N          the worker's AGENTLEDGER_ROLLUP_SWEEP_MS during it (default 5000)
  --late-ms N           the worker's AGENTLEDGER_ROLLUP_LATE_MS during it (default 60000: the month
                        was loaded minutes before; with the 15 min default every sweep would
                        redo all of it as just stored, which a deployment sees once, after a backfill)
  --keep                leave the database (dropped otherwise, also on failure)
  --print-sql           print the first load statement and the reads, and exit
  -h, --help            this text`;

const OPTIONS = {
  calls: { type: 'string', default: '10000000' },
  loops: { type: 'string', default: '200000' },
  days: { type: 'string', default: '30' },
  'chdb-calls': { type: 'string' },
  'no-chdb': { type: 'boolean', default: false },
  'no-rollups': { type: 'boolean', default: false },
  'no-views': { type: 'boolean', default: false },
  'no-serve': { type: 'boolean', default: false },
  'no-grafana': { type: 'boolean', default: false },
  'no-ingest': { type: 'boolean', default: false },
  runs: { type: 'string', default: '3' },
  'ingest-loops': { type: 'string', default: '4000' },
  'ingest-envelopes': { type: 'string', default: '50' },
  'sweep-ms': { type: 'string', default: '5000' },
  'late-ms': { type: 'string', default: '60000' },
  keep: { type: 'boolean', default: false },
  'print-sql': { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;
const parsed = (() => {
  try {
    return parseArgs({ options: OPTIONS });
  } catch (err) {
    process.stderr.write(`rollups bench: ${err instanceof Error ? err.message : String(err)}\n${HELP}\n`);
    process.exit(2);
  }
})();
const args = parsed.values;
if (args.help) {
  process.stdout.write(`${HELP}\n`);
  process.exit(0);
}
const num = (name: string, text: string | undefined): number => {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) {
    process.stderr.write(`rollups bench: --${name} takes a whole number >= 1\n${HELP}\n`);
    process.exit(2);
  }
  return n;
};
const CALLS = num('calls', args.calls);
const LOOPS = num('loops', args.loops);
const DAYS = num('days', args.days);
const CHDB_CALLS = args['chdb-calls'] === undefined ? CALLS : num('chdb-calls', args['chdb-calls']);
const RUNS = num('runs', args.runs);
const INGEST_LOOPS = num('ingest-loops', args['ingest-loops']);
const INGEST_PER_LOOP = num('ingest-envelopes', args['ingest-envelopes']);
const SWEEP_MS = num('sweep-ms', args['sweep-ms']);
const LATE_MS = num('late-ms', args['late-ms']);
if (LOOPS < 4 || CALLS < LOOPS || LOOPS > 100_000_000 || CALLS / LOOPS > 10_000) {
  process.stderr.write('rollups bench: needs --loops >= 4 and 1 <= --calls / --loops <= 10000\n');
  process.exit(2);
}

const TARGET_MS = 1000;
const TARGET_RATIO = 0.8;
/** The data ends here (exclusive), a fixed date so every run loads the same rows; reads are relative to it. */
const END_UNIX = Date.UTC(2026, 10, 1) / 1000;
const END = `toDateTime('2026-11-01 00:00:00', 'UTC')`;
const TS = `${Date.now()}_${randomBytes(2).toString('hex')}`;
const DB = `bench_rollups_${TS}`;
const REDIS_PREFIX = `benchrollups${TS}`;
const say = sayer('rollups');
const benchStarted = performance.now();
const log = createLogger('warn');

/**
 * A throwaway database needs a user that may create one: the local stack's
 * `agentledger_test` (agentledger's own writer has no DDL), unless the
 * environment names another.
 */
const CLICKHOUSE_USER = process.env['AGENTLEDGER_CLICKHOUSE_USER'] ?? 'agentledger_test';
const CLICKHOUSE_PASSWORD = process.env['AGENTLEDGER_CLICKHOUSE_PASSWORD'] ?? (CLICKHOUSE_USER === 'agentledger_test' ? 'agentledger_test' : '');
const CLICKHOUSE_URL = process.env['AGENTLEDGER_CLICKHOUSE_URL'] ?? 'http://127.0.0.1:8123';
const KAFKA_BROKERS = process.env['AGENTLEDGER_KAFKA_BROKERS'] ?? '127.0.0.1:9092';
const REDIS_URL = process.env['AGENTLEDGER_REDIS_URL'];

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '',
    AGENTLEDGER_CLICKHOUSE_URL: CLICKHOUSE_URL,
    AGENTLEDGER_CLICKHOUSE_USER: CLICKHOUSE_USER,
    AGENTLEDGER_CLICKHOUSE_PASSWORD: CLICKHOUSE_PASSWORD,
    AGENTLEDGER_CLICKHOUSE_DATABASE: DB,
    AGENTLEDGER_KAFKA_BROKERS: KAFKA_BROKERS,
    ...(REDIS_URL === undefined ? {} : { AGENTLEDGER_REDIS_URL: REDIS_URL }),
    ...(process.env['AGENTLEDGER_REDIS_PASSWORD'] === undefined ? {} : { AGENTLEDGER_REDIS_PASSWORD: process.env['AGENTLEDGER_REDIS_PASSWORD'] }),
    // A queue prefix of this run's own: its version counter and jobs never meet another deployment's.
    AGENTLEDGER_QUEUE_PREFIX: REDIS_PREFIX,
    AGENTLEDGER_METRICS_PORT: '0',
    AGENTLEDGER_LOG_LEVEL: 'warn',
    // The lines are read by a person, and by patterns here (serve's address).
    AGENTLEDGER_LOG_FORMAT: 'text',
    ...extra,
  };
}

// ---------------------------------------------------------------- the data

/** The runtime's price table (src/demo/traffic/spend-plan.ts), in picodollars per token. */
const MODELS = [
  { provider: 'anthropic', model: 'claude-sonnet-4-5', inPico: 3_000_000, outPico: 15_000_000 },
  { provider: 'anthropic', model: 'claude-haiku-4-5', inPico: 1_000_000, outPico: 5_000_000 },
  { provider: 'openai', model: 'gpt-4.1', inPico: 2_000_000, outPico: 8_000_000 },
  { provider: 'openai', model: 'gpt-4.1-mini', inPico: 400_000, outPico: 1_600_000 },
  { provider: 'google', model: 'gemini-2.5-flash', inPico: 300_000, outPico: 2_500_000 },
  { provider: 'ollama', model: 'llama3.1:8b', inPico: 0, outPico: 0 },
] as const;
/** A loop's main model, weighted: sonnet 6/20, haiku 4/20, gpt-4.1, mini and gemini 3/20 each, ollama 1/20. */
const PRIMARY_MODEL = [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5];
const TASKS = ['fix-flaky-tests', 'refactor-auth', 'upgrade-deps', 'write-docs', 'triage-issues', 'migrate-db', 'review-pr', 'port-to-go'];
const DEFINITIONS = ['researcher', 'coder', 'reviewer', 'tester', 'planner'];
const TOOLS = ['bash', 'read_file', 'write_file', 'grep', 'http_get'];
const DETECTORS = ['oscillation', 'zero-progress', 'depth'];
const CHILD_OUTCOMES = ['Completed', 'Failed', 'Completed', 'Stuck', 'Completed', 'BudgetExceeded', 'Completed', 'Completed'];
/** Model calls per BudgetCharged (their sum) and per ToolCalled. */
const BLOCK = 10;
/** Every FORK_EVERY-th root (index % FORK_EVERY = FORK_EVERY - 1) is a fork of the root before it. */
const FORK_EVERY = 167;
/** Loops per INSERT on 18.16 (about 1.3M rows at the default shape); 25.8 takes the same statements. */
const TARGET_CHUNK_ROWS = 1_300_000;

const sqlArray = (xs: readonly (string | number)[]): string => `[${xs.map((x) => (typeof x === 'number' ? String(x) : `'${x}'`)).join(', ')}]`;

/** The 8 hex digits of loop i's id: i times an odd constant mod 2^32, a bijection, so ids are unique and scattered (loops of one insert do not sit together in the key order). */
function loopId(i: number): string {
  return `loop-${((BigInt(i) * 2654435761n) % 4294967296n).toString(16).padStart(8, '0')}`;
}

export interface Shape {
  readonly calls: number;
  readonly loops: number;
  readonly days: number;
}

export interface Load {
  readonly roots: number;
  readonly forks: number;
  /** One INSERT … SELECT per chunk of loops, with what it covers. */
  readonly chunks: readonly { readonly fromLoop: number; readonly toLoop: number; readonly sql: string }[];
}

/**
 * The load, as SQL that ClickHouse 18.16 and 25.8 both run to the same rows.
 * Every row is a pure function of (loop index, position in the loop): no
 * randomness, so each run, and each engine, loads the same data.
 *
 * Loops 0..R-1 (R = a quarter) are roots; loop x >= R is a sub-agent of
 * (x - R) div 2, so every parent has two children and depth is at most 2.
 * Loop x makes K(x) model calls, K = calls / loops ± up to 40 in pairs that
 * cancel, so the total is exactly --calls. A loop's envelopes, seq 1, 2, …:
 *   LoopStarted (name, parent, depth), a SubAgentSpawned per child,
 *   blocks of BLOCK ModelCalled + a BudgetCharged of their summed cost
 *   (action_type model) + a ToolCalled (1 in 10 an error), the last block short,
 *   a SubAgentCompleted per child (outcome, child_spend = the child's total),
 *   a ConvergenceWarning in 1 loop of 7, LoopFinished (outcome, total_spend).
 * Every FORK_EVERY-th root is a fork of the root before it: that root's first
 * at_seq envelopes replayed (LoopStarted, its spawns, up to 5 model calls),
 * ForkedFrom, then its own envelopes from its first SubAgentSpawned on. So
 * ledgers reconcile, except in the loops holding one of the 1-in-2000 model
 * calls stored with verdict mismatch.
 * Roots start at scattered times over the days (a fork 2 h after its source),
 * sub-agents 2 min per depth after their root, envelopes 2..24 s apart.
 */
export function loadSql(shape: Shape): Load {
  const N = shape.loops;
  const R = Math.max(1, Math.round(N / 4));
  const q = Math.floor(shape.calls / N);
  const rem = shape.calls % N;
  const A = Math.min(40, q - 1);
  const t0 = END_UNIX - shape.days * 86_400;
  // Room at the end of the window for a fork's 2 h delay, sub-agents' offsets and the longest loop.
  const longest = 2 * (q + 1 + A) + 20;
  const slack = 7_200 + 600 + longest * 24 * 2;
  const window = shape.days * 86_400 - slack;
  if (window < 86_400 / 2) throw new Error(`--days ${shape.days} is too short for ${q} calls per loop`);

  const h = (x: string, salt: number): string => `intHash64(${x} * 7919 + ${salt})`;
  const parent = (x: string): string => `intDiv(${x} - ${R}, 2)`;
  const delta = (x: string): string =>
    A === 0 ? '0' : `(if(${x} % 2 = 1, -1, if(${x} + 1 < ${N}, 1, 0)) * (toInt64(${h(`intDiv(${x}, 2)`, 1)} % ${2 * A + 1}) - ${A}))`;
  const calls = (x: string): string => `(${q} + toInt64(${x} < ${rem}) + ${delta(x)})`;
  const children = (x: string): string => `(toInt64(${R} + 2 * ${x} < ${N}) + toInt64(${R} + 2 * ${x} + 1 < ${N}))`;
  // The divisor is Int64 on purpose: 18.16 types Int64 % 167 as Int8 (the divisor's width, signed) and wraps 166 to -90.
  const isFork = (x: string): string => `(${x} < ${R} AND ${x} % toInt64(${FORK_EVERY}) = ${FORK_EVERY - 1})`;
  const warned = (x: string): string => `toInt64(${h(x, 2)} % 7 = 0)`;
  const depth = (x: string): string => `if(${x} < ${R}, 0, if(${parent(x)} < ${R}, 1, 2))`;
  const root = (x: string): string => `if(${x} < ${R}, ${x}, if(${parent(x)} < ${R}, ${parent(x)}, ${parent(parent(x))}))`;
  const base = (r: string): string => `(${t0} + toInt64(${h(r, 3)} % ${window}))`;
  const rootStart = (r: string): string => `if(${isFork(r)}, ${base(`(${r} - 1)`)} + 7200, ${base(r)})`;
  const start = (x: string): string => `(${rootStart(root(x))} + 120 * ${depth(x)} + 30 * (${x} % 2))`;
  const step = (x: string): string => `(2 + toInt64(${h(x, 5)} % 23))`;
  const id = (x: string): string => `concat('loop-', substring(lower(hex(bitAnd(toUInt64(${x}) * 2654435761, 4294967295) + 4294967296)), 3))`;
  const name = (x: string): string => `if(${x} < ${R}, ${sqlArray(TASKS)}[${h(x, 6)} % ${TASKS.length} + 1], ${sqlArray(DEFINITIONS)}[${h(x, 6)} % ${DEFINITIONS.length} + 1])`;
  const outcome = (x: string): string =>
    `if(${x} < ${R}, if(${x} % 5 = 4, 'Failed', 'Completed'), ${sqlArray(CHILD_OUTCOMES)}[${h(x, 7)} % ${CHILD_OUTCOMES.length} + 1])`;
  const errorOf = (o: string): string =>
    `multiIf(${o} = 'Failed', 'tool bash: exit status 1', ${o} = 'Stuck', 'no progress in 3 iterations (zero-progress)', ${o} = 'BudgetExceeded', 'budget exceeded: usd', '')`;
  // Call j of loop x: its hash, model, tokens and cost.
  const ch = (x: string, j: string): string => `intHash64(${x} * 100003 + ${j})`;
  const model = (x: string, j: string): string => `if(${ch(x, j)} % 10 < 8, ${sqlArray(PRIMARY_MODEL)}[${h(x, 4)} % 20 + 1], bitShiftRight(${ch(x, j)}, 4) % 6)`;
  const tokensIn = (x: string, j: string): string => `toInt64(500 + bitShiftRight(${ch(x, j)}, 8) % 15000)`;
  const tokensOut = (x: string, j: string): string => `toInt64(20 + bitShiftRight(${ch(x, j)}, 24) % 1500)`;
  const cost = (x: string, j: string): string =>
    `(${tokensIn(x, j)} * ${sqlArray(MODELS.map((m) => m.inPico))}[${model(x, j)} + 1] + ${tokensOut(x, j)} * ${sqlArray(MODELS.map((m) => m.outPico))}[${model(x, j)} + 1])`;
  const total = (x: string): string => `arraySum(arrayMap(j -> ${cost(x, 'j')}, range(toUInt64(${calls(x)}))))`;
  const usdText = (pico: string): string => `toString(${pico} / 1e12)`;

  const chunkLoops = Math.max(1, Math.floor(TARGET_CHUNK_ROWS / (shape.calls / N + 14)));
  const chunks: { fromLoop: number; toLoop: number; sql: string }[] = [];
  for (let from = 0; from < N; from += chunkLoops) {
    const n = Math.min(chunkLoops, N - from);
    const sql = `INSERT INTO envelopes (loop_id, seq, time, time_text, kind, kind_class, hash, computed_hash, payload, verdict, detail, evidence,
    kafka_topic, kafka_partition, kafka_offset, ingested_at,
    model_provider, model_name, input_tokens, output_tokens, cost_pico, cost_usd_text, duration_ms,
    budget_pico, budget_usd_text, action_type, loop_name, parent_loop_id, depth, loop_seed, config_hash,
    child_loop_id, definition, outcome, error, spend_pico, spend_raw, spend_usd_text,
    fork_source, fork_at_seq, tool, tool_is_error, detector)
SELECT
    ${id('L')} AS e_loop_id,
    toUInt64(pos + 1) AS e_seq,
    toDateTime(toUInt32(t)) AS e_time,
    concat(replaceOne(toString(e_time, 'UTC'), ' ', 'T'), 'Z') AS e_time_text,
    k AS e_kind,
    k AS e_kind_class,
    lower(hex(SHA256(concat(e_loop_id, '/', toString(e_seq))))) AS e_hash,
    if(mismatch, lower(hex(SHA256(concat('tampered/', e_loop_id, '/', toString(e_seq))))), e_hash) AS e_computed_hash,
    multiIf(k = 'ModelCalled',
            concat('{"action_id":"act-', toString(j + 1), '-model","duration_ms":', toString(dur), ',"model":"', mdl, '","provider":"', prov,
                   '","request":{"max_tokens":4096,"messages":', toString(2 * j + 2), ',"model":"', mdl,
                   '"},"response":{"content":[{"text":"ok","type":"text"}],"stop_reason":"tool_use"},"usage":{"cost_usd":', ${usdText('c')},
                   ',"in":', toString(tin), ',"out":', toString(tout), '}}'),
            k = 'BudgetCharged', concat('{"action_type":"model","usd":', ${usdText('charge')}, '}'),
            k = 'ToolCalled', concat('{"action_id":"act-', toString(b + 1), '-tool","duration_ms":', toString(dur), ',"is_error":', if(tool_err, 'true', 'false'), ',"tool":"', tl, '"}'),
            concat('{"bench":"', k, '"}')) AS e_payload,
    if(mismatch, 'mismatch', 'ok') AS e_verdict,
    if(mismatch, 'hash mismatch', '') AS e_detail,
    if(mismatch, concat('{"computed":"', e_computed_hash, '"}'), '') AS e_evidence,
    'bench.rollups' AS e_kafka_topic,
    toUInt32(L % 4) AS e_kafka_partition,
    toUInt64(L * 100000 + pos) AS e_kafka_offset,
    toDateTime(toUInt32(t + 2)) AS e_ingested_at,
    if(k = 'ModelCalled', prov, '') AS e_model_provider,
    if(k = 'ModelCalled', mdl, '') AS e_model_name,
    if(k = 'ModelCalled', tin, 0) AS e_input_tokens,
    if(k = 'ModelCalled', tout, 0) AS e_output_tokens,
    if(k = 'ModelCalled', c, 0) AS e_cost_pico,
    if(k = 'ModelCalled', ${usdText('c')}, '') AS e_cost_usd_text,
    if(k IN ('ModelCalled', 'ToolCalled'), dur, 0) AS e_duration_ms,
    if(k = 'BudgetCharged', charge, 0) AS e_budget_pico,
    if(k = 'BudgetCharged', ${usdText('charge')}, '') AS e_budget_usd_text,
    if(k = 'BudgetCharged', 'model', '') AS e_action_type,
    if(k = 'LoopStarted', ${name('src')}, '') AS e_loop_name,
    if(k = 'LoopStarted' AND src >= ${R}, ${id(parent('src'))}, '') AS e_parent_loop_id,
    if(k = 'LoopStarted', ${depth('src')}, 0) AS e_depth,
    if(k = 'LoopStarted', toInt64(${h('src', 10)} % 1000000), 0) AS e_loop_seed,
    if(k = 'LoopStarted', lower(hex(SHA256(concat('config/', ${name('src')})))), '') AS e_config_hash,
    if(k IN ('SubAgentSpawned', 'SubAgentCompleted'), ${id('child')}, '') AS e_child_loop_id,
    if(k IN ('SubAgentSpawned', 'SubAgentCompleted'), ${name('child')}, '') AS e_definition,
    multiIf(k = 'SubAgentCompleted', ${outcome('child')}, k = 'LoopFinished', ${outcome('src')}, '') AS e_outcome,
    ${errorOf('e_outcome')} AS e_error,
    multiIf(k = 'SubAgentCompleted', if(ci = 0, ct0, ct1), k = 'LoopFinished', tot, 0) AS e_spend_pico,
    if(k IN ('SubAgentCompleted', 'LoopFinished'), concat('{"iterations":0,"tokens":0,"usd":', ${usdText('e_spend_pico')}, ',"wall_clock_ms":0}'), '') AS e_spend_raw,
    if(k IN ('SubAgentCompleted', 'LoopFinished'), ${usdText('e_spend_pico')}, '') AS e_spend_usd_text,
    if(k = 'ForkedFrom', ${id('L - 1')}, '') AS e_fork_source,
    toUInt64(if(k = 'ForkedFrom', fork_at, 0)) AS e_fork_at_seq,
    if(k = 'ToolCalled', tl, '') AS e_tool,
    toUInt8(k = 'ToolCalled' AND tool_err) AS e_tool_is_error,
    if(k = 'ConvergenceWarning', ${sqlArray(DETECTORS)}[${h('src', 9)} % ${DETECTORS.length} + 1], '') AS e_detector
FROM
(
    SELECT L, pos, src, q, fork_at, tot, ct0, ct1, kk, nc,
           kk + 2 * intDiv(kk + ${BLOCK - 1}, ${BLOCK}) AS mb,
           q - nc - 1 AS qb, intDiv(greatest(qb, 0), ${BLOCK + 2}) AS b, qb - b * ${BLOCK + 2} AS r, least(${BLOCK}, kk - b * ${BLOCK}) AS gb,
           b * ${BLOCK} + r AS j,
           multiIf(forked_row, 'ForkedFrom', q = 0, 'LoopStarted', q <= nc, 'SubAgentSpawned',
                   q <= nc + mb, multiIf(r < gb, 'ModelCalled', r = gb, 'BudgetCharged', 'ToolCalled'),
                   q <= 2 * nc + mb, 'SubAgentCompleted', q = 2 * nc + mb + 1 AND w = 1, 'ConvergenceWarning', 'LoopFinished') AS k,
           if(q <= nc, q - 1, q - nc - mb - 1) AS ci,
           ${R} + 2 * src + ci AS child,
           if(forked_row, start_l, st + q * sp) AS t,
           ${model('src', 'j')} AS m,
           ${sqlArray(MODELS.map((x) => x.provider))}[m + 1] AS prov,
           ${sqlArray(MODELS.map((x) => x.model))}[m + 1] AS mdl,
           ${tokensIn('src', 'j')} AS tin,
           ${tokensOut('src', 'j')} AS tout,
           tin * ${sqlArray(MODELS.map((x) => x.inPico))}[m + 1] + tout * ${sqlArray(MODELS.map((x) => x.outPico))}[m + 1] AS c,
           k = 'ModelCalled' AND ${ch('src', 'j')} % 2000 = 7 AS mismatch,
           toInt64(300 + bitShiftRight(${ch('src', 'j')}, 40) % 20000) AS dur,
           arraySum(arrayMap(i -> ${cost('src', `(b * ${BLOCK} + i)`)}, range(toUInt64(greatest(0, gb))))) AS charge,
           ${sqlArray(TOOLS)}[${h(`(src * 1000 + b)`, 8)} % ${TOOLS.length} + 1] AS tl,
           ${h(`(src * 1000 + b)`, 11)} % 10 = 0 AS tool_err
    FROM
    (
        -- Per envelope: whose envelope it is (src: the loop, or for a fork's replays its source) and where in that loop (q).
        SELECT L, toInt64(p) AS pos, fork_at, tot, ct0, ct1, start_l,
               is_fork AND pos < fork_at AS replayed_row,
               is_fork AND pos = fork_at AS forked_row,
               if(replayed_row, L - 1, L) AS src,
               if(is_fork AND pos > fork_at, pos - fork_at, pos) AS q,
               if(replayed_row, k_s, k_l) AS kk,
               if(replayed_row, nc_s, nc_l) AS nc,
               if(replayed_row, w_s, w_l) AS w,
               if(replayed_row, start_s, start_l) AS st,
               if(replayed_row, step_s, step_l) AS sp
        FROM
        (
            -- Per loop L, and for a fork its source S = L - 1: calls, children, warning, start, step; totals; envelopes.
            SELECT toInt64(number) + ${from} AS L,
                   ${isFork('L')} AS is_fork,
                   ${calls('L')} AS k_l, ${calls('(L - 1)')} AS k_s,
                   ${children('L')} AS nc_l, ${children('(L - 1)')} AS nc_s,
                   ${warned('L')} AS w_l, ${warned('(L - 1)')} AS w_s,
                   ${start('L')} AS start_l, ${start('(L - 1)')} AS start_s,
                   ${step('L')} AS step_l, ${step('(L - 1)')} AS step_s,
                   if(is_fork, 1 + nc_s + least(k_s, 5), 0) AS fork_at,
                   2 + 2 * nc_l + k_l + 2 * intDiv(k_l + ${BLOCK - 1}, ${BLOCK}) + w_l + fork_at AS n,
                   arraySum(arrayMap(j -> ${cost('L', 'j')}, range(toUInt64(k_l)))) AS tot,
                   ${total(`(${R} + 2 * L)`)} AS ct0,
                   ${total(`(${R} + 2 * L + 1)`)} AS ct1
            FROM numbers(${n})
        )
        ARRAY JOIN range(toUInt64(n)) AS p
    )
)
SETTINGS max_block_size = 4096`;
    chunks.push({ fromLoop: from, toLoop: from + n, sql });
  }
  let forks = 0;
  for (let x = FORK_EVERY - 1; x < R; x += FORK_EVERY) forks++;
  return { roots: R, forks, chunks };
}

/**
 * What the load wrote, in a few sums both engines compute the same way: equal
 * on 18.16 and 25.8 when both loaded the same shape, so the two timings are of
 * the same data. (Payloads are left out: Float64 texts may differ between versions.)
 */
const FINGERPRINT_SQL = `SELECT concat(toString(count()), ' rows, ', toString(uniqExact(loop_id)), ' loops, ', toString(countIf(kind_class = 'ModelCalled')), ' ModelCalled (',
  toString(countIf(verdict = 'mismatch')), ' mismatch), ', toString(countIf(kind_class = 'ForkedFrom')), ' forks, cost ', toString(sum(cost_pico)), ', budget ', toString(sum(budget_pico)),
  ', spend ', toString(sum(spend_pico)), ', seq ', toString(sum(seq)), ', time ', toString(sum(toUInt64(time))), ', ids ', toString(sum(cityHash64(loop_id, parent_loop_id, child_loop_id, fork_source)))) AS fingerprint
FROM envelopes`;

// ---------------------------------------------------------------- the reads

interface ViewQuery {
  readonly view: string;
  readonly sql: string;
}

/** Each dashboard view as a dashboard reads it (docs/spend.md, "Views for dashboards"): the last day or week where the view has a time. */
const VIEW_QUERIES: readonly ViewQuery[] = [
  {
    view: 'spend_calls',
    sql: `SELECT time, source, provider, model, input_tokens, output_tokens, cost_pico FROM spend_calls WHERE time >= ${END} - 86400 AND time < ${END} ORDER BY time DESC LIMIT 100`,
  },
  {
    view: 'spend_by_hour',
    sql: `SELECT hour, source, provider, model, calls, cost_pico_usd FROM spend_by_hour WHERE hour >= ${END} - 86400 AND hour < ${END} ORDER BY hour, source, provider, model`,
  },
  {
    view: 'spend_by_day',
    sql: `SELECT day, source, provider, model, calls, cost_pico_usd FROM spend_by_day WHERE day >= toDate(${END}) - 7 AND day < toDate(${END}) ORDER BY day, source, provider, model`,
  },
  { view: 'spend_by_loop_name', sql: 'SELECT name, loops, calls, cost_pico_usd FROM spend_by_loop_name ORDER BY toDecimal128(cost_pico_usd, 0) DESC LIMIT 10' },
  { view: 'subagent_outcomes', sql: "SELECT definition, outcome, subagents FROM subagent_outcomes WHERE outcome != 'Completed' ORDER BY subagents DESC" },
  { view: 'tool_error_rates', sql: 'SELECT tool, calls, errors, round(error_share * 100, 1) AS error_pct FROM tool_error_rates ORDER BY error_share DESC' },
  {
    view: 'convergence_warnings',
    sql: `SELECT day, detector, warnings, loops FROM convergence_warnings WHERE day >= toDate(${END}) - 7 AND day < toDate(${END}) ORDER BY day, detector`,
  },
  { view: 'unverified_spend', sql: 'SELECT loop_id, verdict, calls, cost_pico_usd FROM unverified_spend ORDER BY loop_id, verdict LIMIT 100' },
  {
    view: 'loop_reconciliation',
    sql: 'SELECT loop_id, model_minus_model_budget_pico, budget_minus_total_spend_pico, budget_minus_child_spend_pico FROM loop_reconciliation WHERE disagrees ORDER BY loop_id LIMIT 100',
  },
  {
    view: 'runtime_loops',
    sql: `SELECT loop_id, name, started_parent, finished_outcome, first_time, last_time, envelope_count FROM runtime_loops WHERE last_time >= ${END} - 86400 ORDER BY last_time DESC, loop_id LIMIT 100`,
  },
  // A tree's drill-down: the sub-agents one root spawned.
  { view: 'loop_spawns', sql: `SELECT child, spawned_by, spawn_definition FROM loop_spawns WHERE spawned_by = '${loopId(1)}' ORDER BY child` },
];

/**
 * The views of the rollup job's migrations (0013-0015), read after the
 * rebuild: the rollups for the same questions as spend_by_hour, spend_by_day,
 * a top-roots list; the tasks whose ledgers disagree, and one root's tree
 * (both placed by loop_roots, which the job fills). They are looked up after
 * migrating: a view that is missing is left out; one whose columns are not
 * the ones expected here is read whole (LIMIT 100) and marked so.
 */
const ROLLUP_QUERIES: readonly (ViewQuery & { readonly columns: readonly string[] })[] = [
  {
    view: 'spend_rollup_hourly',
    columns: ['hour', 'source', 'provider', 'model', 'calls_sum', 'cost_pico_sum'],
    sql: `SELECT hour, source, provider, model, sum(calls_sum) AS hour_calls, toString(sum(cost_pico_sum)) AS hour_cost_pico
FROM spend_rollup_hourly WHERE hour >= ${END} - 86400 AND hour < ${END} GROUP BY hour, source, provider, model ORDER BY hour, source, provider, model`,
  },
  {
    view: 'spend_rollup_daily',
    columns: ['day', 'source', 'provider', 'model', 'calls', 'cost_pico'],
    sql: `SELECT day, source, provider, model, sum(calls) AS day_calls, toString(sum(cost_pico)) AS day_cost_pico
FROM spend_rollup_daily WHERE day >= toDate(${END}) - 7 AND day < toDate(${END}) GROUP BY day, source, provider, model ORDER BY day, source, provider, model`,
  },
  {
    view: 'top_roots',
    columns: ['source', 'root_loop_id', 'calls', 'cost_pico', 'first_hour', 'last_hour'],
    // Ordered by the Decimal alone: 18.16 sorts (Decimal128, more keys) with LIMIT over 50k rows in ~1.5 s, by the Decimal alone in ~50 ms (docs/spend.md, "Rollups").
    sql: 'SELECT source, root_loop_id, calls, toString(cost_pico) AS root_cost_pico, first_hour, last_hour FROM top_roots ORDER BY cost_pico DESC LIMIT 100',
  },
  // The last day with the open hours live (0015): the rollups, plus a filtered read of envelopes FINAL.
  {
    view: 'spend_hourly_now',
    columns: ['hour', 'source', 'provider', 'model', 'loop_name', 'calls_sum', 'cost_pico_sum'],
    sql: `SELECT hour, source, provider, model, sum(calls_sum) AS hour_calls, toString(sum(cost_pico_sum)) AS hour_cost_pico
FROM spend_hourly_now WHERE hour >= ${END} - 86400 AND hour < ${END} GROUP BY hour, source, provider, model ORDER BY hour, source, provider, model`,
  },
  // Top loop names, and the event questions of 0010 from the rollups (0015).
  {
    view: 'spend_rollup_by_name',
    columns: ['loop_name', 'calls', 'cost_pico'],
    sql: 'SELECT loop_name, calls, toString(cost_pico) AS name_cost_pico FROM spend_rollup_by_name ORDER BY cost_pico DESC LIMIT 10',
  },
  {
    view: 'tool_errors_hourly',
    columns: ['hour', 'tool', 'calls', 'errors'],
    sql: `SELECT tool, sum(calls) AS tool_calls, sum(errors) AS tool_errors, round(sum(errors) / sum(calls) * 100, 1) AS error_pct
FROM tool_errors_hourly WHERE hour >= ${END} - 86400 AND hour < ${END} GROUP BY tool ORDER BY error_pct DESC, tool`,
  },
  {
    view: 'convergence_warnings_daily',
    columns: ['detector', 'day', 'warnings', 'loops'],
    sql: `SELECT day, detector, warnings, loops FROM convergence_warnings_daily WHERE day >= toDate(${END}) - 7 AND day < toDate(${END}) ORDER BY day, detector`,
  },
  {
    view: 'subagent_outcomes_daily',
    columns: ['day', 'definition', 'outcome', 'subagents'],
    sql: `SELECT definition, outcome, sum(subagents) AS n FROM subagent_outcomes_daily WHERE outcome != 'Completed' GROUP BY definition, outcome ORDER BY n DESC, definition, outcome`,
  },
  // The loops and tasks whose ledgers disagree, from the reconciliation rollups (0015).
  {
    view: 'loop_reconciliation_rollup',
    columns: ['loop_id', 'model_minus_model_budget_pico', 'budget_minus_total_spend_pico', 'budget_minus_child_spend_pico', 'disagrees'],
    sql: 'SELECT loop_id, toString(model_minus_model_budget_pico) AS m, toString(budget_minus_total_spend_pico) AS t, toString(budget_minus_child_spend_pico) AS c FROM loop_reconciliation_rollup WHERE disagrees ORDER BY loop_id LIMIT 100',
  },
  {
    view: 'root_reconciliation_rollup',
    columns: ['root_loop_id', 'loops', 'tree_model_cost_pico', 'loops_disagreeing'],
    sql: 'SELECT root_loop_id, loops, toString(tree_model_cost_pico) AS tree_cost, loops_disagreeing FROM root_reconciliation_rollup WHERE loops_disagreeing > 0 ORDER BY root_loop_id LIMIT 100',
  },
  // The tasks whose ledgers disagree somewhere in their tree (0014): through loop_reconciliation, so not a rollup read.
  {
    view: 'root_reconciliation',
    columns: ['root_loop_id', 'loops', 'tree_model_cost_pico', 'loops_disagreeing'],
    sql: 'SELECT root_loop_id, loops, toString(tree_model_cost_pico) AS tree_cost, loops_disagreeing FROM root_reconciliation WHERE loops_disagreeing > 0 ORDER BY root_loop_id LIMIT 100',
  },
  // A task's drill-down: one root's tree with its subtree costs.
  {
    view: 'loop_tree',
    columns: ['loop_id', 'parent_loop_id', 'root_loop_id', 'loop_name', 'depth', 'own_cost_pico', 'subtree_cost_pico'],
    sql: `SELECT loop_id, parent_loop_id, loop_name, depth, toString(own_cost_pico) AS own_cost, toString(subtree_cost_pico) AS subtree_cost FROM loop_tree WHERE root_loop_id = '${loopId(1)}' ORDER BY depth, loop_id`,
  },
];

/**
 * The floor of an exact answer at query time: what any raw `spend` must do at
 * least, whatever its SQL, when it reads the stored envelopes when asked. The
 * table is a ReplacingMergeTree (a redelivered record is a second row until a
 * merge, which may never come), so every ModelCalled row must be read and
 * deduplicated by the sort key before its cost can count; the verdicts, the
 * forks' replays and the grouping come on top. From a scan of one column to
 * the deduplicated cost sum; timed on both engines (step 4, and 6), printed
 * beside the raw spend endpoints.
 */
const FLOOR_QUERIES: readonly ViewQuery[] = [
  { view: 'floor: scan (ModelCalled rows)', sql: "SELECT count() FROM envelopes WHERE kind_class = 'ModelCalled'" },
  { view: 'floor: uniqExact(key)', sql: "SELECT uniqExact(loop_id, seq, kafka_topic, kafka_partition, kafka_offset) FROM envelopes WHERE kind_class = 'ModelCalled'" },
  {
    view: 'floor: dedup by key (GROUP BY)',
    sql: "SELECT count() FROM (SELECT loop_id, seq FROM envelopes WHERE kind_class = 'ModelCalled' GROUP BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset)",
  },
  {
    view: 'floor: dedup + cost sum',
    sql: "SELECT toString(sum(toDecimal128(c, 0))) FROM (SELECT any(cost_pico) AS c FROM envelopes WHERE kind_class = 'ModelCalled' GROUP BY loop_id, seq, kafka_topic, kafka_partition, kafka_offset)",
  },
];

interface Timing {
  /** Timed runs, ms. */
  readonly ms: readonly number[];
  readonly medianMs: number;
  readonly warmupMs: number;
  readonly rows: number;
  readonly error?: string;
}


/** A view read slower than this in its warm-up gets one timed run, not --runs: the verdict is the same and the run stays within its time. */
const SLOW_WARMUP_MS = 8_000;

/** One warm-up and RUNS timed runs of a read, wall time at the client (the HTTP round trip included, as a dashboard sees it). */
async function timeRead(ch: ClickHouseClient, sql: string, settings: Record<string, string>): Promise<Timing> {
  const once = async (): Promise<{ ms: number; rows: number }> => {
    const t = performance.now();
    const rows = await ch.query({ query: sql, format: 'JSONEachRow', clickhouse_settings: settings }).then((r) => r.json<unknown>());
    return { ms: performance.now() - t, rows: rows.length };
  };
  try {
    const warm = await once();
    const runs = warm.ms > SLOW_WARMUP_MS ? 1 : RUNS;
    const ms: number[] = [];
    let rows = warm.rows;
    for (let i = 0; i < runs; i++) {
      const r = await once();
      ms.push(r.ms);
      rows = r.rows;
    }
    return { ms, medianMs: median(ms), warmupMs: warm.ms, rows };
  } catch (err) {
    return { ms: [], medianMs: NaN, warmupMs: NaN, rows: 0, error: err instanceof Error ? err.message.split('\n')[0]!.slice(0, 200) : String(err) };
  }
}

const fmtMs = (t: Timing | undefined): string => (t === undefined ? '-' : t.error !== undefined ? 'error' : `${Math.round(t.medianMs)}${t.ms.length === 1 && RUNS > 1 ? '*' : ''}`);
const panelVerdict = (t: Timing | undefined): string => (t === undefined ? '' : t.error !== undefined ? 'error' : t.medianMs < TARGET_MS ? '< 1 s' : 'NOT MET');
const apiVerdict = (t: ApiTiming): string => (t.missing ? 'missing' : panelVerdict(t));
const verdict = (t: Timing | undefined): string => (t === undefined || t.error !== undefined ? '' : t.medianMs < TARGET_MS ? 'PASS' : 'over');

// ---------------------------------------------------------------- the API and the Grafana panels (issue 21)

/** A day or a week before the data's end, as RFC 3339: the loaded month lies in the past, so `--since 7d` (back from now) would find nothing. */
const SINCE_7D = new Date((END_UNIX - 7 * 86_400) * 1000).toISOString().replace('.000', '');
const SINCE_30D = new Date((END_UNIX - 30 * 86_400) * 1000).toISOString().replace('.000', '');
const UNTIL = new Date(END_UNIX * 1000).toISOString().replace('.000', '');

const SPEND_BYS = ['model', 'day', 'name', 'root', 'source'] as const;

export interface ApiRequest {
  /** How the table names it. */
  readonly name: string;
  /** Path and query string; `{root}` stands for a real root loop with children (loopId(1)). */
  readonly path: string;
}

/**
 * Every request step 4 times against `agentledger serve`: the five read
 * commands (what `agentledger <command> --json --<opt> <val>` prints) with
 * the options a page or a person uses, and the page's own endpoints
 * (src/serve/endpoints.ts) with realistic parameters. A 404 is an endpoint
 * not there yet: shown as "missing", not a failure. Extend here.
 */
export const API_REQUESTS: readonly ApiRequest[] = [
  { name: 'spend --by model', path: '/api/spend?by=model' },
  { name: 'spend --by day', path: '/api/spend?by=day' },
  { name: 'spend --by name', path: '/api/spend?by=name' },
  { name: 'spend --by root', path: '/api/spend?by=root' },
  { name: 'spend --by source', path: '/api/spend?by=source' },
  { name: 'spend --by model --since 7d', path: `/api/spend?by=model&since=${SINCE_7D}` },
  { name: 'spend --by day --since 7d', path: `/api/spend?by=day&since=${SINCE_7D}` },
  { name: 'spend --by name --since 7d', path: `/api/spend?by=name&since=${SINCE_7D}` },
  { name: 'spend --by root --since 7d', path: `/api/spend?by=root&since=${SINCE_7D}` },
  { name: 'spend --by source --since 7d', path: `/api/spend?by=source&since=${SINCE_7D}` },
  // The same over the hour rollups (serve takes a boolean option bare: `rollups`, or `rollups=`).
  ...SPEND_BYS.flatMap((by) => [
    { name: `spend --rollups --by ${by}`, path: `/api/spend?rollups&by=${by}` },
    { name: `spend --rollups --by ${by} --since 7d`, path: `/api/spend?rollups&by=${by}&since=${SINCE_7D}` },
  ]),
  { name: 'loops --limit 100', path: '/api/loops?limit=100' },
  { name: 'loops --root ROOT', path: '/api/loops?root={root}' },
  { name: 'sessions', path: '/api/sessions' },
  { name: 'alerts --state all', path: '/api/alerts?state=all' },
  { name: 'report', path: '/api/report' },
  { name: 'overview', path: '/api/overview' },
  { name: 'series hour by model 7d', path: `/api/series?step=hour&by=model&since=${SINCE_7D}&until=${UNTIL}` },
  { name: 'series day by name 30d', path: `/api/series?step=day&by=name&since=${SINCE_30D}&until=${UNTIL}` },
  { name: 'tree root=ROOT', path: '/api/tree?root={root}' },
  { name: 'violations limit=50', path: '/api/violations?limit=50' },
  { name: 'reconciliation limit=50', path: '/api/reconciliation?limit=50' },
];

/** A request slower than this is given up (the verdict is long settled). */
const API_TIMEOUT_MS = 300_000;

interface ApiTiming extends Timing {
  readonly status?: number;
  readonly bytes?: number;
  readonly missing?: boolean;
}

/** One warm-up and RUNS timed GETs (one when the warm-up took over SLOW_WARMUP_MS), wall time at the client, the body read whole. */
async function timeGet(url: string): Promise<ApiTiming> {
  const once = async (): Promise<{ ms: number; status: number; bytes: number; body: string }> => {
    const t = performance.now();
    const res = await fetch(url, { signal: AbortSignal.timeout(API_TIMEOUT_MS) });
    const body = await res.text();
    return { ms: performance.now() - t, status: res.status, bytes: Buffer.byteLength(body), body };
  };
  try {
    const warm = await once();
    if (warm.status === 404) return { ms: [], medianMs: NaN, warmupMs: warm.ms, rows: 0, status: 404, missing: true };
    if (warm.status !== 200) return { ms: [], medianMs: NaN, warmupMs: warm.ms, rows: 0, status: warm.status, error: `HTTP ${warm.status}: ${warm.body.trim().slice(0, 160)}` };
    const ms: number[] = [];
    let last = warm;
    for (let i = 0; i < (warm.ms > SLOW_WARMUP_MS ? 1 : RUNS); i++) {
      last = await once();
      ms.push(last.ms);
    }
    let rowCount = 0;
    try {
      const v = JSON.parse(last.body) as unknown;
      rowCount = Array.isArray(v) ? v.length : 1;
    } catch {
      rowCount = last.body.split('\n').filter((l) => l.trim() !== '').length;
    }
    return { ms, medianMs: median(ms), warmupMs: warm.ms, rows: rowCount, status: last.status, bytes: last.bytes };
  } catch (err) {
    return { ms: [], medianMs: NaN, warmupMs: NaN, rows: 0, error: err instanceof Error ? err.message.split('\n')[0]!.slice(0, 200) : String(err) };
  }
}

/** The read-only user serve and the panels read as: the local stack's one for throwaway databases (readonly=1 everywhere). */
const READONLY_USER = process.env['AGENTLEDGER_SERVE_CLICKHOUSE_USER'] ?? 'agentledger_test_readonly';
const READONLY_PASSWORD = process.env['AGENTLEDGER_SERVE_CLICKHOUSE_PASSWORD'] ?? (READONLY_USER === 'agentledger_test_readonly' ? 'agentledger_test_readonly' : '');


interface GrafanaPanel {
  readonly id?: number;
  readonly title?: string;
  readonly targets?: { readonly refId?: string; readonly rawSql?: string }[];
  readonly panels?: GrafanaPanel[];
}

/**
 * The Grafana ranges step 5 reads every panel over, ending at the data's end
 * (the dashboard's default is the last 24 h): the interval is what Grafana
 * gives a full-width panel (~1000 points), rounded as Grafana rounds it.
 */
const GRAFANA_RANGES = [
  { name: '24h', seconds: 86_400, intervalSeconds: 60 },
  { name: '7d', seconds: 7 * 86_400, intervalSeconds: 600 },
  { name: '30d', seconds: 30 * 86_400, intervalSeconds: 1_800 },
] as const;

/** Every query of every panel of the provisioned dashboard, its macros expanded as the plugin does (test/support/grafana-macros.ts), once per range. */
function grafanaQueries(): ViewQuery[] {
  const dashboard = JSON.parse(readFileSync(join(REPO, 'infra', 'grafana', 'dashboards', 'agentledger.json'), 'utf8')) as { panels?: GrafanaPanel[] };
  const panels = (dashboard.panels ?? []).flatMap((p) => [p, ...(p.panels ?? [])]);
  const out: ViewQuery[] = [];
  for (const range of GRAFANA_RANGES) {
    const ctx = { from: END_UNIX - range.seconds, to: END_UNIX, intervalSeconds: range.intervalSeconds };
    for (const p of panels)
      for (const t of p.targets ?? []) {
        if ((t.rawSql ?? '').trim() === '') continue;
        out.push({ view: `${range.name} #${p.id} ${p.title ?? ''}${(p.targets?.length ?? 0) > 1 ? ` ${t.refId}` : ''}`, sql: expandMacros(t.rawSql!, ctx) });
      }
  }
  return out;
}

/** Starts `agentledger serve --port 0` as the read-only user and returns its base URL, from the `serving url=…` line it logs. */
async function startServe(): Promise<{ url: string; stop: () => Promise<void> }> {
  let resolveUrl: (u: string) => void = () => undefined;
  const got = new Promise<string>((resolve) => (resolveUrl = resolve));
  const serve = cli(
    ['serve', '--port', '0'],
    env({ AGENTLEDGER_SERVE_CLICKHOUSE_USER: READONLY_USER, AGENTLEDGER_SERVE_CLICKHOUSE_PASSWORD: READONLY_PASSWORD, AGENTLEDGER_LOG_LEVEL: 'info' }),
    (line) => {
      const m = /serving .*url=("?)(http:\/\/[^\s"]+)\1/.exec(line);
      if (m) resolveUrl(m[2]!);
    },
  );
  const url = await Promise.race([
    got,
    serve.done.then((r) => Promise.reject(new Error(`agentledger serve exited (${r.code}): ${r.err.slice(-1000)}`))),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('agentledger serve did not log its url within 30 s')), 30_000)),
  ]);
  return {
    url: url.replace(/\/$/, ''),
    stop: async () => {
      serve.child.kill('SIGTERM');
      const kill = setTimeout(() => serve.child.kill('SIGKILL'), 10_000);
      await serve.done;
      clearTimeout(kill);
    },
  };
}

// ---------------------------------------------------------------- helpers

/** Spawned children still running: stopped on the way out, whatever happens. */
const children = new Set<ChildProcess>();
const REPO = new URL('../../', import.meta.url).pathname;

/**
 * Runs the CLI of this same build (dist/src/cli/main.js next to this file),
 * not bin/agentledger.js, which loads dist/ and may be another build.
 */
const CLI_MAIN = new URL('../src/cli/main.js', import.meta.url).href;

function cli(argv: string[], e: Record<string, string>, onErrLine?: (line: string) => void): { child: ChildProcess; done: Promise<{ code: number | null; out: string; err: string }> } {
  const launcher = `const { main } = await import(${JSON.stringify(CLI_MAIN)}); process.exitCode = await main(process.argv.slice(1));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', launcher, '--', ...argv], { env: e, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  let partial = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    const text = d.toString();
    err += text;
    if (err.length > 200_000) err = err.slice(-100_000);
    if (onErrLine) {
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) onErrLine(l);
    }
  });
  const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    child.on('exit', (code) => {
      children.delete(child);
      resolve({ code, out, err });
    });
  });
  return { child, done };
}

async function rows<T>(ch: ClickHouseClient, query: string): Promise<T[]> {
  return ch.query({ query, format: 'JSONEachRow' }).then((r) => r.json<T>());
}

async function settleMerges(ch: ClickHouseClient, capS: number): Promise<void> {
  for (let i = 0; i < capS; i++) {
    const [m] = await rows<{ n: string }>(ch, 'SELECT count() AS n FROM system.merges');
    if (Number(m?.n) === 0) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  say(`ClickHouse merges still running after ${capS} s; going on`);
}

async function waitMutations(ch: ClickHouseClient): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    const [m] = await rows<{ n: string }>(ch, 'SELECT count() AS n FROM system.mutations WHERE database = currentDatabase() AND is_done = 0');
    if (Number(m?.n) === 0) return;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * The project's migrations folder, or, when its numbering has a hole (a
 * migration being written elsewhere), a copy renumbered in order: migrate()
 * refuses a hole, and this database is thrown away anyway. Said in the output.
 */
async function migrationsDir(work: string): Promise<{ dir: string; note: string }> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
  const versions = files.map((f) => Number(f.slice(0, 4)));
  if (versions.every((v, i) => v === i + 1)) return { dir: MIGRATIONS_DIR, note: `${files.length} migrations` };
  const dir = join(work, 'migrations');
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir);
  const renamed: string[] = [];
  for (const [i, f] of files.entries()) {
    const to = `${String(i + 1).padStart(4, '0')}${f.slice(4)}`;
    if (to !== f) renamed.push(`${f} as ${to.slice(0, 4)}`);
    await copyFile(join(MIGRATIONS_DIR, f), join(dir, to));
  }
  return { dir, note: `${files.length} migrations; schema/clickhouse has a hole in its numbering, so they were applied renumbered (${renamed.join(', ')})` };
}

// ---------------------------------------------------------------- ClickHouse 25.8 (chdb)

/** The chdb interpreter test/modern/run.sh installs: its venv, or python3 with its --target folder. */
function chdbPython(): { cmd: string; env: Record<string, string> } | undefined {
  const venv = join(REPO, '.state', 'venv-chdb');
  if (existsSync(join(venv, '.chdb-stamp')) && existsSync(join(venv, 'bin', 'python'))) return { cmd: join(venv, 'bin', 'python'), env: {} };
  const pkgs = join(REPO, '.state', 'chdb-pkgs');
  if (existsSync(join(pkgs, '.chdb-stamp'))) return { cmd: 'python3', env: { PYTHONPATH: pkgs } };
  return undefined;
}

interface ChdbResult {
  readonly engine: string;
  readonly chdb: string;
  readonly loadSeconds: number;
  readonly rows: number;
  readonly parts: number;
  readonly fingerprint: string;
  readonly queries: readonly (Timing & { readonly view: string })[];
}

/** A table of the rollups copied from 18.16 for the 25.8 reads: its rows as TSV and its columns. */
interface TableCopy {
  readonly table: string;
  readonly structure: string;
  readonly path: string;
  readonly rows: number;
}

async function runChdb(spec: object, work: string): Promise<ChdbResult> {
  const py = chdbPython();
  if (py === undefined) throw new Error('chdb is not installed: run `bash test/modern/run.sh` once (it installs chdb 3.7.2 into .state/)');
  const specPath = join(work, 'chdb-spec.json');
  await writeFile(specPath, JSON.stringify(spec));
  const script = join(REPO, 'bench', 'rollups_chdb.py');
  const child = spawn(py.cmd, [script, specPath], { env: { ...process.env, ...py.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let partial = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) if (l.trim() !== '') say(`25.8: ${l}`);
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  children.delete(child);
  if (partial.trim() !== '') say(`25.8: ${partial}`);
  if (code !== 0) throw new Error(`bench/rollups_chdb.py exited with ${code}`);
  return JSON.parse(out) as ChdbResult;
}

/** Copies each non-empty table the rollup job wrote (not envelopes: 25.8 loads its own) to TSV, for the 25.8 reads of the rollup views. */
async function exportRollupTables(ch: ClickHouseClient, work: string): Promise<TableCopy[]> {
  const tables = await rows<{ name: string; engine: string }>(
    ch,
    `SELECT name, engine FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree' AND name NOT IN ('envelopes', 'schema_migrations') ORDER BY name`,
  );
  const copies: TableCopy[] = [];
  for (const { name, engine } of tables) {
    // A ReplacingMergeTree is copied as readers see it (FINAL): 25.8 would
    // collapse its replaced rows within the one insert anyway.
    const from = engine.startsWith('Replacing') ? `${name} FINAL` : name;
    const [count] = await rows<{ n: string }>(ch, `SELECT count() AS n FROM ${from}`);
    if (Number(count?.n ?? 0) === 0) continue;
    // DESCRIBE lists the columns in order (18.16's system.columns has no position).
    const columns = await rows<{ name: string; type: string }>(ch, `DESCRIBE TABLE ${name}`);
    const path = join(work, `${name}.tsv`);
    const result = await ch.exec({ query: `SELECT * FROM ${from} FORMAT TabSeparated` });
    await pipeline(result.stream, createWriteStream(path));
    copies.push({ table: name, structure: columns.map((c) => `${c.name} ${c.type}`).join(', '), path, rows: Number(count?.n) });
  }
  return copies;
}

// ---------------------------------------------------------------- ingest with and without a rollup worker

interface IngestRun {
  readonly label: 'alone' | 'with worker';
  readonly seconds: number;
  readonly rate: number;
  readonly sweeps: number;
}

async function ingestComparison(ch: ClickHouseClient, topics: string[], groups: string[]): Promise<IngestRun[]> {
  const topic = `bench.rollups.${TS}`;
  topics.push(topic, `${topic}.craze`, `${topic}.dlq`);
  const topicEnv = { AGENTLEDGER_ENVELOPE_TOPIC: topic, AGENTLEDGER_CRAZE_TOPIC: `${topic}.craze`, AGENTLEDGER_DLQ_TOPIC: `${topic}.dlq` };
  say(`producing ${INGEST_LOOPS} loops x ${INGEST_PER_LOOP} envelopes (~1 KB) to ${topic} (not timed)`);
  const produced = await cli(
    ['produce-demo', '--loops', String(INGEST_LOOPS), '--envelopes', String(INGEST_PER_LOOP), '--seed', '7', '--payload-bytes', '1024', '--json'],
    env(topicEnv),
  ).done;
  if (produced.code !== 0) throw new Error(`produce-demo failed: ${produced.err.slice(-2000)}`);
  const summary = JSON.parse(produced.out) as { envelopes: number; records: number };
  const records = summary.envelopes;
  // The rows an ingest run adds are dropped before the next one: they land in
  // the partition of this month (ingested_at), which the loaded rows never reach.
  const [month] = await rows<{ p: string; loaded: string }>(
    ch,
    `SELECT toString(toYYYYMM(now())) AS p, (SELECT count() FROM envelopes WHERE toYYYYMM(ingested_at) = toYYYYMM(now())) AS loaded`,
  );
  if (month === undefined || Number(month.loaded) !== 0) throw new Error('loaded rows share the partition of this month: the ingest runs could not be told apart');
  const reset = async (): Promise<void> => {
    await ch.command({ query: `ALTER TABLE envelopes DROP PARTITION ${month.p}` });
    await ch.command({ query: `ALTER TABLE loop_heads DELETE WHERE kafka_topic = '${topic}'` });
    await waitMutations(ch);
    await settleMerges(ch, 60);
  };
  const sweepsDone = async (): Promise<number> => Number((await rows<{ n: string }>(ch, 'SELECT count() AS n FROM rollup_sweeps'))[0]?.n ?? 0);

  const runs: IngestRun[] = [];
  const order = ['alone', 'with worker', 'with worker', 'alone'] as const;
  for (const [i, label] of order.entries()) {
    const group = `bench.rollups.${TS}.ingest${i}`;
    groups.push(group);
    let worker: ReturnType<typeof cli> | undefined;
    const sweeps0 = await sweepsDone();
    if (label === 'with worker') {
      worker = cli(['worker'], env({ AGENTLEDGER_ROLLUP_SWEEP_MS: String(SWEEP_MS), AGENTLEDGER_ROLLUP_LATE_MS: String(LATE_MS) }));
      // Its first sweep done: the worker is up and sweeping when the ingest starts.
      const deadline = Date.now() + 60_000;
      while ((await sweepsDone()) === sweeps0) {
        if (Date.now() > deadline) throw new Error('the worker did not finish a sweep within 60 s');
        if (worker.child.exitCode !== null) throw new Error(`the worker exited: ${(await worker.done).err.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    const sweeps1 = await sweepsDone();
    const [before] = await rows<{ n: string }>(ch, 'SELECT count() AS n FROM envelopes');
    const t = performance.now();
    const result = await cli(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], env({ ...topicEnv, AGENTLEDGER_KAFKA_GROUP_ID: group })).done;
    // The idle wait (3 s) is not ingest time.
    const seconds = (performance.now() - t) / 1000 - 3;
    const sweeps = (await sweepsDone()) - sweeps1;
    if (worker !== undefined) {
      worker.child.kill('SIGTERM');
      const stop = setTimeout(() => worker?.child.kill('SIGKILL'), 60_000);
      await worker.done;
      clearTimeout(stop);
    }
    if (result.code !== 0) throw new Error(`ingest failed: ${result.err.slice(-2000)}`);
    const [after] = await rows<{ n: string }>(ch, 'SELECT count() AS n FROM envelopes');
    const stored = Number(after?.n) - Number(before?.n);
    if (stored !== records) throw new Error(`ingest run ${i + 1} stored ${stored} of ${records} envelopes`);
    runs.push({ label, seconds, rate: records / seconds, sweeps });
    say(`ingest run ${i + 1}/4 (${label}): ${records.toLocaleString()} envelopes in ${seconds.toFixed(1)} s, ${Math.round(records / seconds).toLocaleString()} envelopes/s${worker ? `, ${sweeps} sweep(s) meanwhile` : ''}`);
    await reset();
  }
  return runs;
}

// ---------------------------------------------------------------- the run

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
      `reproduce: npm run bench:rollups -- --calls ${CALLS} --loops ${LOOPS} --days ${DAYS}${CHDB_CALLS !== CALLS ? ` --chdb-calls ${CHDB_CALLS}` : ''}${(['no-chdb', 'no-rollups', 'no-views', 'no-serve', 'no-grafana', 'no-ingest'] as const).filter((o) => args[o]).map((o) => ` --${o}`).join('')} (local stack up; chdb from bash test/modern/run.sh)`,
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
