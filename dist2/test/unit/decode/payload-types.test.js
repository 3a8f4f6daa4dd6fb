/**
 * The hand check of payload member types, which the hot path runs instead of
 * zod, against zod's schema: for every kind, every member and a spread of
 * values, both must take and refuse the same payloads.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { handCheckTakes, KIND_NAMES, schemaTakes } from '../../../src/decode/payloads.js';
/** Every member name of the seed's payload structs (the kinds' own and others'). */
const MEMBERS = ['name', 'initial_state', 'seed', 'config_hash', 'parent_id', 'depth', 'iteration', 'action_id', 'action_type', 'action_payload',
    'decision', 'capability', 'tool', 'reason', 'request', 'response', 'usage', 'provider', 'model', 'duration_ms', 'args', 'result', 'is_error',
    'idempotency_key', 'tokens', 'usd', 'wall_clock_ms', 'iterations', 'strategy', 'plan_json', 'dropped_from', 'dropped_to', 'summary_ref', 'detector',
    'count', 'prompt', 'seq', 'state_hash', 'source_loop_id', 'at_seq', 'child_loop_id', 'definition', 'outcome_kind', 'resp_json', 'error',
    'child_spend', 'total_spend'];
const VALUES = [
    undefined, null, '', 'text', true, false, 0, 1, -1, 1.5, -0.5, 2 ** 60, -(2 ** 60), 1e300,
    {}, [], [1], { in: 1 }, { in: 1.5 }, { out: -2 }, { cost_usd: 0.25 }, { cost_usd: '0.25' }, { in: 1, out: 2, cost_usd: 1e-7 }, { extra: 'x' },
];
test('the hand check takes exactly the payloads zod takes, member by member and kind by kind', () => {
    let compared = 0;
    for (const kind of KIND_NAMES) {
        assert.equal(handCheckTakes(kind, {}), schemaTakes(kind, {}), `${kind} {}`);
        const fields = ['unknown_member', ...MEMBERS];
        for (const field of fields) {
            for (const value of VALUES) {
                const payload = JSON.parse(JSON.stringify({ [field]: value }));
                assert.equal(handCheckTakes(kind, payload), schemaTakes(kind, payload), `${kind}.${field} = ${JSON.stringify(value)}`);
                compared++;
            }
        }
    }
    assert.ok(compared > 18 * MEMBERS.length * VALUES.length, `${compared} payloads compared`);
});
//# sourceMappingURL=payload-types.test.js.map