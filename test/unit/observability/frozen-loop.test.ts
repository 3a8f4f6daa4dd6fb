/**
 * The frozen-loop guard, in child processes of its own: a loop that never
 * yields and a promise chain spinning on the microtask queue are killed with
 * one line naming the setting; a process that works hard but yields is left
 * alone, and exits by itself (the guard keeps nothing alive).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';

const GUARD = new URL('../../../src/observability/frozen-loop.js', import.meta.url).href;

/** Runs `body` after starting the guard (limit 1000 ms, JSON lines) in a child; bounded at 30 s. */
function child(body: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const script = `import { guardEventLoop } from ${JSON.stringify(GUARD)};
guardEventLoop({ limitMs: 1000, setting: 'AGENTLEDGER_FROZEN_LOOP_EXIT_MS', format: 'json', level: 'info' }, (err) => { throw err; });
setTimeout(() => { ${body} }, 200);`;
  const proc = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const bound = setTimeout(() => proc.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    proc.on('close', (code, signal) => {
      clearTimeout(bound);
      resolve({ code, signal, stderr });
    }),
  );
}

function assertKilledWithOneLine(out: { signal: NodeJS.Signals | null; stderr: string }): void {
  assert.equal(out.signal, 'SIGKILL', out.stderr);
  const lines = out.stderr.trim().split('\n');
  assert.equal(lines.length, 1, out.stderr);
  const line = JSON.parse(lines[0]!) as { level: string; msg: string };
  assert.equal(line.level, 'error');
  assert.match(line.msg, /^the event loop has not turned for \d+ ms .*killing the process so its supervisor restarts it \(AGENTLEDGER_FROZEN_LOOP_EXIT_MS=1000\)$/);
}

test('a loop that never yields: the guard writes one line and SIGKILLs the process', async () => {
  assertKilledWithOneLine(await child('for (;;) {}'));
});

test('a promise chain spinning on the microtask queue (no timer runs, as kafkajs 2.2.4 did): killed the same way', async () => {
  assertKilledWithOneLine(await child('const spin = () => Promise.resolve().then(spin); spin();'));
});

test('hard work that yields (three seconds of 300 ms slices) is left alone, and the process exits by itself', async () => {
  const out = await child(`const end = Date.now() + 3000;
const slice = () => { const stop = Date.now() + 300; while (Date.now() < stop) {} if (Date.now() < end) setImmediate(slice); };
slice();`);
  assert.deepEqual({ code: out.code, signal: out.signal, stderr: out.stderr }, { code: 0, signal: null, stderr: '' });
});
