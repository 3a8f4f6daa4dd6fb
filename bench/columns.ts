/**
 * ClickHouse CPU per stored envelope row, by column layout (issue 12, item 3):
 * does a narrower envelopes row cost ClickHouse less, and how much? Not a
 * test: it prints figures.
 *
 *   node dist/bench/columns.js [--loops 4000] [--envelopes 50] [--rounds 5]
 *        [--rows-per-insert 5000] [--only current,narrow] [--no-chdb]
 *        [--url http://127.0.0.1:8124 --server-pid PID]
 *
 * 1. Rows (not timed): generateTraffic's envelopes (~1 KB payloads, the
 *    e2e bench's size) through the consumer's own batch step
 *    (processEnvelopeBatch), so every row is one ingest would store.
 * 2. Layouts, each a table with the envelopes table's columns, engine and key
 *    (read from a database the migrations just made), changed as named:
 *    - current: as migrated (hashes as 64 hex characters, computed_hash on
 *      every row, the payload facts in ten typed slots the kinds share,
 *      migration 0022), in TabSeparated built by ingest's own writer;
 *    - rowbinary: the same table, the body in RowBinary built by ingest's
 *      own encoder (src/store/rowbinary.ts; AGENTLEDGER_INSERT_FORMAT);
 *    - rowbinary-fixed-hashes: hash and computed_hash FixedString(32), sent
 *      as their 32 raw bytes in RowBinary (a layout only: no migration has it);
 *    - facts-34: the layout before 0022, the 34 payload facts each in its
 *      own column (0008), mostly empty;
 *    - computed-if-differs: computed_hash '' where it equals hash;
 *    - binary-hashes: hash and computed_hash FixedString(32), sent as TSV
 *      escapes (`\xHH` for bytes >= 0x80: the body stays ASCII);
 *    - narrow: both of the above (computed_hash zero bytes where equal);
 *    - no-facts: without the slots, a bound on what storing no facts at all
 *      would save (the facts are needed: not a candidate itself).
 *    Each layout's insert bodies are built before the clock starts; the
 *    JavaScript time to build them is reported per row (ingest pays it).
 * 3. Rounds, the layout order rotated each round. Per layout: a fresh table,
 *    its bodies posted one request at a time (--rows-per-insert rows each,
 *    plain HTTP, as ingest sends them), then merges awaited, then OPTIMIZE
 *    FINAL. ClickHouse's server CPU (/proc/PID/stat) is read around the
 *    inserts and around merging (the awaited merges plus the final one).
 * 4. Unless --no-chdb: writes each layout's DDL and bodies to a temporary
 *    folder and runs bench/columns_chdb.py on ClickHouse 25.8 (chdb, as
 *    test/modern/run.sh installs it) to measure the same per-row CPU in
 *    process; the folder is removed afterwards.
 *
 * Needs the local stack (infra/stack.sh up). Prints a table of medians: insert
 * and merge CPU µs per row, body and on-disk bytes per row, and each layout's
 * ratio to current.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseConfig } from '../src/config/index.js';
import { median, sayer, wholeOption } from './support.js';
import { DEFAULT_DECODE_OPTIONS } from '../src/decode/envelope.js';
import { toClickHouseDateTime } from '../src/decode/time.js';
import { generateTraffic } from '../src/demo/traffic/index.js';
import { createLogger } from '../src/observability/logger.js';
import { ChainState, processEnvelopeBatch } from '../src/pipeline/envelopes.js';
import type { SourceRecord } from '../src/pipeline/stream.js';
import { createClickHouse } from '../src/clickhouse/client.js';
import { migrate } from '../src/migrate/migrate.js';
import type { EnvelopeRow } from '../src/rows/rows.js';
import { ENVELOPE_COLUMNS } from '../src/store/columns.js';
import { ENVELOPE_FACTS, FACT_NAMES, unfoldSlots } from '../src/rows/envelope-facts.js';
import { tsvField } from '../src/store/tsv.js';
import { encodeRows, type InsertFormat } from '../src/store/insert-format.js';
import { COLUMN_TYPES, type ColumnType, type TableSpec } from '../src/store/table-spec.js';
import { MemoryChains } from '../src/verify/memory-chains.js';

const HELP = `Usage: node dist/bench/columns.js [options]   (after npx tsc -p tsconfig.json)

ClickHouse CPU per stored envelope row for several column layouts of the
envelopes table and insert formats (current in TabSeparated, the same in
RowBinary, hashes as FixedString(32) in RowBinary and in TabSeparated,
computed_hash only where it differs, both, the 34 fact columns before 0022,
and no fact columns as a bound), the same rows inserted into each in rotated
rounds. Needs the local stack.

  --loops N            loops of generated traffic (default 4000)
  --envelopes N        envelopes per loop (default 50; ~1 KB each)
  --rounds N           rounds, the layout order rotated each (default 5)
  --rows-per-insert N  rows per insert request (default 5000, ingest's batch)
  --only A,B           these layouts only (current is always measured)
  --no-chdb           skip ClickHouse 25.8 (chdb, from bash test/modern/run.sh)
  --url URL            another 18.16 server's HTTP address (default the local
                       stack's), e.g. a private one while tests use the stack's
  --server-pid PID     that server's process, whose CPU is read (default: the
                       local stack's, from infra/stack.sh status)
  --help               this text
`;

const { values: args } = parseArgs({
  options: {
    loops: { type: 'string', default: '4000' },
    envelopes: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '5' },
    'rows-per-insert': { type: 'string', default: '5000' },
    only: { type: 'string' },
    'no-chdb': { type: 'boolean', default: false },
    url: { type: 'string' },
    'server-pid': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help === true) {
  process.stdout.write(HELP);
  process.exit(0);
}

const whole = (name: string, text: string | undefined): number => wholeOption('columns', name, text);
const LOOPS = whole('loops', args.loops);
const PER_LOOP = whole('envelopes', args.envelopes);
const ROUNDS = whole('rounds', args.rounds);
const ROWS_PER_INSERT = whole('rows-per-insert', args['rows-per-insert']);
const say = sayer('columns', { clock: true });

const REPO = new URL('../..', import.meta.url).pathname;
const DATABASE = `agentledger_bench_columns`;
const USER = process.env['AGENTLEDGER_CLICKHOUSE_USER'] ?? 'agentledger_test';
const PASSWORD = process.env['AGENTLEDGER_CLICKHOUSE_PASSWORD'] ?? (USER === 'agentledger_test' ? 'agentledger_test' : '');
const config = parseConfig({
  PATH: process.env['PATH'] ?? '',
  AGENTLEDGER_CLICKHOUSE_USER: USER,
  AGENTLEDGER_CLICKHOUSE_PASSWORD: PASSWORD,
  AGENTLEDGER_CLICKHOUSE_DATABASE: DATABASE,
  AGENTLEDGER_METRICS_PORT: '0',
  ...(args.url === undefined ? {} : { AGENTLEDGER_CLICKHOUSE_URL: args.url }),
});
const URL_BASE = new URL(config.clickhouse.url);

// ---------------------------------------------------------------- layouts

type Field = (row: EnvelopeRow) => string;
/** One column of a layout: its name, its type, how a row's value is written. */
interface Column {
  name: string;
  type: string;
  field: Field;
}
interface Layout {
  name: string;
  /**
   * The body's format, built by ingest's own encoder (src/store/insert-format.ts)
   * from the rows' fields; unset: TabSeparated from each column's `field`, joined here.
   */
  format?: InsertFormat;
  /** The layout's columns, in table order, from the migrated table's types. */
  columns(migrated: ReadonlyMap<string, string>): Column[];
}

