/**
 * The alert sweep's cursor (sweep.ts): where a sweep starts from (the
 * alert_watermark a worker also reads at start) and where it is, kept in
 * Redis and moved only by compare-and-set.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { queryRows } from './queries.js';
import type { AlertSweepDeps } from './sweep-deps.js';

const rows = queryRows;

/** Where the sweep in progress is (SweepCursor as JSON): absent between sweeps. */
const cursorKey = (prefix: string): string => `${prefix}:alerts:sweep-cursor`;

/** Reads what a sweep starts from: what a worker checks at start (the tables exist, the user may read them). */
export async function alertWatermark(ch: ClickHouseClient): Promise<void> {
  await rows(ch, 'alert_watermark');
}

/**
 * A sweep in progress, kept in Redis after each chunk, so a sweep stopped or
 * killed half-way is resumed by the next job, not begun again: its
 * watermarks (what it will record as swept when it ends) and the last loop
 * (in loop_id order) whose chunk is done.
 */
export interface SweepCursor {
  /** When it began (ms). */
  readonly began: number;
  /** The newest ingest stamp stored when it began: recorded as swept through at its end. */
  readonly storedThrough: number;
  readonly sinceAge: number;
  readonly sinceNew: number;
  /** Every loop up to this one (loop_id order) is evaluated ('' : none yet). */
  readonly after: string;
}

/** Moves the cursor only if it still holds what this sweep read (two sweeps handed one job never skip a chunk). */
const SET_IF = `
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
return 1`;

export async function moveCursor(deps: AlertSweepDeps, from: string, to: string): Promise<boolean> {
  return (await deps.redis.eval(SET_IF, 1, cursorKey(deps.prefix), from, to)) === 1;
}

/** The cursor of the sweep in progress, or a new one begun at `now` (written only when the first chunk is done). */
export async function currentCursor(deps: AlertSweepDeps, now: number): Promise<{ cursor: SweepCursor; text: string }> {
  const text = (await deps.redis.get(cursorKey(deps.prefix))) ?? '';
  if (text !== '') return { cursor: JSON.parse(text) as SweepCursor, text };
  const [mark] = await rows<{ swept_through: string | number; stored_through: string | number }>(deps.ch, 'alert_watermark');
  const sweptThrough = Number(mark?.swept_through ?? 0);
  return {
    cursor: {
      began: now,
      storedThrough: Number(mark?.stored_through ?? 0),
      sinceAge: Math.max(0, Math.floor((now - deps.rules.maxAgeMs) / 1000)),
      sinceNew: sweptThrough === 0 ? 0 : Math.max(0, sweptThrough - Math.ceil(deps.lateMs / 1000)),
      after: '',
    },
    text: '',
  };
}
