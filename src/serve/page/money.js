/*
 * Exact money for the page: amounts arrive as decimal strings of integer
 * picodollars (10^-12 USD) and are added and shown with BigInt, never through
 * a float, so a table shows every digit the API sent. Only the charts plot
 * floats (toFloatUsd); their legends and every table show this file's text.
 *
 * A plain script (no module) so the page loads it with a <script> tag and the
 * unit test (test/unit/serve/money.test.ts) runs it in node:vm: both find it
 * at globalThis.agentledgerMoney.
 */
'use strict';
(function attach(root) {
  var PICO_DIGITS = 12;
  var DECIMAL = /^-?\d+$/;

  /** A picodollar string as BigInt; anything else is a programming error, thrown. */
  function big(pico) {
    var text = String(pico);
    if (!DECIMAL.test(text)) throw new TypeError('not a decimal string of picodollars: ' + JSON.stringify(text).slice(0, 60));
    return BigInt(text);
  }

  /** a + b, exact. */
  function add(a, b) {
    return (big(a) + big(b)).toString();
  }

  /** The sum of a list of picodollar strings, exact ("0" for none). */
  function sum(list) {
    var total = BigInt(0);
    for (var i = 0; i < list.length; i++) total += big(list[i]);
    return total.toString();
  }

  /** -1, 0 or 1 as a < b, a = b, a > b. */
  function compare(a, b) {
    var x = big(a);
    var y = big(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }

  /** Groups an integer's digits by three with commas: 1234567 -> 1,234,567. */
  function group(digits) {
    var out = '';
    for (var i = 0; i < digits.length; i++) {
      if (i > 0 && (digits.length - i) % 3 === 0) out += ',';
      out += digits[i];
    }
    return out;
  }

  /**
   * Picodollars as USD text with every digit that matters: the whole dollars
   * grouped by three, then the twelve decimals with trailing zeros dropped
   * down to cents ("$25.756094866432", "$3.10", "-$0.000000000001"). Never
   * rounded: it reads back to the same picodollars (parseUsd).
   */
  function formatUsd(pico) {
    var v = big(pico);
    var negative = v < BigInt(0);
    var digits = (negative ? -v : v).toString().padStart(PICO_DIGITS + 1, '0');
    var whole = digits.slice(0, digits.length - PICO_DIGITS);
    var frac = digits.slice(digits.length - PICO_DIGITS).replace(/0+$/, '');
    while (frac.length < 2) frac += '0';
    return (negative ? '-' : '') + '$' + group(whole) + '.' + frac;
  }

  /** formatUsd's text back to picodollars (the tests' inverse; commas and $ ignored). */
  function parseUsd(text) {
    var m = /^(-?)\$([\d,]+)\.(\d{1,12})$/.exec(String(text));
    if (!m) throw new TypeError('not USD text: ' + JSON.stringify(String(text)).slice(0, 60));
    var v = BigInt(m[2].replace(/,/g, '') + m[3].padEnd(PICO_DIGITS, '0'));
    return (m[1] === '-' ? -v : v).toString();
  }

  /** Approximate USD as a float, for plotting only. */
  function toFloatUsd(pico) {
    var v = big(pico);
    var unit = BigInt(1000000);
    // Micro-dollars first (exact while below 2^53 µ$, ~$9e9), then a float division.
    return Number(v / unit) / 1e6 + Number(v % unit) / 1e12;
  }

  root.agentledgerMoney = Object.freeze({ add: add, sum: sum, compare: compare, formatUsd: formatUsd, parseUsd: parseUsd, toFloatUsd: toFloatUsd });
})(globalThis);
