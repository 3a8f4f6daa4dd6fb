/**
 * The snapshot's layout (src/migrate/schema-snapshot.ts) changes
 * whitespace only, never quoted text, and gives a column list one line each.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { layOut } from '../../../src/migrate/schema-snapshot.js';

const VIEW =
  "CREATE VIEW v ( a String,  b Decimal(38, 0),  t DateTime('UTC')) AS SELECT a, b, t FROM (SELECT a, sum(b) AS b, max(t) AS t FROM x FINAL WHERE a != ', FROM y WHERE (' GROUP BY a) AS s ANY LEFT JOIN (SELECT a FROM z) AS w USING (a) WHERE a IN ('UNION ALL') ORDER BY a";

test('only whitespace moves: the statement without whitespace is the same', () => {
  const strip = (s: string): string => s.replace(/\s+/g, '');
  assert.equal(strip(layOut(VIEW)), strip(VIEW));
});

test('quoted text is copied as it is, keywords inside it start no line', () => {
  const out = layOut(VIEW);
  assert.ok(out.includes("a != ', FROM y WHERE (' GROUP BY a".split(' GROUP')[0]!), out);
  assert.ok(out.includes("IN ('UNION ALL')"), out);
  assert.ok(!out.split('\n').some((l) => /^\s*(FROM y|UNION ALL')/.test(l)), out);
});

test('one column per line, the types whole; one clause per line, indented by depth', () => {
  const lines = layOut(VIEW).split('\n');
  assert.deepEqual(lines.slice(0, 5), ['CREATE VIEW v (', '    a String,', '    b Decimal(38, 0),', "    t DateTime('UTC')", ')']);
  assert.ok(lines.includes('AS SELECT a, b, t'), lines.join('\n'));
  assert.ok(lines.includes('    FROM x FINAL'), lines.join('\n'));
  assert.ok(lines.includes('ANY LEFT JOIN ('), lines.join('\n'));
  assert.ok(lines.includes('ORDER BY a'), lines.join('\n'));
});
