/**
 * Runs the real `agentledger` CLI as a child process, so tests can kill it
 * with SIGKILL at any instant, the way a crash or an OOM kill would.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';
/** The CLI of this build (see cli-entry.ts). */
export const BIN = fileURLToPath(new URL('./cli-entry.js', import.meta.url));
const running = new Set();
// A test that fails half-way must not leave a consumer running: it would keep
// the test file alive until the runner's timeout, and skew the next file.
after(() => {
    for (const child of running)
        child.kill('SIGKILL');
});
export function runCli(args, env) {
    const child = spawn(process.execPath, [BIN, ...args], {
        env: { PATH: process.env['PATH'] ?? '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    child.once('exit', () => running.delete(child));
    let err = '';
    child.stderr?.on('data', (d) => {
        err += d.toString();
        if (err.length > 200_000)
            err = err.slice(-100_000);
    });
    child.stdout?.resume();
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
    return { child, stderr: () => err, exited };
}
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/**
 * Waits for a fact: `probe` until it gives something, every 25 ms, failing
 * after `ms` with what was awaited and the last words of `workers`.
 */
export async function until(what, ms, probe, workers = []) {
    const end = Date.now() + ms;
    for (;;) {
        const got = await probe();
        if (got !== undefined)
            return got;
        if (Date.now() > end)
            assert.fail(`not within ${ms} ms: ${what}; workers: ${workers.map((w) => w.stderr().slice(-2000)).join('\n---\n')}`);
        await sleep(25);
    }
}
/** A deterministic PRNG for reproducible kill schedules (seed printed by the test). */
export { mulberry32 as prng } from '../../src/demo/traffic/index.js';
//# sourceMappingURL=processes.js.map