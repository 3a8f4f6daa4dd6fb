/**
 * `npm test`'s test run: the unit tests in one `node --test`, then each
 * integration file in its own, in name order, one at a time (they share the
 * stack). Every file's own spec output is passed through; a summary closes,
 * and under it what each failing file's failing tests said (the assertion,
 * not the stack), where the tail of a CI log shows it.
 *
 * On the local stack, ClickHouse's error log is read after each file. A line
 * there that says the server itself broke (a signal, or a C++ exception
 * escaping it: code 1001, std::bad_weak_ptr and the like) fails the run even
 * when every test of the file passed, and names the file: such a fault was
 * caused by something the suite sent (migration 0017 says how SQL of ours
 * once overran a stack array in 18.16, and the server crashed seconds later or
 * answered bad_weak_ptr to every other query). ClickHouse is then restarted
 * through infra/stack.sh, so the files after it fail, or pass, on their own
 * merits. Nothing is run twice.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './services.js';
const DIST = join(REPO_ROOT, 'dist', 'test');
const ERROR_LOG = join(REPO_ROOT, '.state', 'clickhouse', 'log', 'clickhouse-server.err.log');
/** A line of ClickHouse's error log that says the server itself is broken. */
export const SERVER_FAULT = /Received signal|Code: 1001\b/;
const COUNTED = ['tests', 'pass', 'fail', 'skipped', 'todo'];
/** The totals a spec reporter prints at its end (`ℹ pass 12`). */
export function specCounts(output) {
    const counts = { tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0 };
    for (const key of COUNTED) {
        const found = [...output.matchAll(new RegExp(`^ℹ ${key} (\\d+)$`, 'gm'))].pop();
        if (found?.[1] !== undefined)
            counts[key] = Number(found[1]);
    }
    return counts;
}
/** The server-fault lines among `text` (at most a few, each shortened). */
export function serverFaults(text, max = 3) {
    return text
        .split('\n')
        .filter((line) => SERVER_FAULT.test(line))
        .slice(0, max)
        .map((line) => (line.length > 240 ? `${line.slice(0, 240)}…` : line));
}
/**
 * What a spec reporter says of its failing tests (the block it prints after
 * `✖ failing tests:`), short enough to repeat under the summary, where a
 * CI log's tail shows it: stack frames dropped, each line cut to `width`,
 * at most `max` characters in all.
 */
export function failureDigest(output, max = 2000, width = 240) {
    const at = output.lastIndexOf('✖ failing tests:');
    if (at < 0)
        return '';
    const lines = output
        .slice(at + '✖ failing tests:'.length)
        .split('\n')
        .filter((line) => line.trim() !== '' && !/^\s+at /.test(line))
        .map((line) => (line.length > width ? `${line.slice(0, width)}…` : line));
    let digest = '';
    for (const line of lines) {
        if (digest.length + line.length + 1 > max)
            return `${digest}\n    …`;
        digest += `${digest === '' ? '' : '\n'}${line}`;
    }
    return digest;
}
/** Where the error log ends now (0 when there is none). */
function logEnd() {
    return existsSync(ERROR_LOG) ? statSync(ERROR_LOG).size : 0;
}
/** What the error log gained since `from` (all of it when it was rotated or recreated). */
function logSince(from) {
    const end = logEnd();
    const start = end < from ? 0 : from;
    if (end === start)
        return '';
    const fd = openSync(ERROR_LOG, 'r');
    try {
        const buf = Buffer.alloc(end - start);
        readSync(fd, buf, 0, buf.length, start);
        return buf.toString('latin1');
    }
    finally {
        closeSync(fd);
    }
}
/** Runs `node --test` on `paths`, its output passed through; resolves with its exit code and output. */
function nodeTest(paths, extra = []) {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ['--test', '--test-reporter=spec', ...extra, ...paths], {
            cwd: REPO_ROOT,
            stdio: ['ignore', 'pipe', 'inherit'],
        });
        const chunks = [];
        child.stdout.on('data', (chunk) => {
            chunks.push(chunk);
            process.stdout.write(chunk);
        });
        child.on('error', reject);
        child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output: Buffer.concat(chunks).toString('utf8') }));
    });
}
function restartClickHouse() {
    const result = spawnSync('bash', [join(REPO_ROOT, 'infra', 'stack.sh'), 'restart', 'clickhouse'], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (result.status !== 0)
        throw new Error(`infra/stack.sh restart clickhouse failed with exit code ${result.status}`);
}
async function main() {
    const started = Date.now();
    const local = (process.env.AGENTLEDGER_TEST_SERVICES ?? 'local') === 'local' && existsSync(join(REPO_ROOT, '.state', 'clickhouse'));
    const total = { tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0 };
    const add = (c) => {
        for (const key of COUNTED)
            total[key] += c[key];
    };
    const failed = [];
    const digests = [];
    const unit = await nodeTest([join(DIST, 'unit')]);
    add(specCounts(unit.output));
    if (unit.code !== 0) {
        failed.push('test/unit');
        digests.push(`[test] test/unit:\n${failureDigest(unit.output)}`);
    }
    const dir = join(DIST, 'integration');
    const files = readdirSync(dir)
        .filter((f) => f.endsWith('.test.js'))
        .sort();
    for (const [i, file] of files.entries()) {
        const path = join(dir, file);
        console.log(`[test] ${i + 1}/${files.length} ${file}`);
        const from = logEnd();
        const run = await nodeTest([path], ['--test-timeout=900000']);
        const faults = local ? serverFaults(logSince(from)) : [];
        if (faults.length > 0) {
            failed.push(`test/integration/${file.replace(/\.js$/, '.ts')}: ClickHouse reported a fault of its own while it ran:\n    ${faults.join('\n    ')}`);
            console.log(`[test] ClickHouse reported a fault of its own during ${file}: restarting it`);
            restartClickHouse();
        }
        add(specCounts(run.output));
        if (run.code !== 0) {
            failed.push(`test/integration/${file.replace(/\.js$/, '.ts')}`);
            digests.push(`[test] ${file.replace(/\.js$/, '.ts')}:\n${failureDigest(run.output)}`);
        }
    }
    console.log(`\n[test] summary: ${COUNTED.map((k) => `${k} ${total[k]}`).join(', ')}; ${files.length} integration files; ${Math.round((Date.now() - started) / 1000)} s`);
    if (digests.length > 0)
        console.log(`\n[test] what the failing tests said (their files' output above has it whole):\n${digests.join('\n')}\n`);
    for (const f of failed)
        console.log(`[test] FAILED: ${f}`);
    return failed.length === 0 ? 0 : 1;
}
if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
    main().then((code) => process.exit(code), (err) => {
        console.error(`[test] ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
    });
}
//# sourceMappingURL=run-suite.js.map