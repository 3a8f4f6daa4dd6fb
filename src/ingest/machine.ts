/**
 * The exactly-once rules of ingest as a machine: `step(state, event)` returns
 * the next state and the commands to carry out, and does nothing else (no
 * I/O, no clock, no timer). The driver (ingestor.ts) owns the consumer
 * group, ClickHouse, the timers and the lock; it feeds every event that
 * happens in and carries every command out. What a rule guards against is
 * said where the rule is; docs/ingestion.md lists them with the tests that
 * attack them (test/unit/ingest/machine.test.ts, one test per rule).
 *
 * The life of a buffer: batches are judged into the open buffer; a flush
 * seals it (it becomes the flight: one at a time), proves the member still
 * owns its partitions (the fence), writes its rows, and only then commits
 * its offsets. A partition's session holds where it resumes and what is
 * durable; it is made when the partition is assigned (or first seen) and
 * thrown away with every buffer when the partitions are revoked or lost, so
 * a result that comes back for a buffer or session that is gone finds
 * nothing to act on.
 */
import type { Position } from '../kafka/contract.js';

/** When a buffer is due: full (rows or bytes), or old enough; and whether the next buffer is judged while one is in flight. */
export interface MachineLimits {
  readonly maxRows: number;
  readonly maxBytes: number;
  readonly maxWaitMs: number;
  readonly overlap: boolean;
}

/** One partition this member owns, from its assignment until it is revoked or lost. */
export interface Session {
  /** Unique within a machine: a judged batch names the session it was judged in. */
  readonly id: number;
  readonly topic: string;
  readonly partition: number;
  /** The next offset to judge; undefined until read back from ClickHouse. */
  readonly next: bigint | undefined;
  /** The position known durable (read back, or written by a flush): what the fence commits again. */
  readonly durable: Position | undefined;
}

/** What a buffer holds, as far as the rules go (the rows themselves are the driver's, under the same id). */
export interface BufferState {
  readonly id: number;
  /** Per "topic:partition", the offset to commit once the rows are durable. */
  readonly positions: ReadonlyMap<string, Position>;
  /** Per "topic:partition", the offset of the buffer's first record (where a rewind goes back to). */
  readonly starts: ReadonlyMap<string, Position>;
  /** When the first position was recorded (ms). */
  readonly since: number;
  /** Rows and dead letters, and their estimated insert bytes. */
  readonly count: number;
  readonly bytes: number;
}

/** The sealed buffer being flushed, and how far its flush is. */
export interface Flight {
  readonly buffer: BufferState;
  /** fencing → writing → committing → over; failed: to be flushed again (fence first) before any later buffer. */
  readonly step: 'fencing' | 'writing' | 'committing' | 'failed' | 'over';
  /** The server refused rows of it: the streams' state went past them, and is read back once the flight is over. */
  readonly refused: boolean;
}

export interface IngestState {
  /** owning: joined, no rebalance under way; revoked: between a revocation (or a loss) and the next assignment. */
  readonly phase: 'waiting' | 'owning' | 'revoked' | 'stopping';
  readonly sessions: ReadonlyMap<string, Session>;
  readonly open: BufferState;
  readonly flight: Flight | undefined;
  /** The fence failed or a commit was refused: no flush from the timer until the next assignment. */
  readonly fenced: boolean;
  /** The next session and buffer ids. */
  readonly nextId: number;
}

