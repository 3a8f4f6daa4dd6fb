import assert from 'node:assert/strict';
import { test } from 'node:test';
import { picoToUsdText, usdTextToPico } from '../../../src/money/picodollars.js';
test('USD text converts to picodollars exactly, from the decimal text', () => {
    const cases = [
        ['0', 0n],
        ['1', 1000000000000n],
        ['12.5', 12500000000000n],
        ['1e-7', 100000n],
        ['1e-12', 1n],
        ['1E-12', 1n],
        ['0.000123', 123000000n],
        ['0.30000000000000004', 300000000000n],
        ['9007.199254740993', 9007199254740993n],
        ['9223372.036854775807', 9223372036854775807n],
        ['1.5e3', 1500000000000000n],
        ['-2.25', -2250000000000n],
    ];
    for (const [text, pico] of cases)
        assert.equal(usdTextToPico(text), pico, text);
});
test('rounding at 10^-12 is half to even', () => {
    assert.equal(usdTextToPico('0.0000000000005'), 0n); // 0.5 pico -> 0 (even)
    assert.equal(usdTextToPico('0.0000000000015'), 2n); // 1.5 -> 2
    assert.equal(usdTextToPico('0.0000000000025'), 2n); // 2.5 -> 2
    assert.equal(usdTextToPico('0.00000000000250001'), 3n);
    assert.equal(usdTextToPico('0.0000000000024999'), 2n);
    assert.equal(usdTextToPico('5e-13'), 0n);
    assert.equal(usdTextToPico('1.5e-12'), 2n);
    assert.equal(usdTextToPico('-0.0000000000015'), -2n);
});
test('non-numbers are refused, and formatting back is exact', () => {
    for (const bad of ['', 'NaN', '1.', '.5', '0x10', '1e', 'Infinity', '1e999999999999'])
        assert.equal(usdTextToPico(bad), undefined, bad);
    assert.equal(picoToUsdText(9223372036854775807n), '9223372.036854775807');
    assert.equal(picoToUsdText(-1n), '-0.000000000001');
    assert.equal(picoToUsdText(123000000n), '0.000123000000');
});
test('hostile exponents and digit runs give an answer at once, without building a giant string', () => {
    // Before the fix, 1e-600000000 threw "Invalid string length" (a padStart to 600M characters).
    assert.equal(usdTextToPico('1e-600000000'), 0n);
    assert.equal(usdTextToPico('0e-999999999999'), 0n);
    assert.equal(usdTextToPico('-7e-400000000'), -0n);
    assert.equal(usdTextToPico('1e-99999999999999999999'), 0n);
    assert.equal(usdTextToPico('1e600000000'), undefined);
    assert.equal(usdTextToPico('1e99999999999999999999'), undefined);
    assert.equal(usdTextToPico('9'.repeat(1_000_000)), undefined);
    assert.equal(usdTextToPico(`0.${'0'.repeat(1_000_000)}1`), 0n);
    assert.equal(usdTextToPico(`${'0'.repeat(100_000)}1.5e-12`), 2n);
    // Just above and below the edge where the shortcut starts.
    assert.equal(usdTextToPico('6e-13'), 1n);
    assert.equal(usdTextToPico('9e-14'), 0n);
});
//# sourceMappingURL=picodollars.test.js.map