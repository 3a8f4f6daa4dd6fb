/**
 * How far apart two members' clocks (and a flush's stamp and its commit) may
 * be: read-backs look at rows inserted since (last commit's stamp − this).
 */
export const CLOCK_SLACK_SECONDS = 15 * 60;
/** The oldest insert time (Unix seconds) a read-back after a commit dated `metadata` must look at; 0: all. */
export const sinceOf = (metadata) => {
    const stamp = Number(metadata);
    return metadata && Number.isSafeInteger(stamp) && stamp > CLOCK_SLACK_SECONDS ? stamp - CLOCK_SLACK_SECONDS : 0;
};
export const emptyPending = () => ({
    rows: new Map(),
    deadLetters: [],
    positions: new Map(),
    since: 0,
    count: 0,
    bytes: 0,
    stamp: undefined,
    stampSeconds: 0,
    landed: new Set(),
    tried: new Map(),
    records: new Map(),
    rebuild: new Set(),
    starts: new Map(),
    sealed: new Map(),
    dropped: false,
});
/**
 * The insert bytes a batch of records adds, over-estimated from the records
 * themselves (cheaper than measuring every row): a row holds its record's
 * text at most twice as long once JSON-escaped, plus columns and state.
 */
function insertBytes(records) {
    let n = 0;
    for (const r of records)
        n += 2 * (r.value?.length ?? 0) + 1024;
    return n;
}
/** Adds a batch's judged records (kept for a refused row's dead letter), rows and dead letters to the buffer. */
export function buffer(p, stream, records, outcome) {
    const kept = p.records.get(stream);
    if (kept)
        for (const r of records)
            kept.push(r);
    else
        p.records.set(stream, [...records]);
    let rows = p.rows.get(stream);
    if (!rows)
        p.rows.set(stream, (rows = []));
    for (const row of outcome.rows)
        rows.push(row);
    p.bytes += insertBytes(records);
    p.count += outcome.rows.length + outcome.deadLetters.length;
    p.deadLetters.push(...outcome.deadLetters);
}
/** A record's place in its topic, as a map key. */
export const recordKey = (partition, offset) => `${partition}:${offset}`;
//# sourceMappingURL=pending.js.map