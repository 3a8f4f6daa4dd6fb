/**
 * craze spend (docs/input-contracts.md §2): what each usage report of one (session,
 * incarnation) spent, and the small state that carries the method across restarts.
 *
 * Pure: no I/O, no clock. `CrazeSpendEvent` is the minimal shape read here,
 * which the decoder's events fit as they are: the pipeline only adds their seq.
 *
 * A `meta` event whose `state.usage` is present is a usage report; each
 * restates the whole section (`turn` after every step, `session` cumulative
 * over the stored transcript path, earlier incarnations included), so nothing
 * is summed naively. Per (session, incarnation), over the non-replayed
 * reports in seq order, each field of a report's spend is
 * `max(sessionGrowth, turnGrowth, 0)`:
 *  - sessionGrowth = this `session` − the previous report's; for the first,
 *    − the replayed report of a load, else − zero;
 *  - turnGrowth = this `turn` − the previous report's `turn` when no turn
 *    began between them, else this `turn` (a turn begins with a `turn` event
 *    of phase `started` or a `foreign_turn` with `running:true`).
 * The session figure drops when a rewound branch leaves the transcript path,
 * and the turn figure is what still counts the money spent on it; the turn
 * figure misses what a lost turn boundary (a journal gap) or a background
 * sub-agent's spend hides, and the session figure is what counts that.
 * All arithmetic is bigint: `costPicoUsd` is int64 picodollars and cumulative
 * session values pass 2^53 (about $9,007) in long sessions.
 *
 * Events with `agent` set belong to a sub-agent's transcript: its usage is
 * already inside the parent's `session`, so an agent-scoped report is never
 * spend, its turn starts are no boundary of the session's turn figure, and
 * its `state.model` is not the session's model.
 */
import { SPEND_FIELDS } from '../decode/craze-state.js';
import { INT64_MAX } from '../money/int64-text.js';
const ZERO_SPEND = {
    input: 0n,
    output: 0n,
    reasoning: 0n,
    cacheRead: 0n,
    cacheCreation: 0n,
    costPicoUsd: 0n,
    unpriced: false,
};
function diff(a, b) {
    return {
        input: a.input - b.input,
        output: a.output - b.output,
        reasoning: a.reasoning - b.reasoning,
        cacheRead: a.cacheRead - b.cacheRead,
        cacheCreation: a.cacheCreation - b.cacheCreation,
        costPicoUsd: a.costPicoUsd - b.costPicoUsd,
    };
}
/** max(a, b, 0). */
function max3(a, b) {
    const m = a > b ? a : b;
    return m > 0n ? m : 0n;
}
function spendToJson(s) {
    return { ...Object.fromEntries(SPEND_FIELDS.map((f) => [f, s[f].toString()])), unpriced: s.unpriced };
}
function spendFromJson(j) {
    return { ...Object.fromEntries(SPEND_FIELDS.map((f) => [f, BigInt(j[f])])), unpriced: j.unpriced };
}
/**
 * The spend method over one (session, incarnation). Feed its events in seq
 * order; a seq at or below the last one fed is a redelivery and is ignored,
 * so replaying a batch after a crash cannot count anything twice. The state
 * round-trips through `toJSON`/`fromJSON`.
 */
