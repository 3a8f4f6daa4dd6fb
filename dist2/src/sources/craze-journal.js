/**
 * craze journal files -> craze records (docs/input-contracts.md §2). craze writes one JSONL
 * file per incarnation under $CRAZE_HOME/journal/<cwd-slug>/
 * <UTC yyyymmddThhmmssZ>_<incarnation>.jsonl: a header line (incarnation, cwd,
 * provider, crazeVersion), event lines (seq, at, eventType, and the codec
 * object as `event`, or `omitted` without one), gap lines, prompt/diag notes.
 * The session id is in the one diag line of kind craze_session.
 *
 * Pure: the caller reads the bytes and sends the records.
 */
import { objectMembers } from '../decode/json-spans.js';
/**
 * Reads one journal file's lines in order. Events are held back until the
 * session id is known (its diag line may follow the first events).
 */
export class JournalParser {
    skipThroughSeq;
    onUnreadable;
    meta;
    sessionId;
    gaps = [];
    omitted = 0;
    /** Lines that are not journal lines (other than a torn last line, which the caller holds back). */
    unreadable = 0;
    held = [];
    constructor(skipThroughSeq = 0, 
    /** Told why each unreadable line was skipped, so the caller can report it. */
    onUnreadable = () => undefined) {
        this.skipThroughSeq = skipThroughSeq;
        this.onUnreadable = onUnreadable;
    }
    /** Feeds one complete line; returns the events that can be sent now. */
    line(text) {
        if (text.trim() === '')
            return [];
        let parsed;
        try {
            parsed = JSON.parse(text);
        }
        catch {
            return this.skip('not JSON');
        }
        // `null`, a number or an array: JSON, but no journal line.
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
            return this.skip('not a JSON object');
        switch (parsed.type) {
            case 'header':
                this.meta = {
                    incarnation: typeof parsed['incarnation'] === 'string' ? parsed['incarnation'] : '',
                    cwd: typeof parsed['cwd'] === 'string' ? parsed['cwd'] : '',
                    provider: typeof parsed['provider'] === 'string' ? parsed['provider'] : '',
                    crazeVersion: typeof parsed['crazeVersion'] === 'string' ? parsed['crazeVersion'] : '',
                };
                return this.release();
            case 'diag':
                if (parsed.kind === 'craze_session' && typeof parsed.fields?.crazeSessionId === 'string' && parsed.fields.crazeSessionId !== '') {
                    this.sessionId = parsed.fields.crazeSessionId;
                    return this.release();
                }
                return [];
            case 'gap':
                this.gaps.push({ fromSeq: Number(parsed['fromSeq'] ?? 0), toSeq: Number(parsed['toSeq'] ?? 0), droppedEvents: Number(parsed['droppedEvents'] ?? 0) });
                return [];
            case 'event': {
                if (parsed.omitted !== undefined) {
                    this.omitted++;
                    return [];
                }
                const seq = parsed.seq;
                if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1)
                    return this.skip('event line without a whole-number seq >= 1');
                const eventText = objectMembers(text).get('event');
                if (eventText === undefined || !eventText.startsWith('{'))
                    return this.skip(`event line (seq ${seq}) without an event object`);
                // After the unreadable checks, so a re-read reports the same lines.
                if (seq <= this.skipThroughSeq)
                    return [];
                this.held.push({ seq, eventText });
                return this.release();
            }
            default:
                return [];
        }
    }
    skip(reason) {
        this.unreadable++;
        this.onUnreadable(reason);
        return [];
    }
    /** Events still held because the file has not named its session yet. */
    get waiting() {
        return this.held.length;
    }
    release() {
        if (!this.ready)
            return [];
        const out = this.held;
        this.held = [];
        return out;
    }
    get ready() {
        return this.sessionId !== undefined && this.meta !== undefined && this.meta.incarnation !== '';
    }
}
/** The Kafka record value for one event: `{sessionId, incarnation, seq, event, journal}` with the event verbatim. */
export function crazeRecordValue(sessionId, meta, e, file) {
    const journal = JSON.stringify({ cwd: meta.cwd, provider: meta.provider, crazeVersion: meta.crazeVersion, file });
    return `{"sessionId":${JSON.stringify(sessionId)},"incarnation":${JSON.stringify(meta.incarnation)},"seq":${e.seq},"event":${e.eventText},"journal":${journal}}`;
}
/**
 * Splits a chunk of a file into complete lines and the torn rest (the bytes
 * after the last newline), which waits for more data, or at end of a
 * finished file is a torn last line and is dropped.
 */
export function completeLines(text) {
    const end = text.lastIndexOf('\n');
    if (end < 0)
        return { lines: [], rest: text };
    return { lines: text.slice(0, end).split('\n'), rest: text.slice(end + 1) };
}
//# sourceMappingURL=craze-journal.js.map