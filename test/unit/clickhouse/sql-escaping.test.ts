/**
 * ClickHouse 18.16 has no query parameters, so quoteString(), quoteIdent() and
 * renderSql() are the only thing between a value and the SQL text. Every
 * expectation here is the exact text sent; the round trip through a real
 * server is test/integration/sql-escaping.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { quoteIdent, quoteString } from '../../../src/clickhouse/client.js';
import { inListChunks, renderSql } from '../../../src/clickhouse/sql.js';
import { querySql } from '../../../src/store/queries.js';
import { readStringLiteral } from '../../support/clickhouse-literal.js';

/** quoteString's output is one literal, spanning all of it, holding exactly the input. */
function assertOneLiteral(value: string): void {
  const quoted = quoteString(value);
  const read = readStringLiteral(quoted);
  assert.equal(read.end, quoted.length, 'the literal ends at the last character');
  assert.ok(read.value === value, 'the literal holds the input exactly');
}

test('quoteString escapes quotes and backslashes, nothing else', () => {
  const cases: [string, string][] = [
    ['', "''"],
    ['abc', "'abc'"],
    ["it's", "'it\\'s'"],
    ["''", "'\\'\\''"],
    ['a\\b', "'a\\\\b'"],
    // A trailing backslash must not escape the closing quote.
    ['abc\\', "'abc\\\\'"],
    // Backslashes first, then quotes: `\'` becomes `\\` + `\'`, not `\\'` (which would end the literal).
    ["\\'", "'\\\\\\''"],
    ["\\\\'", "'\\\\\\\\\\''"],
    ['"double" `back`', "'\"double\" `back`'"],
    ["'); DROP TABLE x; --", "'\\'); DROP TABLE x; --'"],
    ["' OR '1'='1", "'\\' OR \\'1\\'=\\'1'"],
    ['%_*?', "'%_*?'"],
  ];
  for (const [value, quoted] of cases) {
    assert.equal(quoteString(value), quoted, JSON.stringify(value));
    assertOneLiteral(value);
  }
});

test('quoteString passes control characters through verbatim: NUL, CR, LF, tab, every C0 and DEL', () => {
  assert.equal(quoteString('a\0b'), "'a\0b'");
  assert.equal(quoteString('line1\r\nline2\n'), "'line1\r\nline2\n'");
  assert.equal(quoteString('a\tb'), "'a\tb'");
  const controls = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('') + '\x7f';
  assert.equal(quoteString(controls), `'${controls}'`);
  assertOneLiteral(controls);
  // A newline does not end the literal, so `--` after it is still text.
  assertOneLiteral("x\n'); DROP TABLE x; --\n");
});

test('quoteString keeps non-ASCII text; a lone surrogate is passed on as it is (UTF-8 encoding later replaces it)', () => {
  const text = 'café ✓ 日本 𝄞 🙂';
  assert.equal(quoteString(text), `'${text}'`);
  assertOneLiteral(text);
  // Lone surrogates are valid JavaScript strings but not Unicode text:
  // quoteString leaves them, and the UTF-8 encoding of the request turns
  // each into U+FFFD (EF BF BD). A literal cannot carry them.
  assert.equal(quoteString('a\ud800b\udc00'), "'a\ud800b\udc00'");
  assert.deepEqual([...Buffer.from(quoteString('\ud800'), 'utf8')], [0x27, 0xef, 0xbf, 0xbd, 0x27]);
  assertOneLiteral('\udfff\ud800');
  // Bytes that are not UTF-8 reach a string only once decoded, as U+FFFD (utf8) or as code points (latin1).
  assert.equal(quoteString(Buffer.from([0xff, 0xfe, 0x27]).toString('utf8')), "'\ufffd\ufffd\\''");
  assert.equal(quoteString(Buffer.from([0xff, 0x5c, 0x27]).toString('latin1')), "'\u00ff\\\\\\''");
});