export type Event =
  /** A rebalance started (or the client restarts its consumer): nothing is this member's until assigned. */
  | { readonly type: 'revoking' }
  /** The member joined a generation with these partitions. */
  | { readonly type: 'assigned'; readonly partitions: readonly { readonly topic: string; readonly partition: number }[] }
  /** The member leaves the group to join it again (its coordinator silent, a stall). */
  | { readonly type: 'lost' }
  /**
   * A batch of a partition arrived (filtered: every record of it was
   * filtered out by the client, none to judge; only a partition of the
   * assignment takes it).
   */
  | { readonly type: 'batch'; readonly topic: string; readonly partition: number; readonly filtered: boolean }
  /** A partition's durable position, read back from ClickHouse. */
  | { readonly type: 'readBack'; readonly session: number; readonly tp: string; readonly position: Position }
  /**
   * The records of a batch from `from` up to `lastOffset` were judged into
   * `count` rows and dead letters (`filtered`: none, the client filtered them
   * out).
   */
  | {
      readonly type: 'judged';
      readonly session: number;
      readonly tp: string;
      readonly from: bigint;
      readonly lastOffset: string;
      readonly count: number;
      readonly bytes: number;
      readonly filtered: boolean;
      readonly now: number;
    }
  /** Is a flush due? `force`: at a stop, flush whatever is buffered; `fromTimer`: the timer asks. */
  | { readonly type: 'flushCheck'; readonly force: boolean; readonly fromTimer: boolean; readonly now: number }
  /** The fence passed: the member owned the flight's partitions. */
  | { readonly type: 'fenceHeld'; readonly buffer: number }
  /** The fence was refused: the member lost its partitions. */
  | { readonly type: 'fenceRefused'; readonly buffer: number }
  /** The flush failed before its rows were durable (at the fence when `atFence`); nothing is committed. */
  | { readonly type: 'flushFailed'; readonly buffer: number; readonly atFence: boolean }
  /** The flight's rows are durable (written, derived), stamped `stampSeconds`; `refused`: some rows were refused and dead-lettered. */
  | { readonly type: 'written'; readonly buffer: number; readonly stampSeconds: number; readonly refused: boolean }
  /** A heartbeat failed: the member may have lost its partitions (no flush from the timer until it joins again). */
  | { readonly type: 'heartbeatFailed' }
  /** The flight's commit: acknowledged, or failed (the rows are durable all the same). */
  | { readonly type: 'committed'; readonly buffer: number }
  | { readonly type: 'commitFailed'; readonly buffer: number }
  /** The member stops: no more batches; flushes only when asked (forced). */
  | { readonly type: 'stop' };

export type Command =
  /** Read back where the partition resumes (and its durable position). */
  | { readonly type: 'readBack'; readonly session: number; readonly topic: string; readonly partition: number }
  /** Judge the batch's records from `from` on (those below it are stored already). */
  | { readonly type: 'judge'; readonly session: number; readonly tp: string; readonly from: bigint }
  /** Add the judged rows to buffer `buffer`. */
  | { readonly type: 'buffer'; readonly buffer: number }
  /** Forget these buffers' rows and every cache of the streams and of the read-back: they belong to partitions this member no longer holds. */
  | { readonly type: 'drop'; readonly buffers: readonly number[] }
  /** Seal buffer `buffer` in the streams (what they judge next belongs to the next buffer). */
  | { readonly type: 'seal'; readonly buffer: number }
  /** Prove the member owns the flight's partitions by committing again what is durable. */
  | { readonly type: 'fence'; readonly buffer: number; readonly positions: readonly Position[] }
  /** Write the flight's rows: dead letters, one insert per table, derived writes. */
  | { readonly type: 'write'; readonly buffer: number }
  /** Commit the flight's offsets. */
  | { readonly type: 'commit'; readonly buffer: number; readonly positions: readonly Position[] }
  /** The flight is over: its buffer's rows may go. */
  | { readonly type: 'landed'; readonly buffer: number; readonly committed: boolean }
  /** The caller waits for the flight to be over (or failed: its failure is the caller's) and asks again. */
  | { readonly type: 'await'; readonly buffer: number }
  /**
   * Seek these partitions back and forget every stream's state: the open
   * buffer `dropped`, judged on a state that took the refused rows of
   * `flight` as stored, is dropped and judged again.
   */
  | { readonly type: 'rewind'; readonly positions: readonly Position[]; readonly dropped: number; readonly flight: number }
  /** The streams that judged refused rows of `flight` forget their state (nothing was judged on it since). */
  | { readonly type: 'rebuild'; readonly flight: number };

export interface Step {
  readonly state: IngestState;
  readonly commands: readonly Command[];
}

export const tpOf = (topic: string, partition: number): string => `${topic}:${partition}`;

