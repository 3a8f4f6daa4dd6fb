/** What the tests of the rollups compare: the committed hours against the live view. */
import { query } from './clickhouse.js';
/** Per committed hour, calls and cost of each rollup reader view and of the live view: every mismatch found. */
export async function rollupMismatches(ctx) {
    const read = async (view) => new Map((await query(ctx, `SELECT toString(hour) AS h, concat(toString(sum(calls_sum)), ' ', toString(sum(cost_pico_sum))) AS v FROM ${view}
           WHERE hour IN (SELECT hour FROM rollup_commits) GROUP BY hour`)).map((r) => [r.h, r.v]));
    const live = new Map();
    for (const r of await query(ctx, 'SELECT toString(hour) AS h, toString(calls) AS n, cost_pico_usd AS c FROM spend_by_hour')) {
        const [n, c] = live.get(r.h) ?? [0n, 0n];
        live.set(r.h, [n + BigInt(r.n), c + BigInt(r.c)]);
    }
    const out = [];
    for (const view of ['spend_rollup_hourly', 'spend_rollup_root_hourly', 'spend_rollup_model_hourly']) {
        for (const [h, v] of await read(view)) {
            const [n, c] = live.get(h) ?? [0n, 0n];
            if (v !== `${n} ${c}`)
                out.push(`${view} ${h}: ${v}, live ${n} ${c}`);
        }
    }
    return out;
}
//# sourceMappingURL=rollup-check.js.map