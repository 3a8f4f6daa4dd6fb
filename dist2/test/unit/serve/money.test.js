/**
 * src/serve/page/money.js, the page's exact money, loaded as the browser
 * loads it (a plain script) in a node:vm context: sums of picodollar strings
 * past 2^64 and 10^21, and USD text that keeps every digit and reads back.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createContext, runInContext } from 'node:vm';
import { picoToUsdText } from '../../../src/money/picodollars.js';
const FILE = fileURLToPath(new URL('../../../../src/serve/page/money.js', import.meta.url));
function load() {
    const sandbox = {};
    createContext(sandbox);
    runInContext(readFileSync(FILE, 'utf8'), sandbox, { filename: FILE });
    assert.ok(sandbox.agentledgerMoney, 'money.js attaches globalThis.agentledgerMoney');
    return sandbox.agentledgerMoney;
}
const money = load();
test('add and sum are exact past 2^64 and 10^21 picodollars', () => {
    assert.equal(money.add('18446744073709551615', '1'), '18446744073709551616');
    assert.equal(money.add('-5', '3'), '-2');
    assert.equal(money.sum([]), '0');
    const big = ['999999999999999999999', '1', '123456789012345678901234567890'];
    assert.equal(money.sum(big), (999999999999999999999n + 1n + 123456789012345678901234567890n).toString());
    assert.equal(money.compare('100000000000000000001', '100000000000000000000'), 1);
    assert.equal(money.compare('-1', '0'), -1);
    assert.equal(money.compare('7', '7'), 0);
});
test('formatUsd keeps every digit, trims trailing zeros to cents, groups dollars', () => {
    const cases = [
        ['0', '$0.00'],
        ['1', '$0.000000000001'],
        ['-1', '-$0.000000000001'],
        ['3100000000000', '$3.10'],
        ['25756094866432', '$25.756094866432'],
        ['1000000000000000', '$1,000.00'],
        ['25379945632745848280', '$25,379,945.63274584828'],
        ['123456789012345678901234567890', '$123,456,789,012,345,678.90123456789'],
    ];
    for (const [pico, text] of cases)
        assert.equal(money.formatUsd(pico), text, pico);
});
test('formatUsd reads back to the same picodollars, and agrees with the CLI\'s USD text', () => {
    let x = 1n;
    for (let i = 0; i < 200; i++) {
        x = (x * 6364136223846793005n + 1442695040888963407n) % 10n ** BigInt(1 + (i % 38));
        for (const v of [x, -x]) {
            const pico = v.toString();
            assert.equal(money.parseUsd(money.formatUsd(pico)), pico);
            // The CLI writes all 12 decimals without grouping: the same amount.
            const cli = picoToUsdText(v);
            assert.equal(money.parseUsd(`${cli.startsWith('-') ? '-' : ''}$${cli.replace(/^-/, '')}`), pico);
        }
    }
});
test('anything but a decimal string of picodollars is refused, not guessed', () => {
    // The vm context has its own TypeError: matched by name.
    const typeError = (e) => e.name === 'TypeError' && /not a decimal string/.test(e.message);
    for (const bad of ['1.5', '1e3', '', ' 1', '0x10', 'NaN', '--1'])
        assert.throws(() => money.formatUsd(bad), typeError, bad);
    assert.throws(() => money.add('1', '2.0'), typeError);
});
test('toFloatUsd is close (plots only)', () => {
    assert.equal(money.toFloatUsd('25756094866432'), 25.756094866432);
    assert.ok(Math.abs(money.toFloatUsd('25379945632745848280') - 25379945.63274585) < 1e-6);
});
//# sourceMappingURL=money.test.js.map