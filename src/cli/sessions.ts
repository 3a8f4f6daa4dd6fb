import { createClickHouse } from '../sink/clickhouse/client.js';
import { querySql } from '../sink/clickhouse/sql.js';
import { picoToUsdText } from '../money/picodollars.js';
import type { Command } from './command.js';
import { parseOptions, UsageError } from './command.js';

export interface SessionSummary {
  sessionId: string;
  incarnations: number;
  /** Picodollars, exact, as a decimal string. */
  costPicoUsd: string;
  inputTokens: number | string;
  outputTokens: number | string;
  reasoningTokens: number | string;
  cacheReadTokens: number | string;
  cacheCreationTokens: number | string;
  unpricedReports: number;
  turnsDone: number;
  turnsFailed: number;
  turnsCancelled: number;
  subagentsCompleted: number;
  subagentsFailed: number;
  subagentsCancelled: number;
  subagentsAbandoned: number;
  models: string[];
  provider: string;
  cwd: string;
  firstSeen: string;
  lastSeen: string;
}

/** A count as a JSON number when exact, else as its decimal string. */
const exact = (text: string): number | string => (BigInt(text) <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(text) : text);

/** `--since` as a ClickHouse DateTime text: RFC 3339, YYYY-MM-DD, or a span back from now (90m, 24h, 7d). */
export function parseSince(text: string, now = Date.now()): string {
  const span = /^(\d+)([mhd])$/.exec(text);
  let ms: number;
  if (span) ms = now - Number(span[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[span[2] as 'm' | 'h' | 'd'];
  else ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
  if (!Number.isFinite(ms)) throw new UsageError(`--since ${JSON.stringify(text)}: expected RFC 3339, YYYY-MM-DD or a span like 24h or 7d`);
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

export const sessionsCommand: Command = {
  name: 'sessions',
  summary: 'list craze sessions from ClickHouse, costliest first',
  help: `Usage: agentledger sessions [--since WHEN] [--limit N] [--json]

Lists craze sessions, costliest first: spend (exact picodollars, summed over all
incarnations; a load or resume never counts history twice), tokens, turns and
sub-agents by outcome, unpriced usage reports (their cost is a floor),
incarnations, models. --since keeps sessions last seen at or after WHEN
(RFC 3339, YYYY-MM-DD, or a span back from now: 90m, 24h, 7d).

With --json: an array of objects with sessionId, incarnations, costPicoUsd
(a decimal string, exact), inputTokens, outputTokens, reasoningTokens,
cacheReadTokens, cacheCreationTokens, unpricedReports, turnsDone, turnsFailed,
turnsCancelled, subagentsCompleted, subagentsFailed, subagentsCancelled,
subagentsAbandoned, models, provider, cwd, firstSeen, lastSeen.`,
  async run(args, { config, out }) {
    const { values } = parseOptions(args, { since: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } });
    const since = values.since === undefined ? undefined : parseSince(values.since);
    const limit = values.limit === undefined ? Infinity : Number(values.limit);
    if (!(limit === Infinity || (Number.isInteger(limit) && limit >= 0))) throw new UsageError('--limit takes a whole number');
    const ch = createClickHouse(config.clickhouse);
    let sessions: SessionSummary[];
    try {
      const q = <T>(name: string) => ch.query({ query: querySql(name), format: 'JSONEachRow' }).then((r) => r.json<T>());
      const [spend, turns, subagents] = await Promise.all([
        q<Record<string, string | string[]>>('craze_sessions'),
        q<Record<string, string>>('craze_session_turns'),
        q<Record<string, string>>('craze_session_subagents'),
      ]);
      const turnsBy = new Map(turns.map((t) => [t['session_id'], t]));
      const subsBy = new Map(subagents.map((s) => [s['session_id'], s]));
      sessions = spend.map((s) => {
        const id = String(s['session_id']);
        const t = turnsBy.get(id);
        const a = subsBy.get(id);
        const n = (v: string | string[] | undefined): number => Number(v ?? 0);
        return {
          sessionId: id,
          incarnations: n(s['incarnations']),
          costPicoUsd: String(s['cost_pico']),
          inputTokens: exact(String(s['input_tokens'])),
          outputTokens: exact(String(s['output_tokens'])),
          reasoningTokens: exact(String(s['reasoning_tokens'])),
          cacheReadTokens: exact(String(s['cache_read_tokens'])),
          cacheCreationTokens: exact(String(s['cache_creation_tokens'])),
          unpricedReports: n(s['unpriced_reports']),
          turnsDone: n(t?.['done']),
          turnsFailed: n(t?.['failed']),
          turnsCancelled: n(t?.['cancelled']),
          subagentsCompleted: n(a?.['completed']),
          subagentsFailed: n(a?.['failed']),
          subagentsCancelled: n(a?.['cancelled']),
          subagentsAbandoned: n(a?.['abandoned']),
          models: [...((s['models'] as string[] | undefined) ?? [])].sort(),
          provider: String(s['provider'] ?? ''),
          cwd: String(s['cwd'] ?? ''),
          firstSeen: String(s['first_seen']),
          lastSeen: String(s['last_seen']),
        };
      });
    } finally {
      await ch.close();
    }
    sessions = sessions
      .filter((s) => since === undefined || s.lastSeen >= since)
      .sort((a, b) => {
        const d = BigInt(b.costPicoUsd) - BigInt(a.costPicoUsd);
        return d > 0n ? 1 : d < 0n ? -1 : a.sessionId.localeCompare(b.sessionId);
      })
      .slice(0, limit);
    if (values.json) {
      out(JSON.stringify(sessions));
      return 0;
    }
    out('session                                cost USD            input     output  turns d/f/c  subagents c/f/x/a  unpriced  incarnations');
    for (const s of sessions) {
      const usd = picoToUsdText(BigInt(s.costPicoUsd));
      out(
        `${s.sessionId.padEnd(38)} ${usd.padStart(19)} ${String(s.inputTokens).padStart(9)} ${String(s.outputTokens).padStart(10)}  ${`${s.turnsDone}/${s.turnsFailed}/${s.turnsCancelled}`.padEnd(11)}  ${`${s.subagentsCompleted}/${s.subagentsFailed}/${s.subagentsCancelled}/${s.subagentsAbandoned}`.padEnd(17)}  ${String(s.unpricedReports).padStart(8)}  ${s.incarnations}`,
      );
    }
    if (sessions.length === 0) out('(no craze sessions)');
    return 0;
  },
};