export class IncarnationSpend {
    sessionId;
    incarnation;
    lastSeq = 0;
    model = '';
    /** The previous report's `session` (or the load's replayed report's, before the first live one). */
    prevSession;
    prevTurn;
    turnBegan = false;
    sawLiveReport = false;
    constructor(sessionId, incarnation) {
        this.sessionId = sessionId;
        this.incarnation = incarnation;
    }
    /** The highest seq fed so far; 0 before any. */
    get headSeq() {
        return this.lastSeq;
    }
    /** The session's model as of the last event fed ('' when none was seen). */
    get currentModel() {
        return this.model;
    }
    /**
     * Folds one event. Returns the report's spend when the event is a
     * non-replayed, session-level usage report, else undefined.
     */
    feed(ev) {
        if (ev.seq <= this.lastSeq)
            return undefined;
        this.lastSeq = ev.seq;
        const agent = ev.agent ?? '';
        const replayed = ev.replayed === true;
        if (agent === '' && ev.type === 'meta' && ev.state !== undefined) {
            // The model in force is state, not a count: a load's replayed install
            // delta is exactly where a resumed incarnation learns it. It applies
            // before the same delta's usage section.
            if (ev.state.model !== undefined)
                this.model = ev.state.model;
        }
        if (!replayed && agent === '') {
            if (ev.type === 'turn' && ev.turn?.phase === 'started')
                this.turnBegan = true;
            if (ev.type === 'foreign_turn' && ev.foreignTurn?.running === true)
                this.turnBegan = true;
        }
        const usage = ev.type === 'meta' ? ev.state?.usage : undefined;
        // A sub-agent's usage is already inside the parent's `session`.
        if (usage === undefined || agent !== '')
            return undefined;
        if (replayed) {
            // A load's report: the baseline of the first live report. One after a
            // live report (a second load into the same incarnation) is history
            // already measured, and DESIGN §2 measures only against the previous
            // live report from then on.
            if (!this.sawLiveReport) {
                this.prevSession = usage.session;
                this.prevTurn = usage.turn;
                this.turnBegan = false;
            }
            return undefined;
        }
        const sessionGrowth = diff(usage.session, this.prevSession ?? ZERO_SPEND);
        const turnGrowth = this.prevTurn !== undefined && !this.turnBegan ? diff(usage.turn, this.prevTurn) : diff(usage.turn, ZERO_SPEND);
        // A floor when the turn's figure holds unpriced usage, or when the
        // session's became unpriced with this report (session.unpriced, once
        // set, stays set on every later report of the path).
        const unpriced = usage.turn.unpriced || (usage.session.unpriced && !(this.prevSession?.unpriced ?? false));
        const spend = {
            input: max3(sessionGrowth.input, turnGrowth.input),
            output: max3(sessionGrowth.output, turnGrowth.output),
            reasoning: max3(sessionGrowth.reasoning, turnGrowth.reasoning),
            cacheRead: max3(sessionGrowth.cacheRead, turnGrowth.cacheRead),
            cacheCreation: max3(sessionGrowth.cacheCreation, turnGrowth.cacheCreation),
            costPicoUsd: max3(sessionGrowth.costPicoUsd, turnGrowth.costPicoUsd),
            unpriced,
        };
        const tooLarge = SPEND_FIELDS.filter((f) => spend[f] > INT64_MAX);
        const report = {
            seq: ev.seq,
            at: ev.at ?? null,
            model: this.model,
            spend: tooLarge.length === 0 ? spend : { ...ZERO_SPEND, unpriced },
            sessionGrowth,
            turnGrowth,
            turnBegan: this.turnBegan,
            ...(tooLarge.length === 0
                ? {}
                : { impossible: `usage report at seq ${ev.seq}: growth of ${tooLarge.map((f) => `${f} ${spend[f]}`).join(', ')} exceeds Int64; counted as 0` }),
        };
        this.prevSession = usage.session;
        this.prevTurn = usage.turn;
        this.turnBegan = false;
        this.sawLiveReport = true;
        return report;
    }
    toJSON() {
        return {
            v: 1,
            sessionId: this.sessionId,
            incarnation: this.incarnation,
            lastSeq: this.lastSeq,
            model: this.model,
            prevSession: this.prevSession === undefined ? null : spendToJson(this.prevSession),
            prevTurn: this.prevTurn === undefined ? null : spendToJson(this.prevTurn),
            turnBegan: this.turnBegan,
            sawLiveReport: this.sawLiveReport,
        };
    }
    /** Restores a state of `toJSON`, or one of a row written by the older, wider format. */
    static fromJSON(state) {
        if (state.v !== 1)
            throw new Error(`craze account state: unknown version ${String(state.v)}`);
        const s = new IncarnationSpend(state.sessionId, state.incarnation);
        s.lastSeq = state.lastSeq;
        s.model = state.model;
        s.prevSession = state.prevSession === null ? undefined : spendFromJson(state.prevSession);
        s.prevTurn = state.prevTurn === null ? undefined : spendFromJson(state.prevTurn);
        s.turnBegan = state.turnBegan;
        s.sawLiveReport = state.sawLiveReport;
        return s;
    }
}
//# sourceMappingURL=craze-spend.js.map