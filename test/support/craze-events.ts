/**
 * craze events for the account tests: the sample journals (test/fixtures/craze)
 * read independently of src/, and a builder of small hand-written event scripts.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Spend } from '../../src/account/craze-spend.js';
import type { CrazeAccountEvent } from './craze-reference.js';
import type { SessionTotals } from '../../src/read/session-reads.js';

export const CRAZE_FIXTURES = fileURLToPath(new URL('../../../test/fixtures/craze/', import.meta.url));

export const SESSION_A = '0195604e-8a31-7c2e-9b1d-3f5e7a9c0b12';
export const SESSION_B = '0195658f-1d04-7a6b-8c3e-5d7f9b1a2c34';
export const SESSION_C = '01956fd5-3e77-7d10-a2b4-6c8e0f2a4b56';

// ---------------------------------------------------------------------------
// A tiny journal reader, enough for the corpus: event lines only, omitted
// bodies skipped, a torn last line ends the file. Spend integers are read from
// their digits (JSON.parse would round costPicoUsd past 2^53).

export interface Journal {
  readonly file: string;
  readonly sessionId: string;
  readonly incarnation: string;
  readonly events: CrazeAccountEvent[];
  readonly torn: boolean;
  readonly omitted: number;
  readonly gaps: number;
}

const SPEND_INT = /"(input|output|reasoning|cacheRead|cacheCreation|costPicoUsd)":(-?\d+)/g;

type Json = Record<string, unknown>;

function spendOf(v: unknown): Spend {
  const o = v as Record<string, string | boolean>;
  const big = (k: string): bigint => BigInt(o[k] as string);
  return {
    input: big('input'),
    output: big('output'),
    reasoning: big('reasoning'),
    cacheRead: big('cacheRead'),
    cacheCreation: big('cacheCreation'),
    costPicoUsd: big('costPicoUsd'),
    unpriced: o.unpriced === true,
  };
}

function toEvent(line: Json): CrazeAccountEvent {
  const body = line.event as Json;
  const state = body.state as Json | undefined;
  const usage = state?.usage as Json | undefined;
  return {
    ...(body as Omit<CrazeAccountEvent, 'seq'>),
    seq: line.seq as number,
    at: (body.at as string | undefined) ?? (line.at as string | undefined),
    state:
      state === undefined
        ? undefined
        : {
            model: state.model as string | undefined,
            usage: usage === undefined ? undefined : { turn: spendOf(usage.turn), session: spendOf(usage.session) },
          },
  };
}

function readJournal(file: string): Journal {
  const lines = readFileSync(file, 'utf8').split('\n');
  let sessionId = '';
  let incarnation = '';
  let torn = false;
  let omitted = 0;
  let gaps = 0;
  const events: CrazeAccountEvent[] = [];
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] ?? '';
    if (text === '') continue;
    let line: Json;
    try {
      line = JSON.parse(text.replace(SPEND_INT, '"$1":"$2"')) as Json;
    } catch (err) {
      // Only the last line may be torn (a live file flushed mid-line).
      assert.equal(i, lines.length - 1, `${file}:${i + 1}: unreadable line before the end: ${String(err)}`);
      torn = true;
      break;
    }
    switch (line.type) {
      case 'header':
        incarnation = line.incarnation as string;
        break;
      case 'diag':
        if (line.kind === 'craze_session') sessionId = (line.fields as Json).crazeSessionId as string;
        break;
      case 'gap':
        gaps++;
        break;
      case 'event':
        if (line.event === undefined) omitted++;
        else events.push(toEvent(line));
        break;
      default:
        break;
    }
  }
  assert.notEqual(sessionId, '', `${file}: no craze_session diag`);
  assert.notEqual(incarnation, '', `${file}: no header`);
  return { file, sessionId, incarnation, events, torn, omitted, gaps };
}

/** Every journal of the corpus, in file order. */
export function corpus(): Journal[] {
  const root = `${CRAZE_FIXTURES}journal/`;
  const out: Journal[] = [];
  for (const slug of readdirSync(root).sort()) {
    for (const name of readdirSync(`${root}${slug}`).sort()) {
      assert.match(name, /^\d{8}T\d{6}Z_[0-9a-f-]{36}\.jsonl$/, name);
      const j = readJournal(`${root}${slug}/${name}`);
      assert.ok(name.endsWith(`_${j.incarnation}.jsonl`), `${name}: header names incarnation ${j.incarnation}`);
      out.push(j);
    }
  }
  return out;
}

/** The ground truth per session (test/fixtures/craze/expected.json, worked out in GROUND_TRUTH.md). */
export type ExpectedSession = SessionTotals<string, number>;

export function expectedSessions(): ExpectedSession[] {
  return (JSON.parse(readFileSync(`${CRAZE_FIXTURES}expected.json`, 'utf8')) as { sessions: ExpectedSession[] }).sessions;
}

// ---------------------------------------------------------------------------
// Hand-written scripts.

/** A Spend of a cost (and input tokens), everything else zero. */
export function sp(cost: bigint, input = 0n, unpriced = false): Spend {
  return { input, output: 0n, reasoning: 0n, cacheRead: 0n, cacheCreation: 0n, costPicoUsd: cost, unpriced };
}

/** A tiny event builder; seq assigned in order. */
export function script(): {
  events: CrazeAccountEvent[];
  turn: (id: string) => void;
  ended: (id: string, extra?: Record<string, unknown>) => void;
  foreign: (running: boolean) => void;
  report: (turn: Spend, session: Spend, extra?: Partial<CrazeAccountEvent>) => void;
  push: (e: Omit<CrazeAccountEvent, 'seq'>) => void;
} {
  const events: CrazeAccountEvent[] = [];
  const push = (e: Omit<CrazeAccountEvent, 'seq'>) => {
    events.push({ ...e, seq: events.length + 1 });
  };
  return {
    events,
    push,
    turn: (id) => push({ type: 'turn', turn: { id, phase: 'started' } }),
    ended: (id, extra = {}) => push({ type: 'turn', turn: { id, phase: 'ended', stopReason: 'end_turn', ...extra } }),
    foreign: (running) => push({ type: 'foreign_turn', foreignTurn: { id: 'ft', reason: 'subagent_wake', running } }),
    report: (turn, session, extra = {}) => push({ type: 'meta', state: { usage: { turn, session } }, ...extra }),
  };
}
