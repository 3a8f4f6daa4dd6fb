/**
 * Craze sessions over all their incarnations, for `sessions`
 * (craze_sessions.sql): spend, tokens and outcomes, filtered and limited in
 * ClickHouse.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { CrazeSpendColumns } from '../rows/rows.js';
import { DATETIME_MAX_SECONDS, limitParam, type Int64Json } from '../clickhouse/read-values.js';
import { queryRows } from './queries.js';

/**
 * What a craze session counts over all its incarnations: spend, tokens,
 * outcomes. One list of fields for the `sessions` output, the hand-computed
 * ground truth and the tests' reference, each with its own number types.
 */
export interface SessionTotals<Money, Tokens> {
  sessionId: string;
  incarnations: number;
  /** Picodollars, exact. */
  costPicoUsd: Money;
  inputTokens: Tokens;
  outputTokens: Tokens;
  reasoningTokens: Tokens;
  cacheReadTokens: Tokens;
  cacheCreationTokens: Tokens;
  unpricedReports: number;
  turnsDone: number;
  turnsFailed: number;
  turnsCancelled: number;
  subagentsCompleted: number;
  subagentsFailed: number;
  subagentsCancelled: number;
  subagentsAbandoned: number;
}

/**
 * One craze session over all its incarnations, in the shape `sessions --json`
 * prints (the command's documented output): cost as a decimal string, token
 * sums as numbers while exact (up to 2^53 - 1), else as decimal strings.
 */
export interface SessionSummary extends SessionTotals<string, number | string> {
  /** Models used, sorted (JavaScript string order). */
  models: string[];
  provider: string;
  cwd: string;
  /** `YYYY-MM-DD hh:mm:ss`, UTC. */
  firstSeen: string;
  /** `YYYY-MM-DD hh:mm:ss`, UTC. */
  lastSeen: string;
}

export interface SessionFilter {
  /** Only sessions last seen at or after this time (whole seconds count: DateTime has no fraction). */
  readonly since?: Date;
  /** At most this many sessions, the costliest. */
  readonly limit?: number;
}

/** A row of craze_sessions.sql: the spend columns summed over the session, the rest counted or gathered. */
interface SessionRow extends CrazeSpendColumns {
  session_id: string;
  incarnations: Int64Json;
  unpriced_reports: Int64Json;
  models: string[];
  provider: string;
  cwd: string;
  first_seen_text: string;
  last_seen_text: string;
  turns_done: Int64Json;
  turns_failed: Int64Json;
  turns_cancelled: Int64Json;
  subagents_completed: Int64Json;
  subagents_failed: Int64Json;
  subagents_cancelled: Int64Json;
  subagents_abandoned: Int64Json;
}

/** A token sum as a JSON number when exact, else as its decimal string. */
const exact = (text: Int64Json): number | string => (BigInt(text) <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(text) : String(text));

/**
 * Craze sessions, costliest first (ties by session id, byte order), filtered
 * and limited in ClickHouse (craze_sessions.sql).
 */
export async function crazeSessions(ch: ClickHouseClient, filter: SessionFilter = {}): Promise<SessionSummary[]> {
  const { since, limit } = filter;
  // DateTime is Unix seconds in 0..2^32-1: a bound before it keeps every
  // session, one after it none (toDateTime would wrap it around instead).
  const sinceSeconds = since === undefined ? 0 : Math.max(0, Math.floor(since.getTime() / 1000));
  if (Number.isNaN(sinceSeconds)) throw new RangeError('crazeSessions: since is an invalid Date');
  if (sinceSeconds > DATETIME_MAX_SECONDS) return [];
  const rows = await queryRows<SessionRow>(ch, 'craze_sessions', { since: sinceSeconds, limit: limitParam(limit) });
  return rows.map((r) => ({
    sessionId: r.session_id,
    incarnations: Number(r.incarnations),
    costPicoUsd: r.cost_pico,
    inputTokens: exact(r.input_tokens),
    outputTokens: exact(r.output_tokens),
    reasoningTokens: exact(r.reasoning_tokens),
    cacheReadTokens: exact(r.cache_read_tokens),
    cacheCreationTokens: exact(r.cache_creation_tokens),
    unpricedReports: Number(r.unpriced_reports),
    turnsDone: Number(r.turns_done),
    turnsFailed: Number(r.turns_failed),
    turnsCancelled: Number(r.turns_cancelled),
    subagentsCompleted: Number(r.subagents_completed),
    subagentsFailed: Number(r.subagents_failed),
    subagentsCancelled: Number(r.subagents_cancelled),
    subagentsAbandoned: Number(r.subagents_abandoned),
    models: [...r.models].sort(),
    provider: r.provider,
    cwd: r.cwd,
    firstSeen: r.first_seen_text,
    lastSeen: r.last_seen_text,
  }));
}