/** The columns that store the payload facts (0022's ten slots): every column between evidence and kafka_topic. */
const FACT_COLUMNS = new Set<string>(ENVELOPE_COLUMNS.slice(ENVELOPE_COLUMNS.indexOf('evidence') + 1, ENVELOPE_COLUMNS.indexOf('kafka_topic')));

/** Each byte's text in a TSV field: itself when printable ASCII (not a backslash), else `\xHH`. */
const BYTE_TEXT = Array.from({ length: 256 }, (_, b) =>
  b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : '\\x' + b.toString(16).padStart(2, '0'),
);
const HEX_VALUE = new Map(Array.from({ length: 256 }, (_, b) => [b.toString(16).padStart(2, '0'), b]));

/** 64 hex characters as 32 bytes in TSV escapes: ASCII text, ClickHouse reads the bytes back. */
function binaryField(hex: string): string {
  if (hex === '') return '';
  let out = '';
  for (let i = 0; i < 64; i += 2) out += BYTE_TEXT[HEX_VALUE.get(hex.slice(i, i + 2))!]!;
  return out;
}

const tsv = (c: string): Field => (r) => tsvField(r[c as keyof EnvelopeRow]);

/** The migrated columns, each kept (its type from `type`, undefined: left out) and written by `field` or tsvField. */
function migratedColumns(type: (column: string, migrated: string) => string | undefined, field: (column: string) => Field | undefined = () => undefined) {
  return (migrated: ReadonlyMap<string, string>): Column[] =>
    ENVELOPE_COLUMNS.flatMap((c) => {
      const t = type(c, migrated.get(c)!);
      return t === undefined ? [] : [{ name: c, type: t, field: field(c) ?? tsv(c) }];
    });
}

