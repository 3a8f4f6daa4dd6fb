/**
 * The typed read layer without a server: which SQL each read sends (filters
 * and limits in ClickHouse, every value a literal) and how rows become typed
 * values (64-bit integers exact). The same reads against a real ClickHouse
 * are in test/integration/sql-escaping.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClickHouseClient } from '@clickhouse/client';
import { parseSince } from '../../../src/read/since.js';
import { UsageError } from '../../../src/cli/command.js';
import { latestViolations, verdictCounts } from '../../../src/read/chain-reads.js';
import { serverVersion } from '../../../src/clickhouse/server.js';
import { crazeSessions } from '../../../src/read/session-reads.js';

/** A client that records each query and answers with the given rows. */
function fakeClient(rows: unknown[]): { ch: ClickHouseClient; sent: string[] } {
  const sent: string[] = [];
  const ch = {
    query({ query, format }: { query: string; format: string }) {
      assert.equal(format, 'JSONEachRow');
      sent.push(query);
      return Promise.resolve({ json: () => Promise.resolve(rows) });
    },
  } as unknown as ClickHouseClient;
  return { ch, sent };
}

const sessionRow = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  session_id: 's1',
  incarnations: '2',
  cost_pico: '11552469012580265',
  input_tokens: '9007199254740991',
  output_tokens: '9007199254740992',
  reasoning_tokens: '0',
  cache_read_tokens: '123',
  cache_creation_tokens: '18446744073709551616',
  unpriced_reports: '1',
  models: ['m2', 'm10', 'M1'],
  provider: 'native',
  cwd: "/home/o'brien",
  first_seen_text: '2025-03-07 16:00:06',
  last_seen_text: '2025-03-08 17:30:24',
  turns_done: '4',
  turns_failed: '1',
  turns_cancelled: '2',
  subagents_completed: '3',
  subagents_failed: '0',
  subagents_cancelled: '1',
  subagents_abandoned: '5',
  ...over,
});

test('crazeSessions maps a row to SessionSummary: money as its decimal string, token sums exact', async () => {
  const { ch } = fakeClient([sessionRow()]);
  assert.deepEqual(await crazeSessions(ch), [
    {
      sessionId: 's1',
      incarnations: 2,
      costPicoUsd: '11552469012580265',
      inputTokens: 9007199254740991,
      outputTokens: '9007199254740992',
      reasoningTokens: 0,
      cacheReadTokens: 123,
      cacheCreationTokens: '18446744073709551616',
      unpricedReports: 1,
      turnsDone: 4,
      turnsFailed: 1,
      turnsCancelled: 2,
      subagentsCompleted: 3,
      subagentsFailed: 0,
      subagentsCancelled: 1,
      subagentsAbandoned: 5,
      models: ['M1', 'm10', 'm2'],
      provider: 'native',
      cwd: "/home/o'brien",
      firstSeen: '2025-03-07 16:00:06',
      lastSeen: '2025-03-08 17:30:24',
    },
  ]);
});

test('crazeSessions takes counts written as JSON numbers too (output_format_json_quote_64bit_integers=0)', async () => {
  const { ch } = fakeClient([sessionRow({ incarnations: 3, turns_done: 7, subagents_abandoned: 0, unpriced_reports: 0 })]);
  const [s] = await crazeSessions(ch);
  assert.deepEqual([s?.incarnations, s?.turnsDone, s?.subagentsAbandoned, s?.unpricedReports], [3, 7, 0, 0]);
});