test('quoteString on very long strings (300,000 characters) stays one literal', () => {
  const quotes = "'".repeat(300_000);
  const quoted = quoteString(quotes);
  assert.equal(quoted.length, 2 + 2 * 300_000);
  assert.equal(quoted, `'${"\\'".repeat(300_000)}'`);
  assertOneLiteral(quotes);
  // Every hostile character mixed, deterministically.
  const alphabet = ["'", '\\', '\0', '\n', '\r', '\t', '"', '`', ';', '-', 'a', 'é', '🙂', '{', '}'];
  let seed = 7;
  let mixed = '';
  while (mixed.length < 300_000) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    mixed += alphabet[seed % alphabet.length];
  }
  assertOneLiteral(mixed);
});

test('quoteIdent accepts plain identifiers only', () => {
  for (const name of ['a', 'agentledger', '_x1', 'A_b_9', 'test_crash_one_ede7abba', 'select', 'x'.repeat(200)]) {
    assert.equal(quoteIdent(name), '`' + name + '`', name);
  }
  const refused = ['', '1a', '9', 'a-b', 'a b', 'a.b', 'a`b', '`a`', 'a;DROP DATABASE x', "a'", 'a"', 'a\\', 'é', 'a\n', '\na', 'a\0', ' a', 'a\u200b', 'ａ'];
  for (const name of refused) assert.throws(() => quoteIdent(name), /not a plain identifier/, JSON.stringify(name));
});

test('renderSql writes strings as quoted literals, wherever the placeholder is', () => {
  assert.equal(renderSql('SELECT {s:String}', { s: "x' OR 1=1 --" }), "SELECT 'x\\' OR 1=1 --'");
  assert.equal(
    renderSql('SELECT * FROM t WHERE a = {a:String} AND b = {b:String}', { a: '\\', b: "'); DROP TABLE t; --" }),
    "SELECT * FROM t WHERE a = '\\\\' AND b = '\\'); DROP TABLE t; --'",
  );
  // The same placeholder twice is rendered twice.
  assert.equal(renderSql('{a:String} = {a:String}', { a: 'x' }), "'x' = 'x'");
});

test('renderSql: an Identifier is a backquoted plain word, anything else refused', () => {
  assert.equal(renderSql('ALTER TABLE {t:Identifier} DELETE WHERE 1', { t: 'spend_rollup_hour' }), 'ALTER TABLE `spend_rollup_hour` DELETE WHERE 1');
  for (const bad of ['a`b', 'a; DROP TABLE t', "t'", '', 'a.b']) {
    assert.throws(() => renderSql('SELECT * FROM {t:Identifier}', { t: bad }), /not a plain identifier/, JSON.stringify(bad));
  }
  assert.throws(() => renderSql('SELECT * FROM {t:Identifier}', { t: 7 }), /an identifier is a string/);
});

test('renderSql does not scan substituted text again, nor expand $ patterns', () => {
  assert.equal(renderSql('{a:String} {b:String}', { a: '{b:String}', b: 'x' }), "'{b:String}' 'x'");
  assert.equal(renderSql('{a:String}', { a: "$&$1$$$'$`" }), "'$&$1$$$\\'$`'");
});

test('renderSql: numbers and bigints as bare literals; non-finite numbers refused', () => {
  assert.equal(renderSql('LIMIT {n:UInt32}', { n: 20 }), 'LIMIT 20');
  assert.equal(renderSql('{n:Int32} {f:Float64} {z:Int32}', { n: -3, f: 1.5, z: -0 }), '-3 1.5 0');
  assert.equal(renderSql('{b:UInt64}', { b: 2n ** 64n - 1n }), '18446744073709551615');
  assert.equal(renderSql('{b:Int64}', { b: -(2n ** 63n) }), '-9223372036854775808');
  for (const bad of [NaN, Infinity, -Infinity]) {
    assert.throws(() => renderSql('{n:UInt32}', { n: bad }), /not a finite number/, String(bad));
    assert.throws(() => renderSql('x IN {n:Array(UInt32)}', { n: [1, bad] }), /not a finite number/, String(bad));
  }
});

