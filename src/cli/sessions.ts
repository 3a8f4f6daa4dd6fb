import { createClickHouse } from '../clickhouse/client.js';
import { crazeSessions, type SessionSummary } from '../read/session-reads.js';
import { picoToUsdText } from '../money/picodollars.js';
import type { Command } from './command.js';
import { parseSince } from '../read/since.js';
import { parseOptions, wholeNumberOption } from './command.js';
import { printable } from './terminal.js';

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
    const limit = values.limit === undefined ? undefined : wholeNumberOption('limit', values.limit, 0);
    const ch = createClickHouse(config.clickhouse);
    let sessions: SessionSummary[];
    try {
      sessions = await crazeSessions(ch, { since, limit });
    } finally {
      await ch.close();
    }
    if (values.json) {
      out(JSON.stringify(sessions));
      return 0;
    }
    out('session                                cost USD            input     output  turns d/f/c  subagents c/f/x/a  unpriced  incarnations');
    for (const s of sessions) {
      const usd = picoToUsdText(BigInt(s.costPicoUsd));
      out(
        `${printable(s.sessionId).padEnd(38)} ${usd.padStart(19)} ${String(s.inputTokens).padStart(9)} ${String(s.outputTokens).padStart(10)}  ${`${s.turnsDone}/${s.turnsFailed}/${s.turnsCancelled}`.padEnd(11)}  ${`${s.subagentsCompleted}/${s.subagentsFailed}/${s.subagentsCancelled}/${s.subagentsAbandoned}`.padEnd(17)}  ${String(s.unpricedReports).padStart(8)}  ${s.incarnations}`,
      );
    }
    if (sessions.length === 0) out('(no craze sessions)');
    return 0;
  },
};
