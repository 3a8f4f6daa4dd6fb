/**
 * craze codec event records -> craze_events rows (docs/input-contracts.md §2): decode,
 * order and dedupe on (session, incarnation, seq) (verify/craze-seq.ts), then
 * derive per event its spend (the accounting of src/account/, state restored
 * from the store) and its outcome columns.
 */
import { crazeEventOutcome } from '../account/craze-outcomes.js';
import { IncarnationSpend } from '../account/craze-spend.js';
import { decodeCrazeRecord } from '../decode/craze.js';
import { parseRfc3339, toClickHouseDateTime } from '../decode/time.js';
import { incarnationKey } from '../rows/rows.js';
import { checkCrazeSeq } from '../verify/craze-seq.js';
import { kafkaColumns, malformedColumns, recordTime } from './malformed.js';
import { NO_CACHE_OBSERVER } from './cache-observer.js';
import { PendingLayers } from './pending-layers.js';
import { batchBuilder } from './stream.js';
function emptyRow() {
    return {
        cwd: '',
        provider: '',
        craze_version: '',
        model: '',
        report: 0,
        cost_pico: '0',
        input_tokens: '0',
        output_tokens: '0',
        reasoning_tokens: '0',
        cache_read_tokens: '0',
        cache_creation_tokens: '0',
        unpriced: 0,
        turn_id: '',
        turn_outcome: '',
        turn_synthetic: 0,
        err_class: '',
        subagent_id: '',
        subagent_attempt: '',
        subagent_change: '',
        subagent_status: '',
        tool_name: '',
        tool_kind: '',
        tool_status: '',
        tool_exit_code: -1,
        ask_kind: '',
        ask_outcome: '',
        ask_by: '',
        compaction_phase: '',
        compaction_reason: '',
        tokens_before: 0,
        tokens_after: 0,
        error_class: '',
        error_code: 0,
        account_state: '',
    };
}
/** An event's outcome values (account/craze-outcomes.ts) as row columns; -1 is "no exit code". */
function outcomeColumns(o) {
    return {
        ...(o.turn && {
            turn_id: o.turn.id,
            turn_outcome: o.turn.outcome,
            turn_synthetic: o.turn.synthetic ? 1 : 0,
            err_class: o.turn.errClass,
        }),
        ...(o.subagent && {
            subagent_id: o.subagent.id,
            subagent_attempt: o.subagent.attemptId,
            subagent_change: o.subagent.change,
            subagent_status: o.subagent.status,
        }),
        ...(o.tool && { tool_name: o.tool.name, tool_kind: o.tool.kind, tool_status: o.tool.status, tool_exit_code: o.tool.exitCode ?? -1 }),
        ...(o.ask && { ask_kind: o.ask.kind, ask_outcome: o.ask.outcome, ask_by: o.ask.by }),
        ...(o.compaction && {
            compaction_phase: o.compaction.phase,
            compaction_reason: o.compaction.reason,
            tokens_before: o.compaction.tokensBefore,
            tokens_after: o.compaction.tokensAfter,
        }),
        ...(o.error && { error_class: o.error.class, error_code: o.error.code }),
    };
}
/** CrazeStream's session cache budget when none is given (AGENTLEDGER_CRAZE_CACHE_ENTRIES' default). */
export const DEFAULT_CRAZE_CACHE_SESSIONS = 10_000;
export class CrazeStream {
    topic;
    store;
    cacheSessions;
    observer;
    name = 'craze';
    /**
     * Accounting per session whose incarnation heads are loaded, in least
     * recently used order, at most `cacheSessions` of those whose rows are all
     * durable. A session is loaded whole (craze_heads.sql reads every
     * incarnation of it), so it is evicted whole; and only once no buffer
     * still holds a row of it: each row stores the state it leaves
     * (account_state), so a durable session's head rows give back exactly what
     * memory held, while a pending one's would give an older state.
     */
    sessions = new Map();
    /**
     * (session, incarnation, seq) judged but not yet durable, one set per
     * buffer: stored as far as order is concerned.
     */
    pendingSeen = new PendingLayers(() => new Set());
    /** `cacheSessions`: the session cache's budget; `observer` hears its hits, misses and evictions. */
    constructor(topic, store, cacheSessions = DEFAULT_CRAZE_CACHE_SESSIONS, observer = NO_CACHE_OBSERVER) {
        this.topic = topic;
        this.store = store;
        this.cacheSessions = cacheSessions;
        this.observer = observer;
        if (!Number.isSafeInteger(cacheSessions) || cacheSessions < 1)
            throw new RangeError(`a session cache holds at least 1 session, got ${cacheSessions}`);
    }
    seal() {
        return this.pendingSeen.seal();
    }
    /** The rows of buffer `upTo` and before (all when omitted) are durable: what they left pending is the store's now. */
    durable(upTo = Infinity) {
        this.pendingSeen.durable(upTo);
    }
    reset() {
        this.sessions.clear();
        this.pendingSeen.reset();
        this.observer.size(0);
    }
    /** Sessions in the cache now (pending ones included). */
    get cachedSessions() {
        return this.sessions.size;
    }
    /**
     * Marks the batch's sessions most recently used, then makes room for the
     * `incoming` ones it will load: evicts the least recently used sessions
     * beyond the budget among those no buffer holds a row of, and that this
     * batch does not need. Runs at a batch's start, after settle(): a buffer
     * that became durable since lets its sessions go.
     */
    evict(wanted, incoming) {
        for (const id of wanted) {
            const entry = this.sessions.get(id);
            if (entry === undefined)
                continue;
            this.sessions.delete(id);
            this.sessions.set(id, entry);
        }
        let evicted = 0;
        for (const [id, entry] of this.sessions) {
            if (this.sessions.size + incoming <= this.cacheSessions)
                break;
            if (wanted.has(id) || this.pendingSeen.holds(entry.touched))
                continue;
            this.sessions.delete(id);
            evicted++;
        }
        if (evicted > 0)
            this.observer.evicted(evicted);
    }
    isPending(seqKey) {
        return this.pendingSeen.all.some((keys) => keys.has(seqKey));
    }
    async process(records) {
        this.pendingSeen.settle();
        const decoded = records.map((r) => decodeCrazeRecord(r.value));
        // Load the heads of sessions not in the cache (not seen since the last rebalance, or evicted), room made first.
        const wanted = new Set();
        for (const d of decoded)
            if (d.ok)
                wanted.add(d.value.sessionId);
        const missing = [];
        for (const s of wanted)
            if (!this.sessions.has(s))
                missing.push(s);
        this.evict(wanted, missing.length);
        if (wanted.size > missing.length)
            this.observer.hit(wanted.size - missing.length);
        if (missing.length > 0) {
            this.observer.miss(missing.length);
            const heads = await this.store.heads(missing);
            for (const s of missing)
                this.sessions.set(s, { incarnations: new Map(), touched: -1 });
            for (const [key, head] of heads) {
                let account;
                try {
                    account = IncarnationSpend.fromJSON(JSON.parse(head.accountState));
                }
                catch {
                    account = undefined;
                }
                const [sessionId = '', incarnation = ''] = JSON.parse(key);
                this.sessions.get(sessionId)?.incarnations.set(incarnation, account ?? restoreAt(sessionId, incarnation, head.seq));
            }
        }
        this.observer.size(this.sessions.size);
        // Seqs at or below their incarnation's head as the batch starts: stored
        // already (a redelivery) or late. What this process judged since its last
        // flush is pending, and counts as stored (a redelivery before the flush is
        // still a redelivery); the rest is asked of the store in one query.
        const lookups = new Map();
        for (const d of decoded) {
            if (!d.ok)
                continue;
            const { sessionId, incarnation, seq } = d.value;
            const key = incarnationKey(sessionId, incarnation);
            const seqKey = `${key}\u0000${seq}`;
            if (seq <= (this.sessions.get(sessionId)?.incarnations.get(incarnation)?.headSeq ?? 0) && !this.isPending(seqKey))
                lookups.set(seqKey, [sessionId, incarnation, seq]);
        }
        const seen = lookups.size > 0 ? await this.store.seen([...lookups.values()]) : new Set();
        const { batch, count, refuse } = batchBuilder(malformedCrazeRow);
        decoded.forEach((d, i) => {
            const record = records[i];
            if (!d.ok) {
                refuse(record, d.reason);
                return;
            }
            const r = d.value;
            const key = incarnationKey(r.sessionId, r.incarnation);
            const seqKey = `${key}\u0000${r.seq}`;
            // Every session of the batch was loaded above, and none is evicted before the next batch.
            const session = this.sessions.get(r.sessionId);
            let account = session.incarnations.get(r.incarnation);
            if (!account) {
                account = new IncarnationSpend(r.sessionId, r.incarnation);
                session.incarnations.set(r.incarnation, account);
            }
            const { verdict, detail } = checkCrazeSeq(account.headSeq, r.seq, seen.has(seqKey) || this.isPending(seqKey));
            // A redelivery is dropped: the first copy is stored already.
            if (verdict === 'duplicate') {
                count(verdict);
                return;
            }
            let report;
            if (verdict !== 'late') {
                report = account.feed({ ...r.event, seq: r.seq });
                // An impossible growth is refused with its reason (dead letter and
                // detail), never stored wrapped; the method goes on from this report.
                if (report?.impossible)
                    batch.deadLetters.push({ record, reason: report.impossible });
            }
            this.pendingSeen.current.add(seqKey);
            // Until this buffer is durable, the store's head rows lag behind this account: not evictable.
            session.touched = this.pendingSeen.number;
            count(verdict);
            const e = r.event;
            const at = e.at ? parseRfc3339(e.at) : undefined;
            batch.rows.push({
                ...emptyRow(),
                session_id: r.sessionId,
                incarnation: r.incarnation,
                seq: r.seq,
                event_type: e.type,
                at: at ? toClickHouseDateTime(at) : recordTime(record),
                at_text: e.at ?? '',
                agent: e.agent,
                replayed: e.replayed ? 1 : 0,
                event: r.eventText,
                verdict,
                detail: report?.impossible ? (detail === '' ? report.impossible : `${detail}; ${report.impossible}`) : detail,
                cwd: r.journal?.cwd ?? '',
                provider: r.journal?.provider ?? '',
                craze_version: r.journal?.crazeVersion ?? '',
                model: account.currentModel,
                ...(report && report.impossible === undefined
                    ? {
                        report: 1,
                        cost_pico: report.spend.costPicoUsd.toString(),
                        input_tokens: report.spend.input.toString(),
                        output_tokens: report.spend.output.toString(),
                        reasoning_tokens: report.spend.reasoning.toString(),
                        cache_read_tokens: report.spend.cacheRead.toString(),
                        cache_creation_tokens: report.spend.cacheCreation.toString(),
                        unpriced: report.spend.unpriced ? 1 : 0,
                        model: report.model,
                    }
                    : {}),
                ...outcomeColumns(crazeEventOutcome(e)),
                // Where the spend method stands, on every row, so any row restores it.
                account_state: verdict === 'late' ? '' : JSON.stringify(account.toJSON()),
                ...kafkaColumns(record),
            });
        });
        return batch;
    }
    quarantine(record, reason) {
        return { row: malformedCrazeRow(record, reason), deadLetter: { record, reason } };
    }
}
/** The craze_events row of a record that is not a craze event (or that the store refused). */
function malformedCrazeRow(record, reason) {
    const { key, evidence, time, ...columns } = malformedColumns(record, reason);
    return {
        ...emptyRow(),
        ...columns,
        session_id: key,
        incarnation: '',
        seq: 0,
        event_type: '',
        at: time,
        at_text: '',
        agent: '',
        replayed: 0,
        event: evidence,
    };
}
/** An account that only knows its head seq (its stored state was unreadable). */
function restoreAt(sessionId, incarnation, seq) {
    const state = new IncarnationSpend(sessionId, incarnation).toJSON();
    return IncarnationSpend.fromJSON({ ...state, lastSeq: seq });
}
//# sourceMappingURL=craze.js.map