/**
 * A fix of kafkajs 2.2.4's consumer runner: a stop that lands while the
 * fetchers are being rebuilt left fetchers spinning on the microtask queue
 * for ever, starving the whole process.
 *
 * kafkajs rebuilds its fetchers when the brokers it knows change (a broker
 * dropped after its connection closed, a metadata refresh without it): the
 * fetch manager stops them and starts new ones, in a loop that does not ask
 * whether the runner was stopped meanwhile. A stop in that window (ours, to
 * join the group again; kafkajs's own, after a crash; a shutdown) finds the
 * old fetchers already stopping and waits for the consumer to finish; the
 * loop then starts new fetchers, and each asks the stopped runner for a
 * fetch, which answers `[]` at once, without I/O or a timer. The fetchers
 * ask again at once: no timer, no socket, no signal handler of the process
 * runs again, and the stop never returns. Seen on the cluster: a broker
 * leading a partition was SIGKILLed, the member joined again, and ingest
 * sat at 93 % CPU until killed, in kafkajs's fetcher loop. The same family
 * as tulios/kafkajs#1384 (the rebuild loop spinning with no broker left,
 * fixed by #1402 before 2.2.4); this window is still open in 2.2.4.
 *
 * The fix: a stopped runner asked for a fetch stops the fetchers of its
 * fetch manager before it answers `[]`, so each ends its loop and the fetch
 * manager's start returns, the runner finishes consuming, and the stop
 * completes. A fetch in a running runner is unchanged, and so is a stop
 * outside that window (its fetchers are stopped already; stopping them again
 * does nothing).
 */
import { createRequire } from 'node:module';

/** The kafkajs version this fix was written against and is tested on (test/unit/kafka/runner-stop.test.ts). */
export const PATCHED_KAFKAJS = '2.2.4';

interface Runner {
  running: boolean;
  fetchManager: { stop(): Promise<void> };
  fetch(nodeId: number): Promise<unknown[]>;
}

let patched = false;

/** Applies the fix once per process; throws if the installed kafkajs is not the version it was written for. */
export function fixRunnerStop(): void {
  if (patched) return;
  const require = createRequire(import.meta.url);
  const { version } = require('kafkajs/package.json') as { version: string };
  if (version !== PATCHED_KAFKAJS) {
    throw new Error(`kafkajs ${version} is installed; src/kafka/runner-stop.ts fixes ${PATCHED_KAFKAJS} and must be checked against the new version`);
  }
  const Runner = require('kafkajs/src/consumer/runner') as { prototype: Runner };
  const fetch = Runner.prototype.fetch;
  Runner.prototype.fetch = function (this: Runner, nodeId: number): Promise<unknown[]> {
    if (!this.running) {
      // Not awaited: the fetchers end their loops only once this fetch has answered.
      this.fetchManager.stop().catch(() => undefined);
      return Promise.resolve([]);
    }
    return fetch.call(this, nodeId);
  };
  patched = true;
}
