/**
 * The frozen-loop guard of the long-running commands (`ingest`, `worker`,
 * `serve`): a process whose event loop stops turning is killed, so its
 * supervisor restarts it.
 *
 * A process can stay alive and do nothing: code that never yields, or a
 * promise chain that answers itself on the microtask queue for ever (kafkajs
 * 2.2.4 did, src/kafka/runner-stop.ts). Then no timer runs (the stall
 * watchdog is one), no socket is read, and no signal handler runs: SIGTERM
 * does nothing, and the member holds its partitions, unseen by every check
 * inside the process. This guard watches from a worker thread, which has an
 * event loop of its own: the main thread counts a beat into shared memory
 * every quarter of the limit; when the count has not moved for the limit, the
 * worker writes one error line (synchronously: a worker's stderr goes through
 * the main thread, which no longer runs) and SIGKILLs the process. Nothing is
 * lost: progress is in ClickHouse and Kafka's commits, as after any kill.
 */
import { Worker } from 'node:worker_threads';
import type { LogFormat, LogLevel } from './logger.js';

export interface FrozenLoopGuardOptions {
  /** How long the event loop may not turn before the process is killed (ms). */
  readonly limitMs: number;
  /** The setting that sets the limit, named in the line. */
  readonly setting: string;
  readonly format: LogFormat;
  readonly level: LogLevel;
}

/** What the worker is given (src/observability/frozen-loop-worker.ts). */
export interface FrozenLoopWorkerData extends FrozenLoopGuardOptions {
  /** One Int32: the main thread's beats. */
  readonly beats: SharedArrayBuffer;
  readonly tickMs: number;
}

export interface FrozenLoopGuard {
  stop(): Promise<void>;
}

/** Starts the guard; it keeps no process alive by itself. `onError` hears a guard that failed (the process goes on, unguarded). */
export function guardEventLoop(options: FrozenLoopGuardOptions, onError: (err: Error) => void): FrozenLoopGuard {
  const beats = new SharedArrayBuffer(4);
  const counter = new Int32Array(beats);
  const tickMs = Math.max(10, Math.floor(options.limitMs / 4));
  const data: FrozenLoopWorkerData = { ...options, beats, tickMs };
  // None of the process's Node flags: they are the main program's (an --eval, an --inspect).
  const worker = new Worker(new URL('./frozen-loop-worker.js', import.meta.url), { workerData: data, execArgv: [] });
  worker.unref();
  // A guard that fails must not take the process with it (a Worker's error is thrown when unheard).
  worker.on('error', (err) => onError(err));
  const beat = setInterval(() => Atomics.add(counter, 0, 1), tickMs);
  beat.unref();
  return {
    async stop() {
      clearInterval(beat);
      await worker.terminate();
    },
  };
}