test('crazeSessions filters and limits in SQL', async () => {
  const all = fakeClient([]);
  await crazeSessions(all.ch);
  assert.equal(all.sent.length, 1);
  const sql = all.sent[0]!;
  assert.match(sql, /WHERE last_seen >= toDateTime\(0\)\n/);
  assert.match(sql, /ORDER BY toDecimal128\(cost_pico, 0\) DESC, session_id\nLIMIT 18446744073709551615$/);
  assert.doesNotMatch(sql, /\{[a-z_]+:/, 'every placeholder rendered');
  assert.doesNotMatch(sql, /^--/m, 'no header comment sent');

  const some = fakeClient([]);
  await crazeSessions(some.ch, { since: new Date('2025-03-03T00:00:00.999Z'), limit: 2 });
  assert.match(some.sent[0]!, /WHERE last_seen >= toDateTime\(1740960000\)\n/);
  assert.match(some.sent[0]!, /\nLIMIT 2$/);

  const zero = fakeClient([]);
  await crazeSessions(zero.ch, { limit: 0 });
  assert.match(zero.sent[0]!, /\nLIMIT 0$/);

  // A limit past 2^53 is "all"; String() would have written 1e+30.
  const huge = fakeClient([]);
  await crazeSessions(huge.ch, { limit: 1e30 });
  assert.match(huge.sent[0]!, /\nLIMIT 18446744073709551615$/);
});

test('crazeSessions: a since outside DateTime keeps every session (before 1970) or none (after 2106), without wrapping', async () => {
  const early = fakeClient([]);
  await crazeSessions(early.ch, { since: new Date('1960-01-01T00:00:00Z') });
  assert.match(early.sent[0]!, /toDateTime\(0\)/);

  const late = fakeClient([sessionRow()]);
  assert.deepEqual(await crazeSessions(late.ch, { since: new Date('2106-02-07T06:28:16Z') }), []);
  assert.equal(late.sent.length, 0, 'no query at all');

  const last = fakeClient([]);
  await crazeSessions(last.ch, { since: new Date('2106-02-07T06:28:15Z') });
  assert.match(last.sent[0]!, /toDateTime\(4294967295\)/);

  await assert.rejects(crazeSessions(fakeClient([]).ch, { since: new Date(NaN) }), RangeError);
  await assert.rejects(crazeSessions(fakeClient([]).ch, { limit: -1 }), RangeError);
  await assert.rejects(crazeSessions(fakeClient([]).ch, { limit: 1.5 }), RangeError);
});

test('verdictCounts and latestViolations keep 64-bit integers exact', async () => {
  const counts = fakeClient([{ verdict: 'ok', envelopes: '18446744073709551615', loops: 3 }]);
  assert.deepEqual(await verdictCounts(counts.ch), [{ verdict: 'ok', envelopes: 18446744073709551615n, loops: 3n }]);
  assert.equal(counts.sent.length, 1, 'one read');
  assert.match(counts.sent[0]!, /FROM chain_loop_keys_now/);
  assert.doesNotMatch(counts.sent[0]!, /FINAL/);

  const violations = fakeClient([{ loop_id: "l'1", seq: '9007199254740993', verdict: 'fork', detail: 'd', time_text: '2025-01-01T00:00:00Z' }]);
  assert.deepEqual(await latestViolations(violations.ch, 20), [
    { loopId: "l'1", seq: 9007199254740993n, verdict: 'fork', detail: 'd', time: '2025-01-01T00:00:00Z' },
  ]);
  assert.match(violations.sent[0]!, /\nLIMIT 20$/);
});

test('serverVersion reads one row', async () => {
  const { ch, sent } = fakeClient([{ version: '18.16.1' }]);
  assert.equal(await serverVersion(ch), '18.16.1');
  assert.equal(sent[0], 'SELECT version() AS version');
  await assert.rejects(serverVersion(fakeClient([]).ch), /no row/);
});

test('sessions --since: RFC 3339, a UTC day or a span back from now, to the whole second', () => {
  assert.deepEqual(parseSince('2025-03-03'), new Date('2025-03-03T00:00:00Z'));
  assert.deepEqual(parseSince('2025-03-03T10:00:00.900+01:00'), new Date('2025-03-03T09:00:00Z'));
  const now = Date.parse('2025-03-03T12:00:00.500Z');
  assert.deepEqual(parseSince('90m', now), new Date('2025-03-03T10:30:00Z'));
  assert.deepEqual(parseSince('24h', now), new Date('2025-03-02T12:00:00Z'));
  assert.deepEqual(parseSince('7d', now), new Date('2025-02-24T12:00:00Z'));
  // Before 1970 floors too (toward the past), as truncating the ISO text did.
  assert.deepEqual(parseSince('1969-12-31T23:59:59.500Z'), new Date('1969-12-31T23:59:59Z'));
  for (const bad of ['garbage', '', '7w', '99999999999d']) assert.throws(() => parseSince(bad, now), UsageError, bad);
});