/** The migrated columns up to the facts, then `facts`, then the Kafka columns. */
function withFacts(facts: readonly Column[]) {
  return (migrated: ReadonlyMap<string, string>): Column[] => {
    const kept = migratedColumns((c, t) => (FACT_COLUMNS.has(c) ? undefined : t))(migrated);
    const at = kept.findIndex((c) => c.name === 'kafka_topic');
    return [...kept.slice(0, at), ...facts, ...kept.slice(at)];
  };
}

// A row's facts by name, unfolded once per row (the facts-34 layout's 34 fields read them in turn).
let unfoldedRow: EnvelopeRow | undefined;
let unfolded: ReturnType<typeof unfoldSlots> | undefined;
const factsOf = (r: EnvelopeRow): ReturnType<typeof unfoldSlots> => {
  if (r !== unfoldedRow) [unfoldedRow, unfolded] = [r, unfoldSlots(r.kind_class, r)];
  return unfolded!;
};

/** A migrated column's type as the RowBinary encoder knows it (a layout with another type is not built in RowBinary). */
function columnType(type: string): ColumnType {
  if ((COLUMN_TYPES as readonly string[]).includes(type)) return type as ColumnType;
  throw new Error(`the RowBinary encoder has no column type ${type}`);
}

const computedIfDiffers: Field = (r) => (r.computed_hash === r.hash ? '' : r.computed_hash);
const hashesFixed = migratedColumns((c, t) => (c === 'hash' || c === 'computed_hash' ? 'FixedString(32)' : t));
const LAYOUTS: Layout[] = [
  { name: 'current', format: 'TabSeparated', columns: migratedColumns((_c, t) => t) },
  { name: 'rowbinary', format: 'RowBinary', columns: migratedColumns((_c, t) => t) },
  // Hashes as 32 raw bytes: the encoder writes FixedString(32) from the row's hex ('' as zero bytes).
  { name: 'rowbinary-fixed-hashes', format: 'RowBinary', columns: hashesFixed },
  { name: 'computed-if-differs', columns: migratedColumns((_c, t) => t, (c) => (c === 'computed_hash' ? computedIfDiffers : undefined)) },
  {
    name: 'binary-hashes',
    columns: migratedColumns(
      (c, t) => (c === 'hash' || c === 'computed_hash' ? 'FixedString(32)' : t),
      (c) => (c === 'hash' ? (r) => binaryField(r.hash) : c === 'computed_hash' ? (r) => binaryField(r.computed_hash) : undefined),
    ),
  },
  {
    name: 'narrow',
    columns: migratedColumns(
      (c, t) => (c === 'hash' || c === 'computed_hash' ? 'FixedString(32)' : t),
      (c) => (c === 'hash' ? (r) => binaryField(r.hash) : c === 'computed_hash' ? (r) => binaryField(computedIfDiffers(r)) : undefined),
    ),
  },
  {
    // The layout before migration 0022: the 34 facts by name, each its own column.
    name: 'facts-34',
    columns: withFacts(FACT_NAMES.map((fact): Column => ({ name: fact, type: ENVELOPE_FACTS[fact], field: (r) => tsvField(factsOf(r)[fact]) }))),
  },
  { name: 'no-facts', columns: withFacts([]) },
];
const only = args.only === undefined ? undefined : new Set(['current', ...args.only.split(',')]);
const layouts = LAYOUTS.filter((l) => only === undefined || only.has(l.name));
if (only !== undefined) for (const n of only) if (!LAYOUTS.some((l) => l.name === n)) {
  process.stderr.write(`columns: --only ${n}: one of ${LAYOUTS.map((l) => l.name).join(', ')}\n`);
  process.exit(2);
}

