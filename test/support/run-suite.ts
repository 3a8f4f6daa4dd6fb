/**
 * The suite's run (infra/test.sh, after its one build; `npm test` builds
 * first): beside the unit tests, ESLint, the Go fixture and chdb checks and
 * the local cluster's start; then each integration file in its own
 * `node --test`, in the lanes of suite-lanes.ts (the cluster's files beside
 * the single-node ones, two single-node files at once where both mostly
 * wait), each file's output printed whole when it ends. A summary closes:
 * the counts, every file's wall seconds and CPU share (suite-times.ts),
 * slowest first, and under it what each failing file's failing tests said
 * (the assertion, not the stack), where the tail of a CI log shows it.
 *
 * On the local stack, ClickHouse's error log is read after each file. A line
 * there that says the server itself broke (a signal, or a C++ exception
 * escaping it: code 1001, std::bad_weak_ptr and the like) fails the run even
 * when every test of the file passed, and names the file: such a fault was
 * caused by something the suite sent (migration 0017 says how SQL of ours
 * once overran a stack array in 18.16, and the server crashed seconds later or
 * answered bad_weak_ptr to every other query). ClickHouse is then restarted
 * through infra/stack.sh once nothing of the single-node lane runs, so the
 * files after it fail, or pass, on their own merits. Nothing is run twice.
 *
 * When a file fails, the lines of the local cluster's four error logs that
 * say a server part stopped (18.16's DDL worker "Terminating", a signal) are
 * added to the digest: a CI run keeps nothing else of those logs, and once
 * a cluster file failed in CI with only a timeout to show for it.
 *
 * With CI=true a skipped or todo test fails the run (skips.ts).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { join } from 'node:path';
import { restartClusterServers } from './cluster-restart.js';
import { CLUSTER_LOGS, logEnd, logSince } from './server-logs.js';
import { REPO_ROOT } from './services.js';
import { laneOf, plan, toStart, type Planned } from './suite-lanes.js';
import { busyShare, cpuSample, MEASURED_FILE, readTimes, schedulingTimes, TIMES_FILE, timesJson, timesTable, type FileTime, type Times } from './suite-times.js';

const DIST = join(REPO_ROOT, 'dist', 'test');

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

/** A command's exit code and everything it printed (stdout and stderr together). */
interface Ran {
  code: number;
  output: string;
}

/**
 * Runs a command, keeping what it prints: files run side by side, so each
 * one's output is printed whole when it ends rather than interleaved.
 */
function runKept(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output: Buffer.concat(chunks).toString('utf8') }));
  });
}

/**
 * The test files under `dir`, every level down. Named one by one: since
 * Node 22, `node --test` takes its arguments as files or glob patterns and
 * no longer searches a directory named.
 */
function testFilesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.js'))
    .sort()
    .map((f) => join(dir, f));
}

/** `node --test` with the spec reporter on `paths`. */
function nodeTest(paths: readonly string[], extra: readonly string[] = []): Promise<Ran> {
  return runKept(process.execPath, ['--test', '--test-reporter=spec', ...extra, ...paths]);
}

function stackSh(...args: string[]): Promise<Ran> {
  return runKept('bash', [join(REPO_ROOT, 'infra', 'stack.sh'), ...args]);
}

/**
 * The checks that need no test services, run beside the unit tests: ESLint
 * (type-aware), the Go-generated fixtures, and every statement on current
 * ClickHouse (chdb). AGENTLEDGER_TEST_CHECKS=0 leaves them out (a developer
 * running one lane). ESLint and chdb take a core each for a minute or more
 * and nothing waits for them until the end, so they run at the lowest
 * priority (nice 19): on 2026-12-07 beside the unit tests at the same
 * priority they held the unit tests, which every integration file waits
 * for, at 70–85 s, where the unit tests alone take about 45 s; niced, they
 * take the CPU the files that mostly wait leave idle.
 */