const emptyBuffer = (id: number): BufferState => ({ id, positions: new Map(), starts: new Map(), since: 0, count: 0, bytes: 0 });

export function initialState(): IngestState {
  return { phase: 'waiting', sessions: new Map(), open: emptyBuffer(1), flight: undefined, fenced: false, nextId: 2 };
}

/** Whether the member owns its partitions: joined, and no rebalance under way. */
export const owning = (s: IngestState): boolean => s.phase === 'owning';

/** Rows and dead letters waiting to be durable. */
export const buffered = (s: IngestState): number => s.open.count + (s.flight?.buffer.count ?? 0);

const running = (f: Flight | undefined): boolean => f !== undefined && (f.step === 'fencing' || f.step === 'writing' || f.step === 'committing');

/**
 * Everything the member holds goes: the sessions (each partition reads its
 * state back on its next batch), the open buffer and the flight (their rows
 * were not durable, or are and will be found so by the next owner; their
 * offsets were not committed), and every cache.
 */
function dropAll(s: IngestState, phase: IngestState['phase']): Step {
  const buffers = [s.open.id, ...(s.flight ? [s.flight.buffer.id] : [])];
  return {
    state: { ...s, phase, sessions: new Map(), open: emptyBuffer(s.nextId), flight: undefined, nextId: s.nextId + 1 },
    commands: [{ type: 'drop', buffers }],
  };
}

/** A partition's session, made on its first batch when its assignment did not list it (a client that hands a batch before its join event). */
function sessionOf(s: IngestState, topic: string, partition: number): { state: IngestState; session: Session } {
  const tp = tpOf(topic, partition);
  const found = s.sessions.get(tp);
  if (found) return { state: s, session: found };
  const session: Session = { id: s.nextId, topic, partition, next: undefined, durable: undefined };
  return { state: { ...s, sessions: new Map(s.sessions).set(tp, session), nextId: s.nextId + 1 }, session };
}

/** The session `id` of `tp` if it is still the current one, else undefined (thrown away since). */
function current(s: IngestState, tp: string, id: number): Session | undefined {
  const session = s.sessions.get(tp);
  return session?.id === id ? session : undefined;
}

const withSession = (s: IngestState, tp: string, session: Session): IngestState => ({ ...s, sessions: new Map(s.sessions).set(tp, session) });

const isFlight = (s: IngestState, buffer: number): s is IngestState & { flight: Flight } => s.flight?.buffer.id === buffer;

