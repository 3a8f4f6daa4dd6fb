/**
 * craze spend and outcomes (DESIGN.md §2) against a hand-computed corpus of
 * craze journals (test/fixtures/craze: GROUND_TRUTH.md shows the arithmetic
 * per report), plus focused cases for each rule of the spend method.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  accountIncarnation,
  classifyTurnEnding,
  IncarnationSpend,
  sessionTotals,
  type CrazeAccountEvent,
  type ReportSpend,
  type SessionTotals,
  type Spend,
} from '../../src/account/craze.js';

const DIR = fileURLToPath(new URL('../../../test/fixtures/craze/', import.meta.url));

// ---------------------------------------------------------------------------
// A tiny journal reader, enough for the corpus: event lines only, omitted
// bodies skipped, a torn last line ends the file. Spend integers are read from
// their digits (JSON.parse would round costPicoUsd past 2^53).

interface Journal {
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

function corpus(): Journal[] {
  const root = `${DIR}journal/`;
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

interface Accounted {
  readonly journal: Journal;
  readonly account: IncarnationSpend;
  readonly reports: readonly ReportSpend[];
}

function accountCorpus(): Map<string, Accounted[]> {
  const bySession = new Map<string, Accounted[]>();
  for (const journal of corpus()) {
    const { account, reports } = accountIncarnation(journal.sessionId, journal.incarnation, journal.events);
    const list = bySession.get(journal.sessionId) ?? [];
    list.push({ journal, account, reports });
    bySession.set(journal.sessionId, list);
  }
  return bySession;
}

interface ExpectedSession {
  sessionId: string;
  incarnations: number;
  costPicoUsd: string;
  inputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
  unpricedReports: number;
  turnsDone: number;
  turnsFailed: number;
  turnsCancelled: number;
  subagentsCompleted: number;
  subagentsFailed: number;
  subagentsCancelled: number;
  subagentsAbandoned: number;
}

const expected = (JSON.parse(readFileSync(`${DIR}expected.json`, 'utf8')) as { sessions: ExpectedSession[] }).sessions;

function asExpected(t: SessionTotals): ExpectedSession {
  return {
    sessionId: t.sessionId,
    incarnations: t.incarnations,
    costPicoUsd: t.costPicoUsd.toString(),
    inputTokens: Number(t.inputTokens),
    outputTokens: Number(t.outputTokens),
    reasoningTokens: Number(t.reasoningTokens),
    cacheReadTokens: Number(t.cacheReadTokens),
    cacheCreationTokens: Number(t.cacheCreationTokens),
    unpricedReports: t.unpricedReports,
    turnsDone: t.turnsDone,
    turnsFailed: t.turnsFailed,
    turnsCancelled: t.turnsCancelled,
    subagentsCompleted: t.subagentsCompleted,
    subagentsFailed: t.subagentsFailed,
    subagentsCancelled: t.subagentsCancelled,
    subagentsAbandoned: t.subagentsAbandoned,
  };
}

const SESSION_A = '0195604e-8a31-7c2e-9b1d-3f5e7a9c0b12';
const SESSION_B = '0195658f-1d04-7a6b-8c3e-5d7f9b1a2c34';
const SESSION_C = '01956fd5-3e77-7d10-a2b4-6c8e0f2a4b56';

test('the corpus reads as craze writes it: torn line, omitted body, gap, replayed loads', () => {
  const journals = corpus();
  assert.equal(journals.length, 7);
  assert.deepEqual(new Set(journals.map((j) => j.sessionId)), new Set([SESSION_A, SESSION_B, SESSION_C]));
  assert.equal(journals.filter((j) => j.torn).length, 1);
  assert.equal(journals.reduce((n, j) => n + j.omitted, 0), 1);
  assert.equal(journals.reduce((n, j) => n + j.gaps, 0), 1);
  // Every resumed incarnation re-contains history, a usage report included.
  const loads = journals.filter((j) => j.events.some((e) => e.replayed === true && e.state?.usage !== undefined));
  assert.equal(loads.length, 4);
});

test('corpus totals equal the hand-computed ground truth, to the picodollar', () => {
  const bySession = accountCorpus();
  assert.equal(bySession.size, expected.length);
  for (const want of expected) {
    const incs = bySession.get(want.sessionId);
    assert.ok(incs, want.sessionId);
    const got = sessionTotals(
      want.sessionId,
      incs.map((a) => a.account),
    );
    assert.deepEqual(asExpected(got), want, want.sessionId);
  }
});

test('corpus: per-report spend matches GROUND_TRUTH.md where the two growths disagree', () => {
  const bySession = accountCorpus();
  const b1 = (bySession.get(SESSION_B) ?? []).find((a) => a.journal.file.includes('T101230Z'));
  assert.ok(b1);
  const at = (seq: number) => b1.reports.find((r) => r.seq === seq);
  // R3, the background sub-agent's wake: session growth wins.
  assert.equal(at(18)?.spend.costPicoUsd, 15_750_000_000n);
  assert.equal(at(18)?.turnGrowth.costPicoUsd, 5_850_000_000n);
  // R6, after the rewind: session growth negative, turn growth counts.
  assert.equal(at(44)?.sessionGrowth.costPicoUsd, -15_175_000_000n);
  assert.equal(at(44)?.spend.costPicoUsd, 11_000_000_000n);
  // R9, after the gap lost turn-4's start: no turn began as far as we know.
  assert.equal(at(56)?.turnBegan, false);
  assert.equal(at(56)?.turnGrowth.cacheRead, 2000n);
  assert.equal(at(56)?.spend.cacheRead, 26_500n);
  assert.equal(at(56)?.spend.costPicoUsd, 18_750_000_000n);
  assert.deepEqual(
    b1.reports.map((r) => r.seq),
    [8, 11, 18, 35, 37, 44, 46, 56, 63],
  );
});

test('corpus: spend is attributed to the model in force at each report', () => {
  const bySession = accountCorpus();
  const byModel = new Map<string, bigint>();
  for (const a of bySession.get(SESSION_A) ?? []) {
    for (const [model, t] of a.account.spendByModel()) byModel.set(model, (byModel.get(model) ?? 0n) + t.costPicoUsd);
  }
  assert.deepEqual(
    byModel,
    new Map([
      ['claude-sonnet-4-5', 121_185_000_000n],
      ['claude-opus-4-1', 25_500_000_000n],
      ['local/qwen3-coder', 0n],
    ]),
  );
  const unpriced = (bySession.get(SESSION_A) ?? []).flatMap((a) => a.reports.filter((r) => r.spend.unpriced));
  assert.deepEqual(
    unpriced.map((r) => [r.seq, r.model]),
    [[47, 'local/qwen3-coder']],
  );
});

test('corpus: agent-scoped events are kept apart, labelled by sub-agent', () => {
  const bySession = accountCorpus();
  const b2 = (bySession.get(SESSION_B) ?? []).find((a) => a.journal.file.includes('T083355Z'));
  assert.ok(b2);
  const sa = b2.account.agentOutcomes().get('sa-b5');
  assert.ok(sa);
  assert.deepEqual(
    sa.errors.map((e) => [e.class, e.code]),
    [['rpc', -32603]],
  );
  assert.deepEqual(
    sa.compactions.map((c) => [c.reason, c.tokensBefore, c.tokensAfter]),
    [['auto', 180000, 12000]],
  );
  assert.deepEqual(
    sa.tools.map((t) => [t.id, t.status, t.exitCode]),
    [['call-s1', 'completed', 0]],
  );
  const main = b2.account.sessionOutcomes();
  assert.equal(main.errors.length, 0);
  assert.equal(main.compactions.length, 0);
  // The replayed sub-agent row of the load is not counted.
  assert.deepEqual(
    main.subagents.map((s) => [s.id, s.attemptId, s.outcome]),
    [['sa-b5', 'sa-b5.1', 'completed']],
  );
});

test('corpus: errors, compactions, tool exit codes and permission asks', () => {
  const bySession = accountCorpus();
  const [a1] = bySession.get(SESSION_A) ?? [];
  assert.ok(a1);
  const o = a1.account.sessionOutcomes();
  assert.deepEqual(
    o.errors.map((e) => [e.class, e.code]),
    [['provider', 529]],
  );
  assert.deepEqual(
    o.permissionAsks.map((a) => [a.id, a.outcome, a.by]),
    [['perm-1', 'answered', 'client']],
  );
  assert.deepEqual(
    o.tools.filter((t) => t.name === 'bash').map((t) => [t.id, t.status, t.exitCode]),
    [
      ['call-3', 'completed', 1],
      ['call-5', 'completed', 0],
    ],
  );
  const c = bySession.get(SESSION_C) ?? [];
  const compactions = c.flatMap((x) => x.account.sessionOutcomes().compactions);
  // The replayed compactions of both loads are not counted.
  assert.deepEqual(
    compactions.map((x) => [x.reason, x.tokensBefore, x.tokensAfter, x.failed]),
    [
      ['manual', 890000, 21000, false],
      ['overflow', 1010000, 0, true],
    ],
  );
});

// ---------------------------------------------------------------------------
// Focused cases.

function sp(cost: bigint, input = 0n, unpriced = false): Spend {
  return { input, output: 0n, reasoning: 0n, cacheRead: 0n, cacheCreation: 0n, costPicoUsd: cost, unpriced };
}

/** A tiny event builder; seq assigned in order. */
function script(): {
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

function costs(events: CrazeAccountEvent[]): bigint[] {
  return accountIncarnation('s', 'i', events).reports.map((r) => r.spend.costPicoUsd);
}

test('a turn restated across steps is not double counted', () => {
  const s = script();
  s.turn('t1');
  s.report(sp(10n), sp(10n));
  s.report(sp(25n), sp(25n));
  s.report(sp(40n), sp(40n));
  s.ended('t1');
  assert.deepEqual(costs(s.events), [10n, 15n, 15n]);
});

test('a rewound branch (the session drops) still counts the turn growth', () => {
  const s = script();
  s.turn('t1');
  s.report(sp(100n), sp(100n));
  s.turn('t2');
  s.report(sp(50n), sp(150n));
  s.turn('t3'); // after a rewind to before t2: the session figure falls to 100 + 30
  s.report(sp(30n), sp(130n));
  s.report(sp(45n), sp(145n));
  const { account, reports } = accountIncarnation('s', 'i', s.events);
  assert.deepEqual(
    reports.map((r) => [r.sessionGrowth.costPicoUsd, r.turnGrowth.costPicoUsd, r.spend.costPicoUsd]),
    [
      [100n, 100n, 100n],
      [50n, 50n, 50n],
      [-20n, 30n, 30n],
      [15n, 15n, 15n],
    ],
  );
  assert.equal(account.spendTotals().costPicoUsd, 195n);
});

test('a missed turn boundary is caught by the session growth', () => {
  const s = script();
  s.turn('t1');
  s.report(sp(40n), sp(40n));
  // t2's `started` was lost (a journal gap): its first report reads as t1's.
  s.report(sp(15n), sp(55n));
  const reports = accountIncarnation('s', 'i', s.events).reports;
  assert.equal(reports[1]?.turnBegan, false);
  assert.equal(reports[1]?.turnGrowth.costPicoUsd, -25n);
  assert.deepEqual(costs(s.events), [40n, 15n]);
});

test('a foreign turn starting is a turn boundary; its end is not', () => {
  const s = script();
  s.turn('t1');
  s.report(sp(40n), sp(40n));
  s.foreign(true);
  s.report(sp(5n), sp(45n));
  s.foreign(false);
  s.report(sp(9n), sp(49n));
  const reports = accountIncarnation('s', 'i', s.events).reports;
  assert.deepEqual(
    reports.map((r) => [r.turnBegan, r.spend.costPicoUsd]),
    [
      [true, 40n],
      [true, 5n],
      [false, 4n],
    ],
  );
});

test('replayed reports are never counted', () => {
  const s = script();
  s.push({ type: 'replay' });
  s.report(sp(7n), sp(1_000n), { replayed: true });
  s.push({ type: 'replay' });
  assert.deepEqual(costs(s.events), []);
  // Nor is a replayed report after a live one (a second load): it does not
  // move the baseline either.
  const t = script();
  t.turn('t1');
  t.report(sp(10n), sp(110n), { replayed: false });
  t.report(sp(5n), sp(60n), { replayed: true });
  t.report(sp(20n), sp(120n));
  assert.deepEqual(costs(t.events), [110n, 10n]);
});

test('the first report after a load is measured against the replayed report', () => {
  const s = script();
  s.push({ type: 'replay', replayed: false });
  s.push({ type: 'user', replayed: true });
  s.push({ type: 'turn', turn: { id: 'old', phase: 'ended' }, replayed: true });
  s.report(sp(300n), sp(5_000n), { replayed: true, state: { model: 'm-old', usage: { turn: sp(300n), session: sp(5_000n) } } });
  s.turn('t1');
  s.report(sp(20n), sp(5_020n));
  const { account, reports } = accountIncarnation('s', 'i', s.events);
  assert.deepEqual(
    reports.map((r) => [r.sessionGrowth.costPicoUsd, r.spend.costPicoUsd, r.model]),
    [[20n, 20n, 'm-old']],
  );
  assert.equal(account.sessionOutcomes().turns.length, 0, 'a replayed turn ending is not a count');
  // No load: against zero.
  const t = script();
  t.turn('t1');
  t.report(sp(20n), sp(20n));
  assert.deepEqual(costs(t.events), [20n]);
  // A load whose first live report follows no turn start: the turn figure
  // is measured against the replayed one too, so the stored last turn is not
  // counted again.
  const u = script();
  u.report(sp(300n), sp(5_000n), { replayed: true });
  u.report(sp(310n), sp(5_010n));
  assert.deepEqual(costs(u.events), [10n]);
});

test('sub-agents: the last finished row wins, spawned and never finished is abandoned', () => {
  const s = script();
  const row = (id: string, attemptId: string, status: string, change: string, extra: Partial<CrazeAccountEvent> = {}) =>
    s.push({ type: 'subagent', subagent: { id, attemptId, status }, subagentChange: change, ...extra });
  row('a', '1', 'running', 'spawned');
  row('a', '1', 'failed', 'finished');
  row('a', '1', 'completed', 'finished'); // last by seq wins
  row('a', '2', 'running', 'spawned'); // another attempt: its own key
  row('a', '2', 'cancelled', 'finished');
  row('b', '1', 'running', 'spawned');
  row('b', '1', 'running', 'progress'); // never finished: abandoned
  row('c', '1', 'completed', 'finished', { replayed: true }); // replayed: not counted
  const { account } = accountIncarnation('s', 'i', s.events);
  assert.deepEqual(
    account.sessionOutcomes().subagents.map((x) => [x.id, x.attemptId, x.outcome]),
    [
      ['a', '1', 'completed'],
      ['a', '2', 'cancelled'],
      ['b', '1', 'abandoned'],
    ],
  );
  const t = sessionTotals('s', [account]);
  assert.deepEqual(
    [t.subagentsCompleted, t.subagentsFailed, t.subagentsCancelled, t.subagentsAbandoned],
    [1, 0, 1, 1],
  );
});

test('agent-scoped events are excluded from session counts and spend', () => {
  const s = script();
  s.push({ type: 'meta', state: { model: 'parent-model' } });
  s.turn('t1');
  s.report(sp(10n), sp(10n));
  s.push({ type: 'meta', agent: 'sa', state: { model: 'child-model', usage: { turn: sp(999n), session: sp(999n) } } });
  s.push({ type: 'turn', agent: 'sa', turn: { id: 'c1', phase: 'started' } });
  s.push({ type: 'turn', agent: 'sa', turn: { id: 'c1', phase: 'ended', errClass: 'provider' } });
  s.push({ type: 'subagent', agent: 'sa', subagent: { id: 'nested', attemptId: '1', status: 'failed' }, subagentChange: 'finished' });
  s.push({ type: 'error', agent: 'sa', err: { class: 'rpc', code: -32603 } });
  s.report(sp(25n), sp(25n));
  s.ended('t1');
  const { account, reports } = accountIncarnation('s', 'i', s.events);
  // The child's turn start is no boundary of the session's turn figure.
  assert.deepEqual(
    reports.map((r) => [r.turnBegan, r.spend.costPicoUsd, r.model]),
    [
      [true, 10n, 'parent-model'],
      [false, 15n, 'parent-model'],
    ],
  );
  const t = sessionTotals('s', [account]);
  assert.deepEqual([t.costPicoUsd, t.turnsDone, t.turnsFailed, t.subagentsFailed], [25n, 1, 0, 0]);
  const sa = account.agentOutcomes().get('sa');
  assert.ok(sa);
  assert.deepEqual(
    [sa.turns.length, sa.subagents.length, sa.errors.length],
    [1, 1, 1],
  );
  assert.equal(account.sessionOutcomes().errors.length, 0);
});

test('cost sums above 2^53 are exact', () => {
  const big = 9_007_199_254_740_993n; // 2^53 + 1: not a JavaScript number
  const s = script();
  s.turn('t1');
  s.report(sp(big), sp(big));
  s.turn('t2');
  s.report(sp(big + 2n), sp(2n * big + 2n));
  const { account } = accountIncarnation('s', 'i', s.events);
  assert.equal(account.spendTotals().costPicoUsd, 18_014_398_509_481_988n);
  // And through the session reducer over incarnations (corpus session C).
  const c = accountCorpus().get(SESSION_C) ?? [];
  assert.equal(sessionTotals(SESSION_C, c.map((x) => x.account)).costPicoUsd, 11_552_469_012_580_265n);
});

test('turn endings: failed on an error, cancelled on a cancel or a close, else done', () => {
  assert.equal(classifyTurnEnding({ phase: 'ended', stopReason: 'end_turn' }), 'done');
  assert.equal(classifyTurnEnding({ phase: 'ended', stopReason: 'max_tokens' }), 'done');
  assert.equal(classifyTurnEnding({ phase: 'ended', errClass: 'provider', err: '529' }), 'failed');
  assert.equal(classifyTurnEnding({ phase: 'ended', err: 'boom' }), 'failed');
  assert.equal(classifyTurnEnding({ phase: 'ended', stopReason: 'cancelled' }), 'cancelled');
  assert.equal(classifyTurnEnding({ phase: 'ended', stopReason: 'closing', synthetic: true }), 'cancelled');
  assert.equal(
    classifyTurnEnding({ phase: 'ended', stopReason: 'cancelled', errClass: 'prompt_cancelled', err: 'x', synthetic: true }),
    'cancelled',
  );
  assert.equal(classifyTurnEnding({ phase: 'ended', errClass: 'canceled', err: 'context canceled' }), 'cancelled');
  // One turn ended twice counts once, as its last ending says.
  const s = script();
  s.turn('t1');
  s.ended('t1', { synthetic: true, stopReason: 'closing' });
  s.ended('t1');
  const t = sessionTotals('s', [accountIncarnation('s', 'i', s.events).account]);
  assert.deepEqual([t.turnsDone, t.turnsCancelled], [1, 0]);
});

test('unpriced: counted once where the floor enters, not on every later report', () => {
  const s = script();
  s.turn('t1');
  s.report(sp(10n), sp(10n));
  s.turn('t2');
  s.report(sp(0n, 500n, true), sp(10n, 500n, true));
  s.turn('t3');
  s.report(sp(5n), sp(15n, 500n, true));
  const { account, reports } = accountIncarnation('s', 'i', s.events);
  assert.deepEqual(
    reports.map((r) => r.spend.unpriced),
    [false, true, false],
  );
  assert.equal(account.spendTotals().unpricedReports, 1);
});

test('state survives a JSON round trip mid-stream, and a redelivered seq is ignored', () => {
  for (const journal of corpus()) {
    const straight = accountIncarnation(journal.sessionId, journal.incarnation, journal.events).account;
    for (const cut of [1, Math.floor(journal.events.length / 2), journal.events.length - 1]) {
      let acc = new IncarnationSpend(journal.sessionId, journal.incarnation);
      for (const ev of journal.events.slice(0, cut)) acc.feed(ev);
      acc = IncarnationSpend.fromJSON(JSON.parse(JSON.stringify(acc.toJSON())) as ReturnType<IncarnationSpend['toJSON']>);
      // Redeliver the batch around the cut: what was already folded is ignored.
      for (const ev of journal.events.slice(Math.max(0, cut - 3))) acc.feed(ev);
      assert.deepEqual(acc.toJSON(), straight.toJSON(), `${journal.file} cut at ${cut}`);
    }
  }
});
