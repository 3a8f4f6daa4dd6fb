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

export interface JournalMeta {
  readonly incarnation: string;
  readonly cwd: string;
  readonly provider: string;
  readonly crazeVersion: string;
}

export interface JournalEvent {
  readonly seq: number;
  /** The codec event object's text, verbatim. */
  readonly eventText: string;
}

export interface JournalGap {
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly droppedEvents: number;
}

/**
 * Reads one journal file's lines in order. Events are held back until the
 * session id is known (its diag line may follow the first events).
 */
export class JournalParser {
  meta: JournalMeta | undefined;
  sessionId: string | undefined;
  readonly gaps: JournalGap[] = [];
  omitted = 0;
  /** Lines that are not journal lines (other than a torn last line, which the caller holds back). */
  unreadable = 0;
  private held: JournalEvent[] = [];

  constructor(
    private readonly skipThroughSeq = 0,
    /** Told why each unreadable line was skipped, so the caller can report it. */
    private readonly onUnreadable: (reason: string) => void = () => undefined,
  ) {}

  /** Feeds one complete line; returns the events that can be sent now. */
  line(text: string): JournalEvent[] {
    if (text.trim() === '') return [];
    let parsed: { type?: unknown; seq?: unknown; omitted?: unknown; kind?: unknown; fields?: { crazeSessionId?: unknown } } & Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      return this.skip('not JSON');
    }
    // `null`, a number or an array: JSON, but no journal line.
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return this.skip('not a JSON object');
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
        if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return this.skip('event line without a whole-number seq >= 1');
        const eventText = objectMembers(text).get('event');
        if (eventText === undefined || !eventText.startsWith('{')) return this.skip(`event line (seq ${seq}) without an event object`);
        // After the unreadable checks, so a re-read reports the same lines.
        if (seq <= this.skipThroughSeq) return [];
        this.held.push({ seq, eventText });
        return this.release();
      }
      default:
        return [];
    }
  }

  private skip(reason: string): JournalEvent[] {
    this.unreadable++;
    this.onUnreadable(reason);
    return [];
  }

  /** Events still held because the file has not named its session yet. */
  get waiting(): number {
    return this.held.length;
  }

  private release(): JournalEvent[] {
    if (!this.ready) return [];
    const out = this.held;
    this.held = [];
    return out;
  }

  get ready(): boolean {
    return this.sessionId !== undefined && this.meta !== undefined && this.meta.incarnation !== '';
  }
}

/** The Kafka record value for one event: `{sessionId, incarnation, seq, event, journal}` with the event verbatim. */
export function crazeRecordValue(sessionId: string, meta: JournalMeta, e: JournalEvent, file: string): string {
  const journal = JSON.stringify({ cwd: meta.cwd, provider: meta.provider, crazeVersion: meta.crazeVersion, file });
  return `{"sessionId":${JSON.stringify(sessionId)},"incarnation":${JSON.stringify(meta.incarnation)},"seq":${e.seq},"event":${e.eventText},"journal":${journal}}`;
}

/**
 * Splits a chunk of a file into complete lines and the torn rest (the bytes
 * after the last newline), which waits for more data, or at end of a
 * finished file is a torn last line and is dropped.
 */
export function completeLines(text: string): { lines: string[]; rest: string } {
  const end = text.lastIndexOf('\n');
  if (end < 0) return { lines: [], rest: text };
  return { lines: text.slice(0, end).split('\n'), rest: text.slice(end + 1) };
}