export function step(s: IngestState, e: Event, limits: MachineLimits): Step {
  switch (e.type) {
    case 'revoking':
      // Not owning until assigned: no timer flush (it could race the next owner).
      return { state: s.phase === 'stopping' ? s : { ...s, phase: 'revoked' }, commands: [] };
    case 'assigned': {
      // Whatever was held belongs to the previous generation.
      const dropped = dropAll(s, s.phase === 'stopping' ? 'stopping' : 'owning');
      let state: IngestState = { ...dropped.state, fenced: false };
      for (const { topic, partition } of e.partitions) state = sessionOf(state, topic, partition).state;
      return { state, commands: dropped.commands };
    }
    case 'lost':
      // Leaving to join again: the next owner of each partition, this member or another, reads it back.
      return dropAll(s, s.phase === 'stopping' ? 'stopping' : 'revoked');
    case 'batch': {
      const tp = tpOf(e.topic, e.partition);
      if (s.phase === 'stopping' || (e.filtered && !s.sessions.has(tp))) return { state: s, commands: [] };
      const { state, session } = sessionOf(s, e.topic, e.partition);
      // Rule: ClickHouse is the source of truth for progress. A partition's
      // first batch of a session reads back how far it is stored; records
      // below are skipped (stored by a member that died before its commit).
      if (session.next === undefined) return { state, commands: [{ type: 'readBack', session: session.id, topic: e.topic, partition: e.partition }] };
      return { state, commands: [{ type: 'judge', session: session.id, tp, from: session.next }] };
    }
    case 'readBack': {
      const session = current(s, e.tp, e.session);
      if (session === undefined) return { state: s, commands: [] };
      const next = BigInt(e.position.offset);
      return { state: withSession(s, e.tp, { ...session, next, durable: e.position }), commands: [{ type: 'judge', session: session.id, tp: e.tp, from: next }] };
    }
    case 'judged':
      return judged(s, e);
    case 'flushCheck':
      return flushCheck(s, e, limits);
    case 'fenceHeld':
      if (!isFlight(s, e.buffer) || s.flight.step !== 'fencing') return { state: s, commands: [] };
      return { state: { ...s, fenced: false, flight: { ...s.flight, step: 'writing' } }, commands: [{ type: 'write', buffer: e.buffer }] };
    case 'fenceRefused': {
      // Rule: fencing. Another member owns these records now: nothing of
      // this buffer is written, and the member stops flushing until it has
      // joined again.
      if (!isFlight(s, e.buffer)) return { state: s, commands: [] };
      const dropped = dropAll(s, s.phase);
      return { state: { ...dropped.state, fenced: true }, commands: dropped.commands };
    }
    case 'flushFailed':
      // Rule: a failed flush is flushed again (fence first) before any later buffer.
      if (!isFlight(s, e.buffer)) return { state: s, commands: [] };
      return { state: { ...s, fenced: s.fenced || e.atFence, flight: { ...s.flight, step: 'failed' } }, commands: [] };
    case 'written':
      return written(s, e);
    case 'committed':
    case 'commitFailed': {
      if (!isFlight(s, e.buffer) || s.flight.step !== 'committing') return { state: s, commands: [] };
      // A refused commit after durable rows costs nothing but a re-read; it
      // means this member lost its partitions: no timer flush until it joins again.
      return over(e.type === 'commitFailed' ? { ...s, fenced: true } : s, s.flight, e.type === 'committed');
    }
    case 'heartbeatFailed':
      return { state: { ...s, fenced: true }, commands: [] };
    case 'stop':
      return { state: { ...s, phase: 'stopping' }, commands: [] };
  }
}

function judged(s: IngestState, e: Extract<Event, { type: 'judged' }>): Step {
  const session = current(s, e.tp, e.session);
  // Judged in a session thrown away since (a rebalance, a rewind): its rows are the next owner's to judge.
  if (session === undefined || session.next !== e.from) return { state: s, commands: [] };
  const after = BigInt(e.lastOffset) + 1n;
  // Filtered records only move a position forward, never to one already held.
  if (e.filtered && after <= e.from) return { state: s, commands: [] };
  // Rule: a batch wholly below the progress (a redelivery) does not move it
  // back: the records past it would be judged twice. Its position is the
  // progress, durable already, so the commit still catches up with what is stored.
  const next = after > e.from ? after : e.from;
  const { open } = s;
  const position: Position = { topic: session.topic, partition: session.partition, offset: next.toString() };
  const starts = open.starts.has(e.tp) ? open.starts : new Map(open.starts).set(e.tp, { topic: session.topic, partition: session.partition, offset: e.from.toString() });
  const buffer: BufferState = {
    ...open,
    positions: new Map(open.positions).set(e.tp, position),
    starts,
    since: open.positions.size === 0 ? e.now : open.since,
    count: open.count + e.count,
    bytes: open.bytes + e.bytes,
  };
  return { state: { ...withSession(s, e.tp, { ...session, next }), open: buffer }, commands: e.filtered ? [] : [{ type: 'buffer', buffer: open.id }] };
}

/**
 * Rule: one flush in flight, and offsets committed in order. A flush in
 * flight finishes on its own; it is waited for before the next one starts,
 * at a stop, and to try it again once it failed (before any later buffer).
 */
