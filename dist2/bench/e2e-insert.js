/**
 * The ClickHouse insert ceiling of bench/e2e.sh: how fast ClickHouse takes
 * ingest's own rows when nothing else happens. Posts a file of rows exported
 * from an ingest round (`SELECT * FROM envelopes … FORMAT F`) to
 * `INSERT INTO envelopes FORMAT F` of a freshly migrated database, in chunks
 * of --rows rows, one request at a time as ingest does (its flush is awaited),
 * over plain HTTP without compression (ingest's @clickhouse/client settings).
 *
 *   node dist/bench/e2e-insert.js --file F --database DB [--format JSONEachRow]
 *        [--rows 5000] [--url http://127.0.0.1:8123] [--user U] [--password P]
 *        [--ch-pid PID]
 *
 * The file is read and split before the clock starts; the time runs from the
 * first request to the last answer. --ch-pid: ClickHouse's server process,
 * whose CPU seconds over that window are reported. Prints one JSON object:
 * {"rows", "requests", "bytes", "seconds", "rowsPerSecond", "clickhouseCpuSeconds"}.
 * Formats: one row per line and no header (JSONEachRow, TabSeparated, TSV).
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
const { values: args } = parseArgs({
    options: {
        file: { type: 'string' },
        database: { type: 'string' },
        format: { type: 'string', default: 'JSONEachRow' },
        rows: { type: 'string', default: '5000' },
        url: { type: 'string', default: 'http://127.0.0.1:8123' },
        user: { type: 'string', default: 'default' },
        password: { type: 'string', default: '' },
        'ch-pid': { type: 'string' },
    },
});
function fail(message) {
    process.stderr.write(`e2e-insert: ${message}\n`);
    process.exit(2);
}
/** Formats whose rows are exactly the lines of the export (no header, no multi-line rows). */
const LINE_FORMATS = new Set(['JSONEachRow', 'TabSeparated', 'TSV']);
const file = args.file ?? fail('--file is required');
const database = args.database ?? fail('--database is required');
const format = args.format ?? 'JSONEachRow';
if (!LINE_FORMATS.has(format))
    fail(`--format ${format}: one of ${[...LINE_FORMATS].join(', ')}`);
const rowsPerRequest = Number(args.rows);
if (!Number.isSafeInteger(rowsPerRequest) || rowsPerRequest < 1)
    fail('--rows takes a whole number >= 1');
/** User + system CPU seconds of a process so far, from /proc/PID/stat (fields 14 and 15, in clock ticks). */
function cpuSeconds(pid) {
    if (pid === undefined || pid === '')
        return null;
    try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        // The command name (field 2) may hold spaces: count from after its ')'.
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        // CLK_TCK is 100 on Linux for every architecture Node runs on.
        return (Number(fields[11]) + Number(fields[12])) / 100;
    }
    catch {
        return null;
    }
}
/** The file split into chunks of whole lines, rowsPerRequest lines each (views, not copies). */
function chunks(data) {
    const bodies = [];
    let rows = 0;
    let start = 0;
    let inChunk = 0;
    let at = data.indexOf(10);
    while (at !== -1) {
        rows++;
        inChunk++;
        if (inChunk === rowsPerRequest) {
            bodies.push(data.subarray(start, at + 1));
            start = at + 1;
            inChunk = 0;
        }
        at = data.indexOf(10, at + 1);
    }
    if (start < data.length) {
        if (data[data.length - 1] !== 10)
            rows++; // a last line without its newline
        bodies.push(data.subarray(start));
    }
    return { bodies, rows };
}
const base = new URL(args.url ?? 'http://127.0.0.1:8123');
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const auth = `Basic ${Buffer.from(`${args.user ?? 'default'}:${args.password ?? ''}`).toString('base64')}`;
const path = `/?${new URLSearchParams({ database, query: `INSERT INTO envelopes FORMAT ${format}` }).toString()}`;
/** One INSERT; resolves when ClickHouse has answered 200, rejects with its message otherwise. */
function post(body) {
    return new Promise((resolve, reject) => {
        const req = request({ agent, host: base.hostname, port: base.port || 80, path, method: 'POST', headers: { Authorization: auth, 'Content-Length': body.length } }, (res) => {
            const parts = [];
            res.on('data', (d) => parts.push(d));
            res.on('end', () => {
                if (res.statusCode === 200)
                    resolve();
                else
                    reject(new Error(`HTTP ${res.statusCode}: ${Buffer.concat(parts).toString('utf8').slice(0, 500)}`));
            });
            res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
    });
}
const data = readFileSync(file);
const { bodies, rows } = chunks(data);
if (bodies.length === 0)
    fail(`${file} holds no rows`);
const cpu0 = cpuSeconds(args['ch-pid']);
const started = performance.now();
for (const body of bodies)
    await post(body);
const seconds = (performance.now() - started) / 1000;
const cpu1 = cpuSeconds(args['ch-pid']);
agent.destroy();
process.stdout.write(JSON.stringify({
    rows,
    requests: bodies.length,
    bytes: data.length,
    seconds,
    rowsPerSecond: Math.round(rows / seconds),
    clickhouseCpuSeconds: cpu0 === null || cpu1 === null ? null : Math.round((cpu1 - cpu0) * 100) / 100,
}) + '\n');
//# sourceMappingURL=e2e-insert.js.map