test('renderSql: an array after IN is a parenthesised list, elsewhere an array literal', () => {
  assert.equal(renderSql('WHERE id IN {ids:Array(String)}', { ids: ['a', "b'c", '\\'] }), "WHERE id IN ('a', 'b\\'c', '\\\\')");
  assert.equal(renderSql('WHERE id NOT IN {ids:Array(UInt64)}', { ids: [1, 2n] }), 'WHERE id NOT IN (1, 2)');
  assert.equal(renderSql('WHERE id IN\n  {ids:Array(String)}', { ids: ['a'] }), "WHERE id IN\n  ('a')");
  // SQL keywords have no case: `in` is IN.
  assert.equal(renderSql('WHERE id in {ids:Array(String)}', { ids: ['a'] }), "WHERE id in ('a')");
  assert.equal(renderSql('SELECT has({ids:Array(String)}, x)', { ids: ['a', "'"] }), "SELECT has(['a', '\\''], x)");
  assert.equal(renderSql('SELECT {ids:Array(String)}', { ids: [] }), 'SELECT []');
  // `IN` must be the keyword: JOIN, MIN, … are not.
  assert.equal(renderSql('SELECT MIN {ids:Array(String)}', { ids: ['a'] }), "SELECT MIN ['a']");
});

test('renderSql: tuple lists after IN and elsewhere', () => {
  assert.equal(
    renderSql('WHERE (loop_id, seq) IN {keys:Array(Tuple(String, UInt64))}', { keys: [['loop-a', 1n], ["it's", 2]] }),
    "WHERE (loop_id, seq) IN (('loop-a', 1), ('it\\'s', 2))",
  );
  assert.equal(
    renderSql('WHERE (s, i, q) IN {keys:Array(Tuple(String, String, UInt64))}', { keys: [['s1', 'i\\1', 18446744073709551615n]] }),
    "WHERE (s, i, q) IN (('s1', 'i\\\\1', 18446744073709551615))",
  );
  assert.equal(renderSql('SELECT {keys:Array(Tuple(String, UInt64))}', { keys: [['a', 1]] }), "SELECT [('a', 1)]");
});

test('renderSql refuses a missing parameter and an empty IN list', () => {
  assert.throws(() => renderSql('SELECT {a:String}, {b:String}', { a: 'x' }), /query parameter b has no value/);
  // Only the caller's own keys count: Object.prototype's are not values.
  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    assert.throws(() => renderSql(`SELECT {${name}:String}`, {}), new RegExp(`query parameter ${name} has no value`), name);
  }
  assert.throws(() => renderSql('WHERE id IN {ids:Array(String)}', { ids: [] }), /IN needs at least one value/);
  assert.throws(() => renderSql('WHERE (a, b) IN {keys:Array(Tuple(String, UInt64))}', { keys: [] }), /IN needs at least one value/);
});

test('renderSql leaves text without placeholders alone, including braces that are not placeholders', () => {
  const text = "SELECT '{not a placeholder}', {1:String}, {:String} FROM t";
  assert.equal(renderSql(text, {}), text);
});

test('IN lists are cut by rendered bytes: 2,000 honest 140-character ids never make a query past max_query_size', () => {
  const ids = Array.from({ length: 2000 }, (_, i) => `loop-${"é'\\".repeat(20)}-${String(i).padStart(70, '0')}`);
  const chunks = inListChunks(ids);
  assert.ok(chunks.length > 1, 'split');
  assert.deepEqual(chunks.flat(), ids, 'every id once, in order');
  for (const chunk of chunks) {
    const sql = renderSql(querySql('envelope_heads'), { loop_ids: chunk, since: 0 });
    assert.ok(Buffer.byteLength(sql) < 262_144, `query of ${Buffer.byteLength(sql)} bytes`);
  }
  const keys = ids.map((id, i) => [id, i] as const);
  for (const chunk of inListChunks(keys)) assert.ok(Buffer.byteLength(renderSql(querySql('envelope_versions'), { keys: chunk })) < 262_144);
});
