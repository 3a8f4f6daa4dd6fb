import { failureMessage, within } from '../observability/errors.js';
/** Longest an add may take before its loops are left to the sweep. */
const ADD_TIMEOUT_MS = 10_000;
/** Envelope kinds a rule without a clock reads (stalls and waits are the sweep's). */
const LOOP_NEWS = new Set(['LoopFinished', 'SubAgentCompleted', 'ConvergenceWarning', 'HumanRequested', 'HumanResponded']);
/** Verdicts that break a chain the moment they are stored (a gap waits for its grace: the sweep's). */
const BROKEN = new Set(['mismatch', 'fork', 'regression', 'time_regression']);
/**
 * The news in one flush's rows: envelope rows (loop_id, kind_class, verdict)
 * or craze rows (subagent_change). Other rows carry none.
 */
export function newsOf(rows) {
    const loops = new Set();
    let rates = false;
    for (const row of rows) {
        // A record that could not be decoded says nothing a rule reads.
        if (row.verdict === 'malformed')
            continue;
        if (typeof row.loop_id === 'string') {
            if (LOOP_NEWS.has(row.kind_class) || BROKEN.has(row.verdict))
                loops.add(row.loop_id);
            if (row.kind_class === 'SubAgentCompleted')
                rates = true;
        }
        else if (row.subagent_change === 'finished') {
            rates = true;
        }
    }
    return { loops, rates };
}
export class AlertTrigger {
    send;
    log;
    counted;
    minGapMs;
    loops = new Set();
    rates = false;
    timer;
    inFlight;
    lastAdd = 0;
    away = false;
    /** Adds done, and adds that failed (their loops left to the sweep). */
    added = 0;
    failed = 0;
    /** `send` adds loops to the news and asks for an evaluation (news.ts addNews). */
    constructor(send, log, counted, minGapMs = 5000) {
        this.send = send;
        this.log = log;
        this.counted = counted;
        this.minGapMs = minGapMs;
    }
    /** A flush's rows are durable: note their news and add a job when due. */
    durable(rows) {
        const news = newsOf(rows);
        for (const loop of news.loops)
            this.loops.add(loop);
        this.rates ||= news.rates;
        this.schedule();
    }
    /** Adds what is noted now (no gap), and waits for the add in flight: before ingest exits. */
    async close() {
        if (this.timer !== undefined)
            clearTimeout(this.timer);
        this.timer = undefined;
        await this.inFlight;
        if (this.loops.size > 0 || this.rates)
            await this.add();
    }
    schedule() {
        if (this.timer !== undefined || this.inFlight !== undefined || (this.loops.size === 0 && !this.rates))
            return;
        const wait = Math.max(0, this.lastAdd + this.minGapMs - Date.now());
        this.timer = setTimeout(() => {
            this.timer = undefined;
            this.inFlight = this.add().finally(() => {
                this.inFlight = undefined;
                this.schedule();
            });
        }, wait);
        this.timer.unref();
    }
    async add() {
        const loops = [...this.loops];
        const rates = this.rates;
        this.loops = new Set();
        this.rates = false;
        this.lastAdd = Date.now();
        try {
            // BullMQ waits for a Redis that was never reached: bounded here.
            await within(this.send(loops, rates), ADD_TIMEOUT_MS, 'alert evaluation', 'Redis');
            this.added++;
            this.counted?.('queued', 1);
            if (this.away)
                this.log.info('alert evaluations are queued again');
            this.away = false;
        }
        catch (err) {
            this.failed++;
            this.counted?.('failed', 1);
            if (!this.away) {
                this.log.warn('alert evaluation not queued (Redis unavailable?); the next alert sweep looks at these loops', { error: failureMessage(err) });
            }
            this.away = true;
        }
    }
}
//# sourceMappingURL=trigger.js.map