/**
 * The plan drawn from the seed before any record is made: each loop's id, size
 * and start, the planted problem of some loops, and what the verifier must
 * report for it.
 */
import { chance, int, mulberry32 } from './prng.js';
import { parseUtcNanos } from './time.js';
import { PLANTED_KINDS } from './types.js';
const POSITIONS = ['middle', 'first', 'last'];
/** The seq a problem is planted at, for a loop of n envelopes (n >= 3). */
function plantedSeq(kind, n, position, rng) {
    // Usable range of k per kind.
    const [lo, hi] = kind === 'gap' || kind === 'reorder' ? [1, n - 1] : kind === 'timeRegression' ? [2, n] : [1, n];
    if (position === 'first')
        return lo;
    if (position === 'last')
        return hi;
    return hi - lo >= 2 ? int(rng, lo + 1, hi - 1) : lo;
}
export function makePlan(opts) {
    const { loops, envelopesPerLoop, seed } = opts;
    if (!Number.isSafeInteger(loops) || loops < 1)
        throw new RangeError(`loops must be a whole number >= 1, got ${loops}`);
    const [min, max] = typeof envelopesPerLoop === 'number' ? [envelopesPerLoop, envelopesPerLoop] : envelopesPerLoop;
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min < 1 || max < min) {
        throw new RangeError(`envelopesPerLoop must be a whole number >= 1 or [min, max] with 1 <= min <= max, got ${JSON.stringify(envelopesPerLoop)}`);
    }
    const rng = mulberry32(seed);
    const width = Math.max(5, String(loops).length);
    const start = parseUtcNanos(opts.startTime ?? '2026-11-30T10:00:00Z');
    // Loops start over a window of 200 ms per loop, so a few dozen run at once.
    const windowNs = loops * 200_000_000;
    const base = Array.from({ length: loops }, (_, index) => ({
        index,
        loopId: `demo-s${seed}-${String(index + 1).padStart(width, '0')}`,
        n: int(rng, min, max),
        startNs: start + BigInt(Math.floor(rng() * windowNs)),
    }));
    const plan = base;
    const wanted = PLANTED_KINDS.flatMap((k) => {
        const count = opts.violations?.[k] ?? 0;
        if (!Number.isSafeInteger(count) || count < 0)
            throw new RangeError(`violations.${k} must be a whole number >= 0, got ${count}`);
        return Array.from({ length: count }, (_, i) => ({ kind: k, position: POSITIONS[i % POSITIONS.length] }));
    });
    if (wanted.length === 0)
        return plan;
    // Distinct loops of at least 3 envelopes, chosen by a partial shuffle.
    const eligible = base.filter((l) => l.n >= 3).map((l) => l.index);
    if (eligible.length < wanted.length) {
        throw new RangeError(`${wanted.length} planted problems need as many loops of >= 3 envelopes; there are ${eligible.length}`);
    }
    for (let i = 0; i < wanted.length; i++) {
        const j = i + Math.floor(rng() * (eligible.length - i));
        [eligible[i], eligible[j]] = [eligible[j], eligible[i]];
        const loop = base[eligible[i]];
        const { kind, position } = wanted[i];
        plan[loop.index] = {
            ...loop,
            planted: {
                kind,
                seq: plantedSeq(kind, loop.n, position, rng),
                later: int(rng, 0, 3),
                backNs: BigInt(chance(rng, 0.3) ? 1 : int(rng, 2, 1_000_000_000)),
            },
        };
    }
    return plan;
}
export function expectedOf(plan) {
    const loops = [];
    const violations = [];
    const stored = [];
    let envelopes = 0;
    let records = 0;
    let duplicates = 0;
    for (const p of plan) {
        const k = p.planted?.seq ?? 0;
        const kind = p.planted?.kind;
        const deleted = kind === 'gap' ? k : 0;
        const loopEnvelopes = p.n - (deleted ? 1 : 0);
        const loopRecords = loopEnvelopes + (kind === 'fork' || kind === 'duplicate' ? 1 : 0);
        loops.push(p.planted ? { loopId: p.loopId, envelopes: loopEnvelopes, records: loopRecords, planted: { kind: p.planted.kind, seq: k } } : { loopId: p.loopId, envelopes: loopEnvelopes, records: loopRecords });
        envelopes += loopEnvelopes;
        records += loopRecords;
        for (let seq = 1; seq <= p.n; seq++)
            if (seq !== deleted)
                stored.push({ loopId: p.loopId, seq });
        switch (kind) {
            case 'mismatch':
                violations.push({ loopId: p.loopId, seq: k, verdict: 'mismatch' });
                break;
            case 'gap':
                violations.push({ loopId: p.loopId, seq: k + 1, verdict: 'gap' });
                break;
            case 'fork':
                violations.push({ loopId: p.loopId, seq: k, verdict: 'fork' });
                break;
            case 'timeRegression':
                violations.push({ loopId: p.loopId, seq: k, verdict: 'time_regression' });
                break;
            case 'reorder':
                violations.push({ loopId: p.loopId, seq: k, verdict: 'regression' }, { loopId: p.loopId, seq: k + 1, verdict: 'gap' });
                break;
            case 'duplicate':
                duplicates++;
                break;
            case undefined:
                break;
        }
    }
    const byKey = (a, b) => a.loopId === b.loopId ? a.seq - b.seq : a.loopId < b.loopId ? -1 : 1;
    violations.sort(byKey);
    stored.sort(byKey);
    return { loops, envelopes, records, duplicates, violations, stored };
}
//# sourceMappingURL=plan.js.map