// ---------------------------------------------------------------- ClickHouse over plain HTTP

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
function post(query: string, body: Buffer | string = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const url = new URL(URL_BASE);
    url.searchParams.set('query', query);
    url.searchParams.set('database', DATABASE);
    const req = request(url, { method: 'POST', agent, headers: { 'X-ClickHouse-User': USER, 'X-ClickHouse-Key': PASSWORD } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        if (res.statusCode === 200) resolve(text);
        else reject(new Error(`ClickHouse answered ${res.statusCode}: ${text.slice(0, 300)}`));
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

function clickhousePid(): string {
  if (args['server-pid'] !== undefined) return String(whole('server-pid', args['server-pid']));
  const status = execFileSync('bash', [join(REPO, 'infra/stack.sh'), 'status'], { encoding: 'utf8' });
  const line = status.split('\n').find((l) => /^clickhouse\s+up\s+pid\s+\d+/.test(l));
  if (line === undefined) throw new Error('infra/stack.sh status shows no running ClickHouse: run infra/stack.sh up');
  return line.split(/\s+/)[3]!;
}
function cpuSeconds(pid: string): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
async function mergesIdle(table: string, maxMs: number): Promise<void> {
  const until = Date.now() + maxMs;
  while (Date.now() < until) {
    const n = Number((await post(`SELECT count() FROM system.merges WHERE database = '${DATABASE}' AND table = '${table}'`)).trim());
    if (n === 0) return;
    await sleep(250);
  }
}

// ---------------------------------------------------------------- rows and bodies

const OPTIONS = { ...DEFAULT_DECODE_OPTIONS, seqEncoding: 'binary' as const };

async function generateRows(): Promise<EnvelopeRow[]> {
  const traffic = generateTraffic({ loops: LOOPS, envelopesPerLoop: PER_LOOP, seed: 12, payloadBytes: 1024 });
  const sources: SourceRecord[] = [...traffic.records].map((r, i) => ({
    topic: 'bench.columns',
    partition: i % 4,
    offset: String(i),
    timestamp: '0',
    key: Buffer.from(r.key, 'utf8'),
    value: r.value,
  }));
  const state = new ChainState(new MemoryChains('binary'));
  const rows: EnvelopeRow[] = [];
  for (let i = 0; i < sources.length; i += ROWS_PER_INSERT) {
    const outcome = await processEnvelopeBatch(sources.slice(i, i + ROWS_PER_INSERT), state, OPTIONS);
    state.flushed();
    // One ingested_at per insert, as ingest's flush sets it (the pipeline leaves it unset).
    const stamp = toClickHouseDateTime({ seconds: Math.floor(Date.now() / 1000), nanos: 0 });
    for (const row of outcome.rows) row.ingested_at = stamp;
    rows.push(...outcome.rows);
  }
  return rows;
}

interface Built {
  layout: Layout;
  ddl: string;
  columns: string[];
  /** The columns as file()'s structure argument ("name Type, …"). */
  structure: string;
  format: InsertFormat;
  bodies: Buffer[];
  bytes: number;
  buildUsPerRow: number;
}

function build(layout: Layout, migrated: Map<string, string>, engine: string, rows: EnvelopeRow[], table: string): Built {
  const cols = layout.columns(migrated);
  const columns = cols.map((c) => c.name);
  const structure = cols.map((c) => `${c.name} ${c.type}`).join(', ');
  const ddl = `CREATE TABLE ${table} (${structure}) ENGINE = ${engine}`;
  const fields: Field[] = cols.map((c) => c.field);
  const last = fields.length - 1;
  const encoded = (format: InsertFormat) => (): Buffer[] => {
    // The layout's columns are fields of the rows (the layouts with a format keep the migrated names).
    const spec: TableSpec<EnvelopeRow> = { columns: columns as TableSpec<EnvelopeRow>['columns'], types: cols.map((c) => columnType(c.type)) };
    const bodies: Buffer[] = [];
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) bodies.push(Buffer.concat(encodeRows(format, spec, rows.slice(i, i + ROWS_PER_INSERT))));
    return bodies;
  };
  const joined = (): Buffer[] => {
    const bodies: Buffer[] = [];
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
      let text = '';
      for (const row of rows.slice(i, i + ROWS_PER_INSERT)) {
        for (let c = 0; c < last; c++) text += fields[c]!(row) + '\t';
        text += fields[last]!(row) + '\n';
      }
      bodies.push(Buffer.from(text, 'utf8'));
    }
    return bodies;
  };
  const once = layout.format === undefined ? joined : encoded(layout.format);
  // Built twice, the second timed: the first warms the JIT up for this layout.
  once();
  const started = process.cpuUsage();
  const bodies = once();
  const cpu = process.cpuUsage(started);
  return { layout, ddl, columns, structure, format: layout.format ?? 'TabSeparated', bodies, bytes: bodies.reduce((s, b) => s + b.length, 0), buildUsPerRow: (cpu.user + cpu.system) / rows.length };
}

// ---------------------------------------------------------------- one round of one layout

interface Measured {
  insertUs: number;
  mergeUs: number;
  diskBytes: number;
}

async function measure(b: Built, pid: string, rows: number): Promise<Measured> {
  const table = `v_${b.layout.name.replace(/-/g, '_')}`;
  await post(`DROP TABLE IF EXISTS ${table}`);
  await post(b.ddl.replace(/^CREATE TABLE \S+/, `CREATE TABLE ${table}`));
  const insert = `INSERT INTO ${table} (${b.columns.join(', ')}) FORMAT ${b.format}`;
  const cpu0 = cpuSeconds(pid);
  for (const body of b.bodies) await post(insert, body);
  const cpu1 = cpuSeconds(pid);
  await mergesIdle(table, 60_000);
  await post(`OPTIMIZE TABLE ${table} FINAL`);
  const cpu2 = cpuSeconds(pid);
  const disk = Number((await post(`SELECT sum(bytes_on_disk) FROM system.parts WHERE database = '${DATABASE}' AND table = '${table}' AND active`)).trim());
  const stored = Number((await post(`SELECT count() FROM ${table}`)).trim());
  if (stored !== rows) throw new Error(`${table} holds ${stored} rows, not ${rows}`);
  await post(`DROP TABLE ${table}`);
  return { insertUs: ((cpu1 - cpu0) * 1e6) / rows, mergeUs: ((cpu2 - cpu1) * 1e6) / rows, diskBytes: disk / rows };
}


// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  say(`generating ${LOOPS} loops x ${PER_LOOP} envelopes through the consumer's batch step (not timed)`);
  const rows = await generateRows();
  const differs = rows.filter((r) => r.computed_hash !== r.hash).length;
  say(`${rows.length} rows (${differs} whose computed_hash differs from hash); migrating ${DATABASE}`);
  await migrate(config.clickhouse, join(REPO, 'schema/clickhouse'), createLogger('warn'));
  const ch = createClickHouse(config.clickhouse);
  const described = await (await ch.query({ query: 'DESCRIBE TABLE envelopes', format: 'JSONEachRow' })).json<{ name: string; type: string }>();
  const showCreate = (await (await ch.query({ query: 'SHOW CREATE TABLE envelopes', format: 'JSONEachRow' })).json<{ statement: string }>())[0]!.statement;
  await ch.close();
  const migrated = new Map(described.map((d) => [d.name, d.type]));
  for (const c of ENVELOPE_COLUMNS) if (!migrated.has(c)) throw new Error(`the migrated envelopes table has no column ${c}`);
  const engine = showCreate.slice(showCreate.indexOf('ENGINE = ') + 'ENGINE = '.length).trim();

  const built = layouts.map((l) => build(l, migrated, engine, rows, 'envelopes'));
  for (const b of built) say(`${b.layout.name}: ${b.columns.length} columns, ${(b.bytes / rows.length).toFixed(0)} body bytes per row, built in ${b.buildUsPerRow.toFixed(2)} µs per row`);

  const pid = clickhousePid();
  const results = new Map<string, Measured[]>(built.map((b) => [b.layout.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = built.map((_, i) => built[(i + round) % built.length]!);
    for (const b of order) {
      const m = await measure(b, pid, rows.length);
      results.get(b.layout.name)!.push(m);
      say(`round ${round + 1}/${ROUNDS} ${b.layout.name}: insert ${m.insertUs.toFixed(1)} µs/row, merge ${m.mergeUs.toFixed(1)} µs/row, ${m.diskBytes.toFixed(0)} B/row on disk`);
    }
  }

  const base = results.get('current')!;
  const baseTotal = median(base.map((m) => m.insertUs + m.mergeUs));
  say(`ClickHouse 18.16, ${rows.length} rows, ${ROUNDS} rounds, medians (CPU µs per row of the server process):`);
  say('layout                 insert  merge   total  ratio  body B/row  disk B/row  build µs/row');
  for (const b of built) {
    const ms = results.get(b.layout.name)!;
    const total = median(ms.map((m) => m.insertUs + m.mergeUs));
    say(
      `${b.layout.name.padEnd(22)} ${median(ms.map((m) => m.insertUs)).toFixed(1).padStart(6)} ${median(ms.map((m) => m.mergeUs)).toFixed(1).padStart(6)} ` +
        `${total.toFixed(1).padStart(7)} ${(total / baseTotal).toFixed(2).padStart(6)} ${(b.bytes / rows.length).toFixed(0).padStart(11)} ` +
        `${median(ms.map((m) => m.diskBytes)).toFixed(0).padStart(11)} ${b.buildUsPerRow.toFixed(2).padStart(13)}`,
    );
  }
  await post(`DROP DATABASE IF EXISTS ${DATABASE}`).catch(() => undefined);

  if (args['no-chdb'] !== true) {
    const dir = mkdtempSync(join(tmpdir(), 'agentledger-bench-columns-'));
    try {
      chdb(dir, built, rows.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

/** The same layouts on ClickHouse 25.8 (chdb), through bench/columns_chdb.py. */
function chdb(dir: string, built: Built[], rows: number): void {
  const venv = join(REPO, '.state', 'venv-chdb', 'bin', 'python');
  if (!existsSync(venv)) {
    say('no chdb (run bash test/modern/run.sh once): ClickHouse 25.8 not measured');
    return;
  }
  const spec = {
    rounds: ROUNDS,
    rows,
    layouts: built.map((b) => {
      const paths = b.bodies.map((body, i) => {
        const path = join(dir, `${b.layout.name}.${String(i).padStart(4, '0')}.${b.format === 'RowBinary' ? 'bin' : 'tsv'}`);
        writeFileSync(path, body);
        return path;
      });
      return { name: b.layout.name, ddl: b.ddl, structure: b.structure, format: b.format, paths };
    }),
  };
  const specPath = join(dir, 'spec.json');
  writeFileSync(specPath, JSON.stringify(spec));
  say(`ClickHouse 25.8 (chdb): ${ROUNDS} rounds of ${built.length} layouts`);
  const run = spawnSync(venv, [join(REPO, 'bench', 'columns_chdb.py'), specPath], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (run.status !== 0) say(`columns_chdb.py exited ${String(run.status)}`);
}

main().catch((e: unknown) => {
  process.stderr.write(`columns: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
