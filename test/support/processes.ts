/**
 * Runs the real `agentledger` CLI as a child process, so tests can kill it
 * with SIGKILL at any instant, the way a crash or an OOM kill would.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';

/** The CLI of this build (see cli-entry.ts). */
export const BIN = fileURLToPath(new URL('./cli-entry.js', import.meta.url));

export interface Running {
  readonly child: ChildProcess;
  /** Everything it wrote to stderr so far (for failure messages). */
  stderr(): string;
  /** Resolves with the exit code (or the signal name) when it ends. */
  readonly exited: Promise<number | string>;
}

const running = new Set<ChildProcess>();

// A test that fails half-way must not leave a consumer running: it would keep
// the test file alive until the runner's timeout, and skew the next file.
after(() => {
  for (const child of running) child.kill('SIGKILL');
});

export function runCli(args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
    if (err.length > 200_000) err = err.slice(-100_000);
  });
  child.stdout?.resume();
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return { child, stderr: () => err, exited };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * `promise`, or `late` once `ms` have passed, whichever comes first. The
 * timer is cleared when the promise wins: a bound of minutes left running
 * kept a test file's process alive that long after its last test.
 */
export async function within<T, L>(promise: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<L>((r) => (timer = setTimeout(() => r(late), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits for a fact: `probe` until it gives something, every 25 ms, failing
 * after `ms` with what was awaited and the last words of `workers`.
 */
export async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>, workers: readonly Running[] = []): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > end) assert.fail(`not within ${ms} ms: ${what}; workers: ${workers.map((w) => w.stderr().slice(-2000)).join('\n---\n')}`);
    await sleep(25);
  }
}

/** A deterministic PRNG for reproducible kill schedules (seed printed by the test). */
export { mulberry32 as prng } from '../../src/demo/traffic/index.js';
