/**
 * The query files' macro `decimal_text(d)` (src/clickhouse/sql.ts):
 * what it expands to, that it is the only way a query file writes a sum as
 * text, and that test/modern/check_sql.py, which runs the files on current
 * ClickHouse, expands it to the same text. Its exactness on a real 18.16 is
 * test/integration/decimal-text.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { decimalTextSql, expandIncludes, expandQuery } from '../../../src/clickhouse/sql.js';
import { queryFiles, queryPath, querySql } from '../../support/query-files.js';

const CHECK_SQL = fileURLToPath(new URL('../../../../test/modern/check_sql.py', import.meta.url));
const E18 = "toDecimal128('1000000000000000000', 0)";

test('decimal_text(d) expands to the two pieces below 10^20, each written by toString', () => {
  assert.equal(
    expandQuery('SELECT decimal_text(cost) AS cost_text, decimal_text(x1)'),
    `SELECT ${decimalTextSql('cost')} AS cost_text, ${decimalTextSql('x1')}`,
  );
  assert.equal(
    decimalTextSql('d'),
    `if(abs(d) < ${E18}, toString(d - intDiv(d, ${E18}) * ${E18}), concat(toString(intDiv(d, ${E18})), substring(toString(abs(d - intDiv(d, ${E18}) * ${E18}) + ${E18}), 2)))`,
  );
  // Only a column or alias: anything else is left as it is, and ClickHouse refuses the unknown function.
  assert.equal(expandQuery('decimal_text(a + b)'), 'decimal_text(a + b)');
  assert.equal(expandQuery('my_decimal_text(a)'), 'my_decimal_text(a)');
});

test('check_sql.py expands decimal_text() to the same text as querySql()', () => {
  const py = readFileSync(CHECK_SQL, 'utf8');
  const e18 = /^E18 = "(.*)"$/m.exec(py)?.[1];
  const template = /^DECIMAL_TEXT_TEMPLATE = \(\n((?:\s+".*"\n)+)\)/m.exec(py)?.[1];
  assert.ok(e18 !== undefined && template !== undefined, 'check_sql.py defines E18 and DECIMAL_TEXT_TEMPLATE');
  const pieces = [...template.matchAll(/"(.*)"/g)].map((m) => m[1]!).join('');
  assert.equal(pieces.replaceAll('{d}', 'd').replaceAll('{e18}', e18), decimalTextSql('d'));
  assert.match(py, /concrete = substitute\(expand_query\(sql, fragments\), params\)/, 'it expands before it runs a file');
});

test('every query file writes a sum as text through decimal_text() only (its fragments included)', () => {
  const files = queryFiles();
  let uses = 0;
  for (const file of files) {
    const text = readFileSync(queryPath(file), 'utf8');
    const body = expandIncludes(
      text
        .split('\n')
        .filter((l) => !l.trimStart().startsWith('--'))
        .join('\n'),
    );
    uses += (body.match(/\bdecimal_text\(/g) ?? []).length;
    assert.doesNotMatch(body, /substring\(toString\(abs\(/, `${file}: the expression written out (use decimal_text())`);
    assert.doesNotMatch(body, /\bAS \w+_(hi|lo)\b/, `${file}: a sum in hi/lo pieces (use decimal_text())`);
    assert.ok(!querySql(file.replace(/\.sql$/, '')).includes('decimal_text('), `${file}: decimal_text() of something other than a column or alias`);
  }
  assert.ok(uses >= 40, `${uses} uses`);
});
