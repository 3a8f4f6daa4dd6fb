/**
 * The query files' macro `include(name)` (src/clickhouse/sql.ts,
 * expandIncludes): a named piece of SQL from queries/fragments/, each line
 * after the first indented as the include's line, fragments within
 * fragments; that every fragment is a piece (no statement, no parameter of
 * its own) some query file includes; and that test/modern/check_sql.py, which
 * runs the files on current ClickHouse, expands every query file to the text
 * querySql() sends.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { expandIncludes, expandQuery } from '../../../src/clickhouse/sql.js';
import { FRAGMENTS_DIR, queryFiles, queryPath, querySql } from '../../support/query-files.js';

const MODERN_DIR = fileURLToPath(new URL('../../../../test/modern/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

const pieces: Record<string, string> = {
  cond: "-- a comment line, dropped\nkind = 'a'\nAND seq > 0\n",
  join: 'ANY LEFT JOIN\n(\n    SELECT loop_id, 1 AS one\n    WHERE include(cond)\n) AS ones USING loop_id',
  loop: 'SELECT include(loop)',
  statement: 'SELECT 1;',
};
const fragment = (name: string): string => {
  const text = pieces[name];
  if (text === undefined) throw new Error(`no fragment ${name}`);
  return text;
};

test('include(name) puts the fragment there, its later lines indented as the include line', () => {
  assert.equal(expandIncludes('SELECT *\nFROM t\n    WHERE include(cond)', fragment), "SELECT *\nFROM t\n    WHERE kind = 'a'\n    AND seq > 0");
  // Within a fragment: indented by both lines, and text after the include stays after it.
  assert.equal(
    expandIncludes('  include(join)\n  WHERE x', fragment),
    "  ANY LEFT JOIN\n  (\n      SELECT loop_id, 1 AS one\n      WHERE kind = 'a'\n      AND seq > 0\n  ) AS ones USING loop_id\n  WHERE x",
  );
  assert.equal(expandIncludes('f(include(cond)) AS x', fragment), "f(kind = 'a'\nAND seq > 0) AS x");
  assert.equal(expandIncludes('no_include(cond) AND includes', fragment), 'no_include(cond) AND includes');
});

test('a fragment that includes itself, a statement and a missing fragment are refused', () => {
  assert.throws(() => expandIncludes('include(loop)', fragment), /fragment loop includes itself/);
  assert.throws(() => expandIncludes('include(statement)', fragment), /fragment statement: empty, or a statement/);
  assert.throws(() => expandIncludes('include(nothing)', fragment), /no fragment nothing/);
  // expandQuery: includes first, then decimal_text() in what they brought.
  assert.match(expandQuery('include(d)', () => 'decimal_text(cost)'), /^if\(abs\(cost\) < /);
});

test('every fragment is a piece some query file includes, with no parameter line of its own', () => {
  const files = queryFiles();
  const included = new Set<string>();
  const fragments = readdirSync(FRAGMENTS_DIR).filter((f) => f.endsWith('.sql'));
  for (const file of [...files.map(queryPath), ...fragments.map((f) => `${FRAGMENTS_DIR}${f}`)]) {
    const body = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => !l.trimStart().startsWith('--'))
      .join('\n');
    for (const [, name] of body.matchAll(/\binclude\((\w+)\)/g)) included.add(name!);
  }
  assert.ok(fragments.length > 0, 'queries/fragments/ holds the fragments');
  for (const f of fragments) {
    const name = f.replace(/\.sql$/, '');
    const text = readFileSync(`${FRAGMENTS_DIR}${f}`, 'utf8');
    assert.ok(included.has(name), `${f}: no query file includes it`);
    assert.doesNotMatch(text, /^\s*--\s*param:/m, `${f}: a fragment uses its includers' parameters`);
    assert.match(text, /^--/, `${f}: a comment says what it is`);
  }
  for (const file of files) assert.doesNotMatch(querySql(file.replace(/\.sql$/, '')), /\binclude\(/, file);
});

test('check_sql.py expands every query file to the text querySql() gives', (t) => {
  const files = queryFiles();
  const script = [
    'import json, sys',
    `sys.path.insert(0, ${JSON.stringify(MODERN_DIR)})`,
    'from pathlib import Path',
    'import check_sql',
    `root = Path(${JSON.stringify(ROOT)})`,
    'out = {}',
    'for name, path in json.loads(sys.stdin.read()).items():',
    '    [sql] = check_sql.split_statements(Path(path).read_text(encoding="utf-8"))',
    '    out[name] = check_sql.expand_query(sql, root / check_sql.FRAGMENTS)',
    'print(json.dumps(out))',
  ].join('\n');
  const run = spawnSync('python3', ['-c', script], { input: JSON.stringify(Object.fromEntries(files.map((f) => [f, queryPath(f)]))), encoding: 'utf8', maxBuffer: 64 << 20 });
  if (run.error && (run.error as NodeJS.ErrnoException).code === 'ENOENT') {
    t.skip('no python3 on this machine (test/modern runs check_sql.py itself)');
    return;
  }
  assert.equal(run.status, 0, run.stderr);
  const py = JSON.parse(run.stdout) as Record<string, string>;
  let withIncludes = 0;
  for (const file of files) {
    const name = file.replace(/\.sql$/, '');
    if (readFileSync(queryPath(file), 'utf8').includes('include(')) withIncludes++;
    assert.equal(py[file], querySql(name), file);
  }
  assert.ok(withIncludes > 0, 'some query file includes a fragment');
});
