import { byBytes, decimalText } from './read-values.js';
import { inListChunks, queryRows } from './sql.js';
/** loop_id IN lists per query: runtime_loop_rows_of.sql holds its list four times, and max_query_size is 262,144 bytes. */
const ROWS_OF_LIST_BYTES = 50_000;
/** Every loop of the loop runtime, by loop id. */
export async function runtimeLoopRows(ch) {
    return (await queryRows(ch, 'runtime_loop_rows')).map(loopRow);
}
/**
 * The rows runtimeLoopRows() gives these loops (those stored), by loop id,
 * read by primary key (runtime_loop_rows_of.sql), a chunk of ids per query.
 */
export async function runtimeLoopRowsOf(ch, loopIds) {
    const ids = [...new Set(loopIds)].sort(byBytes);
    const out = [];
    // Chunks of sorted ids, each answered in id order: concatenated, still in id order.
    for (const chunk of inListChunks(ids, ROWS_OF_LIST_BYTES))
        out.push(...(await queryRows(ch, 'runtime_loop_rows_of', { loop_ids: chunk })).map(loopRow));
    return out;
}
/** A RuntimeLoopRow from its JSON columns. */
export function loopRow(r) {
    return {
        loopId: r.loop_id,
        name: r.name,
        startedParent: r.started_parent,
        startedDepth: Number(r.started) === 1 ? BigInt(r.started_depth) : undefined,
        outcome: r.finished_outcome,
        error: r.finished_error,
        iterations: Number(r.iterations),
        subagentsSpawned: Number(r.subagents_spawned),
        subagentsCompleted: Number(r.subagents_completed),
        subagentsFailed: Number(r.subagents_failed),
        forkedFrom: r.forked_from,
        forkedAtSeq: BigInt(r.forked_at_seq),
        firstTime: r.first_time_text,
        lastTime: r.last_time_text,
        modelCalls: Number(r.model_calls),
        inputTokens: decimalText(r.input_tokens_sum),
        outputTokens: decimalText(r.output_tokens_sum),
        modelCostPico: decimalText(r.model_cost),
        budgetPico: decimalText(r.budget_cost),
        unverifiedModelCostPico: decimalText(r.unverified_model_cost),
    };
}
/** The parent's side of the loop tree: child loop id -> the loop that spawned it (loop_spawn_links.sql). */
export async function loopSpawnLinks(ch) {
    const rows = await queryRows(ch, 'loop_spawn_links');
    return new Map(rows.map((r) => [r.child, r.spawned_by]));
}
/** loopSpawnLinks() for the children these loops spawned (loop_spawn_links_of.sql, by primary key). */
export async function loopSpawnLinksOf(ch, spawners) {
    const links = new Map();
    for (const chunk of inListChunks([...new Set(spawners)].sort(byBytes), ROWS_OF_LIST_BYTES)) {
        for (const r of await queryRows(ch, 'loop_spawn_links_of', { loop_ids: chunk })) {
            if (!links.has(r.child))
                links.set(r.child, r.spawned_by);
        }
    }
    return links;
}
//# sourceMappingURL=loop-reads.js.map