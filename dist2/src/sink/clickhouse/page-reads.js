import { queryRows } from './sql.js';
/** A Decimal128 or UInt64 read as text ('' when ANY LEFT JOIN found no row) or as a number: exact. */
const big = (value) => (value === undefined || value === '' ? 0n : BigInt(String(value)));
/** Counted spend since three UTC midnights (Unix seconds), the month's the widest (page_spend_windows.sql). */
export async function spendWindows(ch, starts, filter) {
    const [r] = await queryRows(ch, 'page_spend_windows', { ...starts, ...filter });
    return {
        todayCalls: big(r?.['today_calls_text']),
        weekCalls: big(r?.['week_calls_text']),
        monthCalls: big(r?.['month_calls_text']),
        todayCostPico: big(r?.['today_cost']),
        weekCostPico: big(r?.['week_cost']),
        monthCostPico: big(r?.['month_cost']),
        runtimeCalls: big(r?.['runtime_calls_text']),
        runtimeCostPico: big(r?.['runtime_cost']),
    };
}
export async function chainTotals(ch, since, filter) {
    const [r] = await queryRows(ch, 'page_chain_totals', { since, model: filter.model, name: filter.name });
    return { violations: Number(r?.violations_text ?? 0), unverifiedCalls: big(r?.calls_text), unverifiedCostPico: big(r?.cost_text) };
}
export async function pageCounts(ch, activeSince) {
    const [r] = await queryRows(ch, 'page_counts', { active_since: activeSince });
    return {
        firingAlerts: Number(r?.['firing_alerts'] ?? 0),
        stuckLoops: Number(r?.['stuck_loops'] ?? 0),
        activeLoops: Number(r?.['active_loops'] ?? 0),
    };
}
/** Counted spend per bucket and key, hours starting in [since, until) (page_spend_series.sql). */
export async function spendSeries(ch, q) {
    const rows = await queryRows(ch, 'page_spend_series', {
        day: q.day ? 1 : 0,
        by: q.by,
        since: q.since,
        until: q.until,
        source: q.source,
        model: q.model,
        name: q.name,
    });
    return rows.map((r) => ({ bucket: Number(r.bucket_s), key: r.key, calls: big(r.calls_text), costPico: big(r.cost_text) }));
}
export async function treeLoops(ch, root) {
    const rows = await queryRows(ch, 'page_tree_loops', { root });
    return rows.map((r) => ({
        loopId: r.loop_id,
        parentLoopId: r.parent_loop_id,
        name: r.loop_name,
        ancestors: r.ancestors,
        ownCalls: big(r.own_calls_text),
        ownCostPico: big(r.own_cost_text),
    }));
}
export async function treeFacts(ch, root) {
    const rows = await queryRows(ch, 'page_tree_facts', { root });
    return rows.map((r) => ({ loopId: r.loop_id, verdict: r.verdict, envelopes: Number(r.envelopes), outcome: r.finished_outcome, warnings: Number(r.warnings) }));
}
/** The `limit` chain violations ingested last, at or after `since` (Unix seconds). */
export async function violations(ch, since, limit) {
    const rows = await queryRows(ch, 'page_violations', { since, limit });
    return rows.map((r) => ({
        loopId: r['loop_id'] ?? '',
        seq: String(r['seq'] ?? ''),
        verdict: r['verdict_text'] ?? '',
        kind: r['kind_text'] ?? '',
        detail: r['detail_text'] ?? '',
        time: r['time_of'] ?? '',
        ingestedAt: r['ingested_text'] ?? '',
        carriedHash: r['carried_hash'] ?? '',
        expectedHash: r['expected_hash'] ?? '',
        payload: r['payload_text'] ?? '',
        evidence: r['evidence_text'] ?? '',
    }));
}
export async function loopReconciliation(ch, limit) {
    const rows = await queryRows(ch, 'page_reconciliation', { limit });
    const flag = (v) => Number(v ?? 0) === 1;
    return rows.map((r) => ({
        loopId: String(r['loop_id']),
        rootLoopId: String(r['root_loop_id'] ?? '') || String(r['loop_id']),
        hasTotalSpend: flag(r['has_total_spend']),
        hasChildSpend: flag(r['has_child_spend']),
        modelDisagrees: flag(r['model_disagrees']),
        totalSpendDisagrees: flag(r['total_spend_disagrees']),
        childSpendDisagrees: flag(r['child_spend_disagrees']),
        modelCostPico: big(r['model_cost_text']),
        modelBudgetPico: big(r['model_budget_text']),
        budgetPico: big(r['budget_text']),
        totalSpendPico: big(r['total_spend_text']),
        childSpendPico: big(r['child_spend_text']),
        modelMinusModelBudgetPico: big(r['model_minus_model_budget_text']),
        budgetMinusTotalSpendPico: big(r['budget_minus_total_spend_text']),
        budgetMinusChildSpendPico: big(r['budget_minus_child_spend_text']),
    }));
}
export async function rootReconciliation(ch, limit) {
    const rows = await queryRows(ch, 'page_root_reconciliation', { limit });
    return rows.map((r) => ({
        rootLoopId: String(r['root_loop_id']),
        loops: Number(r['loops']),
        loopsDisagreeing: Number(r['loops_disagreeing']),
        treeModelCostPico: big(r['tree_model_cost_text']),
        treeModelBudgetPico: big(r['tree_model_budget_text']),
        treeBudgetPico: big(r['tree_budget_text']),
    }));
}
/**
 * Roots by counted spend in [since, until): from the per-root rollup, or,
 * with a model or loop name filter, from the per-loop rows that keep them
 * (page_top_roots.sql, page_top_roots_filtered.sql).
 */
export async function topRoots(ch, q) {
    const { model, name, ...rest } = q;
    const rows = model === '' && name === ''
        ? await queryRows(ch, 'page_top_roots', rest)
        : await queryRows(ch, 'page_top_roots_filtered', { ...rest, model, name });
    return rows.map((r) => ({
        source: r['source'] ?? '',
        rootLoopId: r['root_loop_id'] ?? '',
        name: r['loop_name'] ?? '',
        calls: big(r['calls_text']),
        costPico: big(r['cost_text']),
        firstHour: r['first_hour_text'] ?? '',
        lastHour: r['last_hour_text'] ?? '',
    }));
}
export async function topNames(ch, q) {
    const rows = await queryRows(ch, 'page_top_names', q);
    return rows.map((r) => ({ name: r.loop_name, calls: big(r.calls_text), costPico: big(r.cost_text) }));
}
//# sourceMappingURL=page-reads.js.map