/**
 * Deterministic loop-runtime traffic (docs/input-contracts.md §1) for demos, benchmarks and
 * tests: hash-chained Envelopes encoded as Go's encoding/json writes them,
 * interleaved across loops as one topic would carry them (per-loop order
 * kept), with planted violations and the verdicts the verifier must report.
 *
 * Everything comes from a seeded PRNG (mulberry32): the same options give the
 * same bytes. The generator hashes with its own few lines of SHA-256 and never
 * calls the verifier, so a test that runs the output through the verifier
 * checks one against the other.
 */
import { interleave } from './interleave.js';
import { expectedOf, makePlan } from './plan.js';
/**
 * Generates loop-runtime traffic. The planted problems and the verdicts they
 * must get follow the verifier's rules (src/verify/chain.ts); the records are
 * produced lazily, in topic order.
 */
export function generateTraffic(opts) {
    const plan = makePlan(opts);
    const payloadBytes = opts.payloadBytes ?? 1024;
    if (!Number.isFinite(payloadBytes) || payloadBytes < 0)
        throw new RangeError(`payloadBytes must be >= 0, got ${payloadBytes}`);
    const seed = opts.seed;
    return {
        records: { [Symbol.iterator]: () => interleave(plan, seed, payloadBytes) },
        expected: expectedOf(plan),
    };
}
//# sourceMappingURL=generate.js.map