function flushCheck(s: IngestState, e: Extract<Event, { type: 'flushCheck' }>, limits: MachineLimits): Step {
  if (e.fromTimer && (s.phase !== 'owning' || s.fenced)) return { state: s, commands: [] };
  const { open, flight } = s;
  const full = open.count >= limits.maxRows || open.bytes >= limits.maxBytes;
  const due = open.positions.size > 0 && (e.force || full || e.now - open.since >= limits.maxWaitMs);
  if (flight !== undefined) {
    if (running(flight)) return { state: s, commands: due || e.force ? [{ type: 'await', buffer: flight.buffer.id }] : [] };
    if (flight.step === 'failed') {
      return { state: { ...s, flight: { ...flight, step: 'fencing' } }, commands: [fence(s, flight.buffer), { type: 'await', buffer: flight.buffer.id }] };
    }
    // Over, with refused rows: read back now, under the driver's lock, between two batches.
    const settled = rewind(s, flight);
    const again = flushCheck(settled.state, e, limits);
    return { state: again.state, commands: [...settled.commands, ...again.commands] };
  }
  if (!due) return { state: s, commands: [] };
  // Sealed: what the streams judge from now on belongs to the next buffer.
  const sealed: IngestState = { ...s, open: emptyBuffer(s.nextId), nextId: s.nextId + 1, flight: { buffer: open, step: 'fencing', refused: false } };
  const commands: Command[] = [{ type: 'seal', buffer: open.id }, fence(s, open)];
  if (e.force || !limits.overlap) commands.push({ type: 'await', buffer: open.id });
  return { state: sealed, commands };
}

/**
 * Rule: fencing. Right before its rows are written, the member proves it
 * still owns the buffer's partitions by committing again what is durable
 * there (the coordinator refuses a commit from an expelled member or an old
 * generation).
 */
function fence(s: IngestState, buffer: BufferState): Command {
  const positions = [...buffer.positions.keys()].map((tp) => s.sessions.get(tp)?.durable).filter((d): d is Position => d !== undefined);
  return { type: 'fence', buffer: buffer.id, positions };
}

/**
 * Rule: offsets are committed only after their rows are durable, and only
 * for a buffer still held (one dropped meanwhile belongs to the next owner,
 * and so does its commit). The positions become what the fence commits
 * again, dated by the flush's stamp (a later read-back reads only parts
 * since).
 */
function written(s: IngestState, e: Extract<Event, { type: 'written' }>): Step {
  if (!isFlight(s, e.buffer) || s.flight.step !== 'writing') return { state: s, commands: [] };
  const metadata = String(e.stampSeconds);
  const commits = [...s.flight.buffer.positions.values()].map((p) => ({ ...p, metadata }));
  const flight: Flight = { ...s.flight, step: 'committing', refused: e.refused };
  let state: IngestState = { ...s, flight };
  for (const c of commits) {
    const tp = tpOf(c.topic, c.partition);
    const session = state.sessions.get(tp);
    if (session) state = withSession(state, tp, { ...session, durable: c });
  }
  if (commits.length === 0) return over(state, flight, false);
  return { state, commands: [{ type: 'commit', buffer: e.buffer, positions: commits }] };
}

/** The flight is over; one whose rows were refused stays until the next check reads the streams back. */
function over(s: IngestState, flight: Flight, committed: boolean): Step {
  const landed: Command = { type: 'landed', buffer: flight.buffer.id, committed };
  if (flight.refused) return { state: { ...s, flight: { ...flight, step: 'over' } }, commands: [landed] };
  return { state: { ...s, flight: undefined }, commands: [landed] };
}

/**
 * Rule: rows the server refused in the flight were taken as stored by the
 * streams' state, and so were they by every batch judged since: that open
 * buffer is dropped and its partitions sought back, to be judged again on
 * the state read back. With nothing judged since, the streams only forget
 * their state.
 */
function rewind(s: IngestState, flight: Flight): Step {
  const { open } = s;
  if (open.starts.size === 0) return { state: { ...s, flight: undefined }, commands: [{ type: 'rebuild', flight: flight.buffer.id }] };
  let sessions = new Map(s.sessions);
  for (const [tp, start] of open.starts) {
    const session = sessions.get(tp);
    if (session) sessions = sessions.set(tp, { ...session, next: BigInt(start.offset) });
  }
  return {
    state: { ...s, sessions, flight: undefined, open: emptyBuffer(s.nextId), nextId: s.nextId + 1 },
    commands: [{ type: 'rewind', positions: [...open.starts.values()], dropped: open.id, flight: flight.buffer.id }],
  };
}
