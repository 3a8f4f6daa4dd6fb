import { DATETIME_MAX_SECONDS, limitParam } from './read-values.js';
import { queryRows } from './sql.js';
/** A token sum as a JSON number when exact, else as its decimal string. */
const exact = (text) => (BigInt(text) <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(text) : String(text));
/**
 * Craze sessions, costliest first (ties by session id, byte order), filtered
 * and limited in ClickHouse (craze_sessions.sql).
 */
export async function crazeSessions(ch, filter = {}) {
    const { since, limit } = filter;
    // DateTime is Unix seconds in 0..2^32-1: a bound before it keeps every
    // session, one after it none (toDateTime would wrap it around instead).
    const sinceSeconds = since === undefined ? 0 : Math.max(0, Math.floor(since.getTime() / 1000));
    if (Number.isNaN(sinceSeconds))
        throw new RangeError('crazeSessions: since is an invalid Date');
    if (sinceSeconds > DATETIME_MAX_SECONDS)
        return [];
    const rows = await queryRows(ch, 'craze_sessions', { since: sinceSeconds, limit: limitParam(limit) });
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
//# sourceMappingURL=session-reads.js.map