import { rollupSpendGroups, spendGroups } from '../sink/clickhouse/spend-reads.js';
import { readLoops } from './loops.js';
export const SPEND_BY = ['model', 'day', 'name', 'root', 'source'];
export const SPEND_SOURCES = ['runtime', 'craze', 'all'];
/** Folds spend groups into rows keyed by `by`, costliest first (ties by key); by day, newest day first. */
export function foldSpend(groups, by, owners) {
    const rows = new Map();
    for (const g of groups) {
        const owner = g.source === 'runtime' ? owners.get(g.owner) : undefined;
        const keyed = by === 'model'
            ? { provider: g.provider, model: g.model }
            : by === 'day'
                ? { day: g.day }
                : by === 'name'
                    ? { name: g.name ?? owner?.name ?? '' }
                    : by === 'root'
                        ? // A craze session is its own root.
                            { rootLoopId: g.source === 'runtime' ? (owner?.root ?? g.owner) : g.owner }
                        : {};
        const key = JSON.stringify([g.source, keyed]);
        let row = rows.get(key);
        if (!row) {
            row = { source: g.source, ...keyed, calls: 0, inputTokens: '', outputTokens: '', costPicoUsd: '', unpricedCalls: 0, cost: 0n, input: 0n, output: 0n };
            rows.set(key, row);
        }
        row.calls += g.calls;
        row.unpricedCalls += g.unpricedCalls;
        row.cost += g.costPico;
        row.input += g.inputTokens;
        row.output += g.outputTokens;
    }
    const costliest = ([ka, a], [kb, b]) => (a.cost !== b.cost ? (a.cost > b.cost ? -1 : 1) : ka < kb ? -1 : ka > kb ? 1 : 0);
    // Days are a series: newest first, each day's sources costliest first.
    const newest = (a, b) => {
        const [da, db] = [a[1].day ?? '', b[1].day ?? ''];
        return da === db ? costliest(a, b) : da > db ? -1 : 1;
    };
    return [...rows.entries()]
        .sort(by === 'day' ? newest : costliest)
        .map(([, { cost, input, output, ...row }]) => ({ ...row, costPicoUsd: cost.toString(), inputTokens: input.toString(), outputTokens: output.toString() }));
}
/** The spend rows of a query, read from ClickHouse (the loops too, when folded by name or root). */
export async function readSpend(ch, q) {
    const rows = await spendRows(ch, q);
    return q.limit ? rows.slice(0, q.limit) : rows;
}
async function spendRows(ch, q) {
    const sources = q.source === 'all' ? ['runtime', 'craze'] : [q.source];
    if (q.rollups) {
        // Grouped by the --by key in ClickHouse: each group is one row, so the fold only renders and sorts them.
        return foldSpend(await rollupSpendGroups(ch, sources, q.by, { since: q.since, until: q.until }), q.by, new Map());
    }
    const groups = await spendGroups(ch, sources, { since: q.since, until: q.until });
    const owners = new Map();
    if ((q.by === 'name' || q.by === 'root') && sources.includes('runtime')) {
        for (const l of await readLoops(ch))
            owners.set(l.loopId, { name: l.name, root: l.rootLoopId });
    }
    return foldSpend(groups, q.by, owners);
}
//# sourceMappingURL=spend.js.map