const NICE = ['nice', '-n', '19'] as const;
const CHECKS: ReadonlyArray<readonly [string, string, readonly string[]]> = [
  ['eslint', NICE[0], [...NICE.slice(1), process.execPath, join(REPO_ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js'), '.']],
  // The committed chains are what the Go generator writes; then the franz-go producer built once into Go's
  // build cache (its modules pinned in go.sum), so producers.test.ts's own build of it takes a second, not a
  // minute of both cores beside other files. Without Go, regen.sh skips, or fails on CI.
  ['go fixtures', 'bash', ['-c', 'bash test/fixtures/envelopes/regen.sh --check && if command -v go >/dev/null; then cd test/fixtures/producers/franz && GOWORK=off GOFLAGS="-buildvcs=false -mod=readonly" go build -o /dev/null .; fi']],
  ['chdb', NICE[0], [...NICE.slice(1), 'bash', join(REPO_ROOT, 'test', 'modern', 'run.sh')]],
];

/** How a run is laid out: every file one after another (`serial`, for measuring each alone) or in lanes. */
type Layout = 'lanes' | 'serial';

/** A file run: what it printed, how long, its CPU share, whether anything ran beside it. */
interface FileRun extends Ran {
  name: string;
  time: FileTime;
}

async function main(): Promise<number> {
  const started = Date.now();
  const startCpu = cpuSample();
  const layout: Layout = process.env['AGENTLEDGER_TEST_LANES'] === 'serial' ? 'serial' : 'lanes';
  const only = process.env['AGENTLEDGER_TEST_ONLY']?.split(',').map((f) => f.trim()).filter((f) => f !== '');
  const ci = process.env['CI'] === 'true';
  const local = (process.env['AGENTLEDGER_TEST_SERVICES'] ?? 'local') === 'local' && existsSync(join(REPO_ROOT, '.state', 'clickhouse'));
  const withCluster = process.env['AGENTLEDGER_TEST_CLUSTER'] === '1';
  const total: Counts = { tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0 };
  const failed: string[] = [];
  const digests: string[] = [];
  const times: Times = {};
  /** How many things run now: a file measured while another ran is marked so. */
  let runningNow = 0;
  const besides = new Set<string>();

  /** Runs `run` as the measured job `name`, printing its output whole, then its seconds. */
  const timed = async (name: string, run: () => Promise<Ran>): Promise<FileRun> => {
    runningNow++;
    if (runningNow > 1) besides.add(name);
    const t0 = Date.now();
    const c0 = cpuSample();
    console.log(`[test] start ${name}`);
    const result = await run();
    runningNow--;
    if (runningNow > 0) besides.add(name);
    const time: FileTime = { seconds: (Date.now() - t0) / 1000, cpu: busyShare(c0, cpuSample()), alone: !besides.has(name) };
    times[name] = time;
    process.stdout.write(`[test] ── ${name} (${time.seconds.toFixed(1)} s, exit ${result.code})\n${result.output}${result.output.endsWith('\n') || result.output === '' ? '' : '\n'}`);
    return { ...result, name, time };
  };
  const counted = (run: FileRun): void => {
    const c = specCounts(run.output);
    for (const key of COUNTED) total[key] += c[key];
    if (run.code !== 0) {
      failed.push(run.name);
      digests.push(`[test] ${run.name}:\n${failureDigest(run.output) || run.output.trim().split('\n').slice(-15).join('\n')}`);
    }
  };

  // Beside the unit tests: the checks, and the local cluster coming up.
  const checks = process.env['AGENTLEDGER_TEST_CHECKS'] === '0' || only !== undefined ? [] : CHECKS.map(([name, cmd, args]) => timed(name, () => runKept(cmd, args)));
  /** A cluster that was up before the run (a developer's) is left up at the end; one this run started is stopped after its last file. */
  let clusterWasUp = false;
  const clusterUp =
    withCluster && layout === 'lanes'
      ? timed('cluster up', async () => {
          clusterWasUp = (await stackSh('status', '--cluster')).code === 0;
          return stackSh('up', '--cluster');
        })
      : undefined;
  let clusterReady = clusterUp === undefined;
  let clusterFailed: string | undefined;
  void clusterUp?.then((r) => {
    clusterReady = true;
    if (r.code !== 0) clusterFailed = `infra/stack.sh up --cluster failed (exit ${r.code}):\n${r.output.trim().split('\n').slice(-10).join('\n')}`;
  });
  // The lanes start while the unit tests run (toStart lets only the files that may run beside them begin).
  let unitRunning = only === undefined || only.includes('unit');
  const unit = unitRunning ? timed('test/unit', () => nodeTest(testFilesUnder(join(DIST, 'unit')), ['--test-concurrency=2'])) : undefined;

  const dir = join(DIST, 'integration');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.test.js'))
    .map((f) => f.replace(/\.js$/, '.ts'))
    .filter((f) => only === undefined || only.includes(f) || only.includes(laneOf(f)))
    .sort();
  const measured = schedulingTimes(readTimes(MEASURED_FILE), readTimes(TIMES_FILE));
  let pending = plan(files, measured);
  if (layout === 'serial') pending = [...pending].sort((a, b) => a.file.localeCompare(b.file));
  const running: Planned[] = [];
  let clickHouseBroken = false;
  let restarting = false;
  let clusterDown: Promise<void> | undefined;

  /** One integration file: its run, the server faults ClickHouse logged meanwhile, the cluster's lines if it failed. */
  const runFile = async (p: Planned): Promise<void> => {
    const from = logEnd();
    const clusterFrom = CLUSTER_LOGS.map(([, log]) => logEnd(log));
    const beside = running.filter((r) => r !== p).map((r) => r.file);
    const run = await timed(`test/integration/${p.file}`, () => nodeTest([join(dir, p.file.replace(/\.ts$/, '.js'))], ['--test-timeout=900000']));
    counted(run);
    const faults = local ? serverFaults(logSince(from)) : [];
    if (faults.length > 0) {
      const also = beside.length === 0 ? '' : ` (beside ${beside.join(', ')})`;
      failed.push(`test/integration/${p.file}: ClickHouse reported a fault of its own while it ran${also}:\n    ${faults.join('\n    ')}`);
      clickHouseBroken = true;
    }
    const stopped = CLUSTER_LOGS.map(([server, log], n) => [server, serverFaults(logSince(clusterFrom[n] ?? 0, log), 3, CLUSTER_FAULT)] as const).filter(([, lines]) => lines.length > 0);
    if (run.code !== 0 && stopped.length > 0) {
      digests.push(`  the cluster's error logs while ${p.file} ran:\n${stopped.flatMap(([server, lines]) => lines.map((line) => `  ${server}: ${line}`)).join('\n')}`);
    }
    if (p.lane === 'cluster' && stopped.length > 0 && pending.some((q) => q.lane === 'cluster')) {
      // The cluster starts once for all its files, so a server whose DDL worker stopped (18.16's ON CLUSTER
      // race, docs/architecture.md) would fail every file after: it is restarted first, as docs/operations.md
      // tells an operator to, and said so.
      const names = stopped.map(([server]) => server);
      console.log(`[test] ${names.join(', ')} logged a stopped part (${p.file}): restarting ${names.length === 1 ? 'it' : 'them'} before the next cluster file`);
      await restartClusterServers(names).catch((err: unknown) => failed.push((err as Error).message));
    }
  };

  await new Promise<void>((resolve) => {
    const step = (): void => {
      if (clusterFailed !== undefined) {
        failed.push(clusterFailed);
        clusterFailed = undefined;
      }
      if (clickHouseBroken && !restarting && !running.some((r) => r.lane === 'node')) {
        // A server fault: once nothing of the single-node lane runs, ClickHouse is restarted, so the files after are judged on their own.
        restarting = true;
        console.log('[test] ClickHouse reported a fault of its own: restarting it');
        void stackSh('restart', 'clickhouse').then((r) => {
          if (r.code !== 0) failed.push(`infra/stack.sh restart clickhouse failed (exit ${r.code}):\n${r.output}`);
          clickHouseBroken = false;
          restarting = false;
          step();
        });
      }
      const next = clickHouseBroken
        ? []
        : layout === 'serial'
          ? running.length === 0 && !unitRunning && pending[0] !== undefined && (pending[0].lane === 'node' || clusterReady)
            ? [pending[0]]
            : []
          : toStart({ pending, running, clusterReady, unitRunning });
      for (const p of next) {
        pending = pending.filter((q) => q !== p);
        running.push(p);
        void runFile(p).then(() => {
          running.splice(running.indexOf(p), 1);
          if (p.lane === 'cluster' && !pending.some((q) => q.lane === 'cluster') && clusterUp !== undefined && !clusterWasUp) {
            clusterDown = timed('cluster down', () => stackSh('down', '--cluster')).then((r) => {
              if (r.code !== 0) failed.push(`infra/stack.sh down --cluster failed (exit ${r.code})`);
            });
          }
          step();
        });
      }
      if (pending.length === 0 && running.length === 0 && !unitRunning) resolve();
    };
    void clusterUp?.then(step);
    void unit?.then((r) => {
      counted(r);
      unitRunning = false;
      step();
    });
    step();
  });

  await clusterDown;
  for (const check of await Promise.all(checks)) {
    if (check.code !== 0) {
      failed.push(check.name);
      digests.push(`[test] ${check.name}:\n${check.output.trim().split('\n').slice(-15).join('\n')}`);
    }
  }
  if (ci && total.skipped + total.todo > 0) {
    // On CI a skip or todo is a test that did not prove anything: a missing tool or service must fail, not pass by running less.
    failed.push(`CI=true: ${total.skipped} skipped and ${total.todo} todo tests (each must run on CI; the files' output above names them)`);
  }

  const seconds = Math.round((Date.now() - started) / 1000);
  const busy = Math.round(busyShare(startCpu, cpuSample()) * 100);
  console.log(`\n[test] summary: ${COUNTED.map((k) => `${k} ${total[k]}`).join(', ')}; ${files.length} integration files in ${layout}; ${seconds} s, the cores ${busy} % busy`);
  mkdirSync(dirname(TIMES_FILE), { recursive: true });
  writeFileSync(TIMES_FILE, timesJson(times, new Date()));
  console.log(`\n[test] every file's wall seconds and the machine's CPU busy share meanwhile, slowest first (${TIMES_FILE.slice(REPO_ROOT.length)}):\n${timesTable(times)}`);
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
