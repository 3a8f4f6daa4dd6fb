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
 *
 * When a file fails, the lines of the local cluster's four error logs that
 * say a server part stopped (18.16's DDL worker "Terminating", a signal) are
 * added to its digest: a CI run keeps nothing else of those logs, and once
 * a cluster file failed in CI with only a timeout to show for it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { join } from 'node:path';
import { REPO_ROOT } from './services.js';
import { busyShare, cpuSample, TIMES_FILE, timesJson, timesTable, type Times } from './suite-times.js';

const DIST = join(REPO_ROOT, 'dist', 'test');
const ERROR_LOG = join(REPO_ROOT, '.state', 'clickhouse', 'log', 'clickhouse-server.err.log');
/** The local cluster's error logs (infra/cluster.sh), by server. */
const CLUSTER_LOGS = [1, 2, 3, 4].map((n) => [`clickhouse-${n}`, join(REPO_ROOT, '.state', 'cluster', `clickhouse-${n}`, 'log', 'clickhouse-server.err.log')] as const);

/** A line of ClickHouse's error log that says the server itself is broken. */
export const SERVER_FAULT = /Received signal|Code: 1001\b/;
/** A line of a cluster server's error log that says a part of it stopped for good: its DDL worker, or the server. */
export const CLUSTER_FAULT = /DDLWorker: (Unexpected|Terminating)|Received signal/;

interface Counts {
  tests: number;
  pass: number;
  fail: number;
  skipped: number;
  todo: number;
}

const COUNTED = ['tests', 'pass', 'fail', 'skipped', 'todo'] as const;

/** The totals a spec reporter prints at its end (`ℹ pass 12`). */
export function specCounts(output: string): Counts {
  const counts: Counts = { tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0 };
  for (const key of COUNTED) {
    const found = [...output.matchAll(new RegExp(`^ℹ ${key} (\\d+)$`, 'gm'))].pop();
    if (found?.[1] !== undefined) counts[key] = Number(found[1]);
  }
  return counts;
}

/** The lines among `text` that `fault` finds (at most a few, each shortened): by default, the server-fault lines. */
export function serverFaults(text: string, max = 3, fault: RegExp = SERVER_FAULT): string[] {
  return text
    .split('\n')
    .filter((line) => fault.test(line))
    .slice(0, max)
    .map((line) => (line.length > 240 ? `${line.slice(0, 240)}…` : line));
}

/**
 * What a spec reporter says of its failing tests (the block it prints after
 * `✖ failing tests:`), short enough to repeat under the summary, where a
 * CI log's tail shows it: stack frames dropped, each line cut to `width`,
 * at most `max` characters in all.
 */
export function failureDigest(output: string, max = 2000, width = 240): string {
  const at = output.lastIndexOf('✖ failing tests:');
  if (at < 0) return '';
  const lines = output
    .slice(at + '✖ failing tests:'.length)
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^\s+at /.test(line))
    .map((line) => (line.length > width ? `${line.slice(0, width)}…` : line));
  let digest = '';
  for (const line of lines) {
    if (digest.length + line.length + 1 > max) return `${digest}\n    …`;
    digest += `${digest === '' ? '' : '\n'}${line}`;
  }
  return digest;
}

/** Where an error log ends now (0 when there is none). */
function logEnd(log = ERROR_LOG): number {
  return existsSync(log) ? statSync(log).size : 0;
}

/** What an error log gained since `from` (all of it when it was rotated or recreated). */
function logSince(from: number, log = ERROR_LOG): string {
  const end = logEnd(log);
  const start = end < from ? 0 : from;
  if (end === start) return '';
  const fd = openSync(log, 'r');
  try {
    const buf = Buffer.alloc(end - start);
    readSync(fd, buf, 0, buf.length, start);
    return buf.toString('latin1');
  } finally {
    closeSync(fd);
  }
}

/** Runs `node --test` on `paths`, its output passed through; resolves with its exit code and output. */
function nodeTest(paths: string[], extra: string[] = []): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--test', '--test-reporter=spec', ...extra, ...paths], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      process.stdout.write(chunk);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output: Buffer.concat(chunks).toString('utf8') }));
  });
}

function restartClickHouse(): void {
  const result = spawnSync('bash', [join(REPO_ROOT, 'infra', 'stack.sh'), 'restart', 'clickhouse'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) throw new Error(`infra/stack.sh restart clickhouse failed with exit code ${result.status}`);
}

async function main(): Promise<number> {
  const started = Date.now();
  const local = (process.env.AGENTLEDGER_TEST_SERVICES ?? 'local') === 'local' && existsSync(join(REPO_ROOT, '.state', 'clickhouse'));
  const total: Counts = { tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0 };
  const add = (c: Counts): void => {
    for (const key of COUNTED) total[key] += c[key];
  };
  const failed: string[] = [];
  const digests: string[] = [];

  const times: Times = {};
  const timed = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    const t0 = Date.now();
    const c0 = cpuSample();
    const result = await run();
    times[name] = { seconds: (Date.now() - t0) / 1000, cpu: busyShare(c0, cpuSample()), alone: true };
    return result;
  };
  const unit = await timed('test/unit', () => nodeTest([join(DIST, 'unit')]));
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
    const clusterFrom = CLUSTER_LOGS.map(([, log]) => logEnd(log));
    const run = await timed(`test/integration/${file.replace(/\.js$/, '.ts')}`, () => nodeTest([path], ['--test-timeout=900000']));
    const faults = local ? serverFaults(logSince(from)) : [];
    if (faults.length > 0) {
      failed.push(`test/integration/${file.replace(/\.js$/, '.ts')}: ClickHouse reported a fault of its own while it ran:\n    ${faults.join('\n    ')}`);
      console.log(`[test] ClickHouse reported a fault of its own during ${file}: restarting it`);
      restartClickHouse();
    }
    add(specCounts(run.output));
    if (run.code !== 0) {
      failed.push(`test/integration/${file.replace(/\.js$/, '.ts')}`);
      const cluster = CLUSTER_LOGS.flatMap(([server, log], n) => serverFaults(logSince(clusterFrom[n] ?? 0, log), 3, CLUSTER_FAULT).map((line) => `  ${server}: ${line}`));
      const said = cluster.length === 0 ? '' : `\n  the cluster's error logs meanwhile:\n${cluster.join('\n')}`;
      digests.push(`[test] ${file.replace(/\.js$/, '.ts')}:\n${failureDigest(run.output)}${said}`);
    }
  }

  console.log(`\n[test] summary: ${COUNTED.map((k) => `${k} ${total[k]}`).join(', ')}; ${files.length} integration files; ${Math.round((Date.now() - started) / 1000)} s`);
  mkdirSync(dirname(TIMES_FILE), { recursive: true });
  writeFileSync(TIMES_FILE, timesJson(times, new Date()));
  console.log(`\n[test] every file's wall seconds and the machine's CPU busy share meanwhile, slowest first:\n${timesTable(times)}`);
  if (digests.length > 0) console.log(`\n[test] what the failing tests said (their files' output above has it whole):\n${digests.join('\n')}\n`);
  for (const f of failed) console.log(`[test] FAILED: ${f}`);
  return failed.length === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(`[test] ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
