/**
 * Times as ClickHouse DateTime text: the same on 18.16 and current versions,
 * which store an out-of-range text differently (issue 8, finding 7), so
 * agentledger clamps to 1970..2105 itself and says so.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clampDetail, outsideDateTime, parseRfc3339, toClickHouseDateTime } from '../../../src/decode/time.js';
const at = (text) => {
    const t = parseRfc3339(text);
    assert.ok(t, text);
    return t;
};
test('times inside DateTime range are written as they are, to the second, in UTC', () => {
    assert.equal(toClickHouseDateTime(at('2026-11-30T10:00:00.123456789Z')), '2026-11-30 10:00:00');
    assert.equal(toClickHouseDateTime(at('2026-11-30T10:00:00-08:00')), '2026-11-30 18:00:00');
    assert.equal(toClickHouseDateTime(at('1970-01-01T00:00:00Z')), '1970-01-01 00:00:00');
    assert.equal(toClickHouseDateTime(at('2105-12-31T23:59:59Z')), '2105-12-31 23:59:59');
    assert.equal(outsideDateTime(at('2105-12-31T23:59:59Z')), false);
    assert.equal(clampDetail('Time', '2026-11-30T10:00:00Z', at('2026-11-30T10:00:00Z')), '');
});
test('times outside 1970..2105 are clamped to its ends, with a detail naming the text', () => {
    assert.equal(toClickHouseDateTime(at('9999-12-31T23:59:59Z')), '2105-12-31 23:59:59');
    assert.equal(toClickHouseDateTime(at('2106-01-01T00:00:00Z')), '2105-12-31 23:59:59');
    assert.equal(toClickHouseDateTime(at('1969-12-31T23:59:59Z')), '1970-01-01 00:00:00');
    assert.equal(toClickHouseDateTime(at('0001-01-01T00:00:00Z')), '1970-01-01 00:00:00');
    assert.equal(clampDetail('Time', '9999-12-31T23:59:59Z', at('9999-12-31T23:59:59Z')), "Time 9999-12-31T23:59:59Z is outside DateTime's range (1970 to 2105) and is stored as 2105-12-31 23:59:59");
});
test('years below 100 are those years, not 19xx, and a leap second rolls into the next day', () => {
    const d = new Date(at('0050-06-01T00:00:00Z').seconds * 1000);
    assert.equal(d.getUTCFullYear(), 50);
    assert.ok(at('0050-06-01T00:00:00Z').seconds < at('1950-06-01T00:00:00Z').seconds);
    assert.equal(at('2016-12-31T23:59:60Z').seconds, at('2017-01-01T00:00:00Z').seconds);
    assert.equal(parseRfc3339('2026-02-30T00:00:00Z'), undefined);
});
//# sourceMappingURL=time.test.js.map