/**
 * The stall watchdog of `agentledger ingest`: a last line of defence, not a
 * fix. A consumer that stays a member of its group but makes no progress
 * while records wait (a client library stuck after a broker restart, a
 * flush that can never succeed) looks healthy to everything around it; the
 * watchdog notices, says why in one line, and stops the process so that its
 * supervisor starts a fresh one, which reads its state back from ClickHouse
 * and loses nothing (nothing past the durable rows was committed).
 */
import { failureMessage, within } from '../observability/errors.js';
/** Longest the lag check may take before Kafka counts as not answering. */
const CHECK_TIMEOUT_MS = 10_000;
export class StallWatchdog {
    ports;
    fired = false;
    checking = false;
    constructor(ports) {
        this.ports = ports;
    }
    /** One check; a stall found is reported once. */
    async check() {
        const { ports } = this;
        if (this.fired || this.checking)
            return;
        const since = ports.now() - ports.lastProgress();
        ports.observe(Math.max(0, Math.floor(since / 1000)));
        if (since < ports.stallMs)
            return;
        this.checking = true;
        try {
            let waiting;
            let unanswered = '';
            try {
                waiting = await within(ports.waiting(), CHECK_TIMEOUT_MS, 'the lag check');
            }
            catch (err) {
                unanswered = failureMessage(err, 300);
            }
            if (waiting === 0n) {
                ports.idle();
                return;
            }
            // Progress may have come while the check ran.
            const now = ports.now() - ports.lastProgress();
            if (now < ports.stallMs)
                return;
            this.fired = true;
            const what = waiting !== undefined ? `${waiting} record(s) wait in this member's partitions` : `Kafka did not answer the lag check (${unanswered})`;
            const failure = ports.lastFailure();
            ports.stalled(`no rows made durable for ${Math.floor(now / 1000)} s while ${what}${failure ? `; last failure: ${failureMessage(failure, 300)}` : ''}`);
        }
        finally {
            this.checking = false;
        }
    }
    /** Checks every `everyMs` until stopped; the timer does not keep the process alive. */
    start(everyMs = Math.min(5_000, Math.max(250, Math.floor(this.ports.stallMs / 4)))) {
        const timer = setInterval(() => void this.check(), everyMs);
        timer.unref();
        return () => clearInterval(timer);
    }
}
//# sourceMappingURL=stall-watchdog.js.map