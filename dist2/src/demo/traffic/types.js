/** What a caller asks for (options, planted problems) and what it gets back (records, expected verdicts). */
export const PLANTED_KINDS = ['mismatch', 'gap', 'fork', 'timeRegression', 'reorder', 'duplicate'];
/** About 1.5% of the loops (at least one) for each kind of problem. */
export function defaultViolationPlan(loops) {
    const n = Math.max(1, Math.ceil(loops * 0.015));
    return { mismatch: n, gap: n, fork: n, timeRegression: n, reorder: n, duplicate: n };
}
//# sourceMappingURL=types.js.map