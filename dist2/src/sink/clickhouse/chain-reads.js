import { limitParam } from './read-values.js';
import { queryRows } from './sql.js';
/**
 * Envelopes and loops per verdict, by verdict name, as `envelopes FINAL` counts
 * them (chain_summary_now.sql): from the chain flags the rollup sweep keeps
 * (0021) for the loops not stored since its mark, by primary key for the
 * others, so neither FINAL nor a read of every envelope's key columns.
 */
export async function verdictCounts(ch) {
    const rows = await queryRows(ch, 'chain_summary_now');
    return rows.map((r) => ({ verdict: r.verdict, envelopes: BigInt(r.envelopes), loops: BigInt(r.loops) }));
}
/** The `limit` chain violations ingested last, newest first. */
export async function latestViolations(ch, limit) {
    const rows = await queryRows(ch, 'chain_violations_latest', {
        limit: limitParam(limit),
    });
    return rows.map((r) => ({ loopId: r.loop_id, seq: BigInt(r.seq), verdict: r.verdict, detail: r.detail, time: r.time_text }));
}
//# sourceMappingURL=chain-reads.js.map