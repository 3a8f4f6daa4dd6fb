import { DATETIME_MAX_SECONDS, decimalText } from './read-values.js';
import { queryRows } from './sql.js';
/** [since, until) as DateTime seconds, clamped to DateTime's range (toDateTime would wrap a value outside it). */
function windowSeconds({ since, until }) {
    const seconds = (d, fallback) => {
        if (d === undefined)
            return fallback;
        const s = Math.floor(d.getTime() / 1000);
        if (Number.isNaN(s))
            throw new RangeError('spend window: an invalid Date');
        return Math.min(DATETIME_MAX_SECONDS, Math.max(0, s));
    };
    return { since: seconds(since, 0), until: seconds(until, DATETIME_MAX_SECONDS) };
}
function spendGroup(source, owner, r, unpricedCalls) {
    return {
        source,
        owner,
        provider: r.provider,
        model: r.model,
        day: r.day,
        calls: Number(r.calls),
        inputTokens: decimalText(r.input_tokens_sum),
        outputTokens: decimalText(r.output_tokens_sum),
        costPico: decimalText(r.cost),
        unpricedCalls,
    };
}
/** Counted spend of the loop runtime and of craze, per owner, provider, model and day (runtime_spend_groups.sql, craze_spend_groups.sql). */
export async function spendGroups(ch, sources, window = {}) {
    const params = windowSeconds(window);
    const groups = [];
    if (sources.includes('runtime')) {
        for (const r of await queryRows(ch, 'runtime_spend_groups', params))
            groups.push(spendGroup('runtime', r.loop_id, r, 0));
    }
    if (sources.includes('craze')) {
        for (const r of await queryRows(ch, 'craze_spend_groups', params)) {
            groups.push(spendGroup('craze', r.session_id, r, Number(r.unpriced_calls)));
        }
    }
    return groups;
}
/**
 * Counted spend from the hour rollups, grouped in ClickHouse by source and
 * the `by` key (spend_rollup_groups.sql; by root spend_rollup_root_groups.sql),
 * one group per row `spend --rollups` prints: fast at any size, current up
 * to the last sweep for rows stored late. Every hour the window overlaps is
 * counted whole. A group's owner is its root (by root), else ''; its name
 * is the loop name (by name), else ''.
 */
export async function rollupSpendGroups(ch, sources, by, window = {}) {
    const params = { ...windowSeconds(window), sources: [...sources] };
    const known = (r) => r.source === 'runtime' || r.source === 'craze';
    if (by === 'root') {
        const rows = await queryRows(ch, 'spend_rollup_root_groups', params);
        return rows.filter(known).map((r) => spendGroup(r.source, r.root_loop_id, { ...r, provider: '', model: '', day: '' }, Number(r.unpriced_calls)));
    }
    const rows = await queryRows(ch, 'spend_rollup_groups', { ...params, by });
    return rows.filter(known).map((r) => ({ ...spendGroup(r.source, '', r, Number(r.unpriced_calls)), name: r.loop_name }));
}
//# sourceMappingURL=spend-reads.js.map