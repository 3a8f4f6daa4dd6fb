/**
 * printable(): what the CLI prints of ids and details in text mode. Nothing
 * a terminal acts on gets through, and the escaping reads back to the exact
 * string (checked with a decoder written here, over random strings).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { printable } from '../../../src/cli/terminal.js';
import { prng } from '../../support/processes.js';
/** The inverse of printable(), written independently. */
function unescape(s) {
    return s.replace(/\\(\\|n|r|t|x[0-9a-f]{2}|u[0-9a-f]{4})/g, (_, e) => e === '\\' ? '\\' : e === 'n' ? '\n' : e === 'r' ? '\r' : e === 't' ? '\t' : String.fromCharCode(parseInt(e.slice(1), 16)));
}
/** True when every code unit is safe on a terminal: no C0, DEL, C1, separators, bidi controls, unpaired surrogates. */
function terminalSafe(s) {
    for (let i = 0; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029 || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069))
            return false;
        if (c >= 0xd800 && c <= 0xdbff) {
            const next = s.charCodeAt(i + 1);
            if (!(next >= 0xdc00 && next <= 0xdfff))
                return false;
            i++;
        }
        else if (c >= 0xdc00 && c <= 0xdfff)
            return false;
    }
    return true;
}
test('printable text is unchanged', () => {
    for (const s of ['', 'loop-1', 'café ✓ 日本 𝄞 🙂', "it's \"quoted\" {x}", '\u00a0\ufeff\ufffd'])
        assert.equal(printable(s), s);
});
test('controls, separators, bidi overrides and lone surrogates are escaped; a backslash is doubled', () => {
    assert.equal(printable('a\x1b[31mred\x1b[0m'), 'a\\x1b[31mred\\x1b[0m');
    assert.equal(printable('\r\n\t\0'), '\\r\\n\\t\\x00');
    assert.equal(printable('\x7f\x85\x9b'), '\\x7f\\x85\\x9b');
    assert.equal(printable('x\u2028y\u2029z'), 'x\\u2028y\\u2029z');
    assert.equal(printable('abc\u202edef\u2066'), 'abc\\u202edef\\u2066');
    assert.equal(printable('a\ud800b\udfffc'), 'a\\ud800b\\udfffc');
    assert.equal(printable('\udc00\ud800'), '\\udc00\\ud800', 'a pair in the wrong order is two lone surrogates');
    assert.equal(printable('\ud83d\ude42'), '🙂');
    assert.equal(printable('back\\slash \\x1b'), 'back\\\\slash \\\\x1b', 'an escape-looking text stays distinct from an escape');
});
test('random strings: the output is terminal-safe and reads back exactly', () => {
    const seed = Date.now() % 1_000_000;
    const random = prng(seed);
    // Code units from the ranges that matter, plus ordinary text.
    const pools = [[0, 0x20], [0x7f, 0xa0], [0x2028, 0x202f], [0x2066, 0x206a], [0xd800, 0xe000], [0x20, 0x7f], [0x5c, 0x5d], [0x4e00, 0x4e10]];
    for (let n = 0; n < 2000; n++) {
        let s = '';
        for (let i = Math.floor(random() * 12); i > 0; i--) {
            const [lo, hi] = pools[Math.floor(random() * pools.length)];
            s += String.fromCharCode(lo + Math.floor(random() * (hi - lo)));
        }
        const out = printable(s);
        assert.ok(terminalSafe(out), `seed ${seed}: ${JSON.stringify(s)} -> ${JSON.stringify(out)}`);
        assert.equal(unescape(out), s, `seed ${seed}: ${JSON.stringify(s)}`);
    }
});
//# sourceMappingURL=terminal.test.js.map