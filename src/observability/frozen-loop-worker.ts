/**
 * The frozen-loop guard's thread (src/observability/frozen-loop.ts): reads
 * the main thread's beats every tick; when they have not moved for the
 * limit, writes one error line to stderr, synchronously, and SIGKILLs the
 * process.
 */
import { writeSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import type { FrozenLoopWorkerData } from './frozen-loop.js';
import { createLogger } from './logger.js';

const { beats, tickMs, limitMs, setting, format, level } = workerData as FrozenLoopWorkerData;
const counter = new Int32Array(beats);
const log = createLogger(level, {}, { format, write: (line) => void writeSync(2, `${line}\n`) });
let seen = Atomics.load(counter, 0);
let movedAt = Date.now();

setInterval(() => {
  const now = Date.now();
  const count = Atomics.load(counter, 0);
  if (count !== seen) {
    seen = count;
    movedAt = now;
    return;
  }
  if (now - movedAt < limitMs) return;
  log.error(
    `the event loop has not turned for ${now - movedAt} ms (code that never yields, or a promise chain spinning on the microtask queue: no timer, socket or signal handler runs); killing the process so its supervisor restarts it (${setting}=${limitMs})`,
  );
  process.kill(process.pid, 'SIGKILL');
}, tickMs);
