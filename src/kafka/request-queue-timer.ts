/**
 * A fix of kafkajs 2.2.4's request queue for Node 23 and later, which warn
 * (`TimeoutNegativeWarning`, once per process, on stderr) when a timer is
 * set with a negative delay: tulios/kafkajs#1751, still open upstream.
 *
 * After each answer the queue schedules a check of its pending requests
 * at `throttledUntil - Date.now()`. While no broker has throttled the
 * client, `throttledUntil` is -1, so the delay is minus the epoch in
 * milliseconds. Node has always run such a timer after 1 ms; since Node 23
 * it also prints the warning. The fix is kafkajs's method with the delay
 * floored at that same 1 ms: what runs and when is unchanged, and nothing
 * is printed. A throttle in the future (a positive delay) and requests
 * waiting while not throttled (kafkajs's 10 ms) are scheduled as before.
 */
import { createRequire } from 'node:module';
import { PATCHED_KAFKAJS } from './runner-stop.js';

/** What kafkajs's RequestQueue keeps that the scheduling reads. */
interface RequestQueue {
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  pending: readonly unknown[];
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs's CHECK_PENDING_REQUESTS_INTERVAL (requestQueue/index.js): the next look at requests waiting while not throttled. */
const CHECK_PENDING_REQUESTS_INTERVAL = 10;

/** Node's own delay for a timer asked to run sooner than 1 ms. */
const SOONEST_MS = 1;

let patched = false;

/** Applies the fix once per process; throws if the installed kafkajs is not the version it was written for. */
export function fixRequestQueueTimer(): void {
  if (patched) return;
  const require = createRequire(import.meta.url);
  const { version } = require('kafkajs/package.json') as { version: string };
  if (version !== PATCHED_KAFKAJS) {
    throw new Error(`kafkajs ${version} is installed; src/kafka/request-queue-timer.ts fixes ${PATCHED_KAFKAJS} and must be checked against the new version`);
  }
  const RequestQueue = require('kafkajs/src/network/requestQueue') as { prototype: RequestQueue };
  // kafkajs 2.2.4's method line for line, but for the delay's floor.
  RequestQueue.prototype.scheduleCheckPendingRequests = function (this: RequestQueue): void {
    let scheduleAt = this.throttledUntil - Date.now();
    if (!this.throttleCheckTimeoutId) {
      if (this.pending.length > 0) scheduleAt = scheduleAt > 0 ? scheduleAt : CHECK_PENDING_REQUESTS_INTERVAL;
      this.throttleCheckTimeoutId = setTimeout(() => {
        this.throttleCheckTimeoutId = null;
        this.checkPendingRequests();
      }, Math.max(SOONEST_MS, scheduleAt));
    }
  };
  patched = true;
}
