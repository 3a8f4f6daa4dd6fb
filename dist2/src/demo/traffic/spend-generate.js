/**
 * Loop-runtime spend traffic (issue 10) for demos and tests: loop trees with
 * sub-agents, forks, model calls across providers priced in float64 USD,
 * budget charges, failing sub-agents, a whale model past 2^64 picodollars,
 * trees arriving child-first and parent-first, redeliveries, one tampered
 * ModelCalled and one second version, with the exact totals they must add up
 * to (spend-expected.ts), folded from the texts written, never from the ledger.
 *
 * Deterministic: the same options give the same bytes. Everything is built
 * at once (a few hundred envelopes by default; `roots` and `iterations` scale it).
 */
import { mixSeed, mulberry32 } from './prng.js';
import { buildEvents } from './spend-events.js';
import { expectedSpend } from './spend-expected.js';
import { makeSpendPlan } from './spend-plan.js';
import { spendRecords } from './spend-records.js';
export function generateSpendTraffic(opts) {
    const plan = makeSpendPlan(opts);
    // A second stream for times and arrivals, so the plan's draws do not shift with them.
    const rng = mulberry32(mixSeed(opts.seed, 0x5e9d));
    const built = buildEvents(plan, rng);
    const { records, written } = spendRecords(plan, built, rng);
    return { records, expected: expectedSpend(plan, written) };
}
//# sourceMappingURL=spend-generate.js.map