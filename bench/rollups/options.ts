/** The options of `npm run bench:rollups`, the run's names (database, Redis prefix) and the environment of the commands it runs. */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createLogger } from '../../src/observability/logger.js';
import { sayer } from '../support.js';

export const HELP = `Usage: npm run bench:rollups -- [options]
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
  --no-memory           skip the peak memory of every panel and page endpoint (M, before and after the rebuild)
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

export const OPTIONS = {
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
  'no-memory': { type: 'boolean', default: false },
  runs: { type: 'string', default: '3' },
  'ingest-loops': { type: 'string', default: '4000' },
  'ingest-envelopes': { type: 'string', default: '50' },
  'sweep-ms': { type: 'string', default: '5000' },
  'late-ms': { type: 'string', default: '60000' },
  keep: { type: 'boolean', default: false },
  'print-sql': { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;
export const parsed = (() => {
  try {
    return parseArgs({ options: OPTIONS });
  } catch (err) {
    process.stderr.write(`rollups bench: ${err instanceof Error ? err.message : String(err)}\n${HELP}\n`);
    process.exit(2);
  }
})();
export const args = parsed.values;
if (args.help) {
  process.stdout.write(`${HELP}\n`);
  process.exit(0);
}
export const num = (name: string, text: string | undefined): number => {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) {
    process.stderr.write(`rollups bench: --${name} takes a whole number >= 1\n${HELP}\n`);
    process.exit(2);
  }
  return n;
};
export const CALLS = num('calls', args.calls);
export const LOOPS = num('loops', args.loops);
export const DAYS = num('days', args.days);
export const CHDB_CALLS = args['chdb-calls'] === undefined ? CALLS : num('chdb-calls', args['chdb-calls']);
export const RUNS = num('runs', args.runs);
export const INGEST_LOOPS = num('ingest-loops', args['ingest-loops']);
export const INGEST_PER_LOOP = num('ingest-envelopes', args['ingest-envelopes']);
export const SWEEP_MS = num('sweep-ms', args['sweep-ms']);
export const LATE_MS = num('late-ms', args['late-ms']);
if (LOOPS < 4 || CALLS < LOOPS || LOOPS > 100_000_000 || CALLS / LOOPS > 10_000) {
  process.stderr.write('rollups bench: needs --loops >= 4 and 1 <= --calls / --loops <= 10000\n');
  process.exit(2);
}

export const TARGET_MS = 1000;
export const TARGET_RATIO = 0.8;
export { END, END_UNIX } from './window.js';
export const TS = `${Date.now()}_${randomBytes(2).toString('hex')}`;
export const DB = `bench_rollups_${TS}`;
export const REDIS_PREFIX = `benchrollups${TS}`;
export const say = sayer('rollups');
export const benchStarted = performance.now();
export const log = createLogger('warn');

/**
 * A throwaway database needs a user that may create one: the local stack's
 * `agentledger_test` (agentledger's own writer has no DDL), unless the
 * environment names another.
 */
export const CLICKHOUSE_USER = process.env['AGENTLEDGER_CLICKHOUSE_USER'] ?? 'agentledger_test';
export const CLICKHOUSE_PASSWORD = process.env['AGENTLEDGER_CLICKHOUSE_PASSWORD'] ?? (CLICKHOUSE_USER === 'agentledger_test' ? 'agentledger_test' : '');
export const CLICKHOUSE_URL = process.env['AGENTLEDGER_CLICKHOUSE_URL'] ?? 'http://127.0.0.1:8123';
export const KAFKA_BROKERS = process.env['AGENTLEDGER_KAFKA_BROKERS'] ?? '127.0.0.1:9092';
export const REDIS_URL = process.env['AGENTLEDGER_REDIS_URL'];

export function env(extra: Record<string, string> = {}): Record<string, string> {
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
