/**
 * Order of a craze incarnation's events (docs/input-contracts.md §2): seq is contiguous from
 * 1 per (session, incarnation). A pure function of (the incarnation's head,
 * the seq, whether that seq is stored already); the state lives at the edge.
 */
/**
 * - at or below the head and stored already: a redelivery, dropped;
 * - at or below the head and never stored: late (kept, not used for spend);
 * - head + 1: ok; beyond it: a gap (the events between are missing).
 */
export function checkCrazeSeq(headSeq, seq, stored) {
    if (seq <= headSeq) {
        if (stored)
            return { verdict: 'duplicate', detail: '' };
        return { verdict: 'late', detail: `seq ${seq} arrived after seq ${headSeq}; stored, not used for spend` };
    }
    const expected = headSeq + 1;
    return seq === expected ? { verdict: 'ok', detail: '' } : { verdict: 'gap', detail: `expected seq ${expected}, got ${seq}` };
}
//# sourceMappingURL=craze-seq.js.map