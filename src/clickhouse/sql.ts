/**
 * Queries live in `.sql` files, in the `queries/` folder of the feature that
 * asks them (queriesIn()), with a header naming their
 * parameters (`-- param: NAME TYPE EXAMPLE`) and placeholders in ClickHouse's
 * own syntax, `{name:Type}`. ClickHouse 18.16 has no query parameters, so the
 * placeholders are rendered here as quoted literals; on current ClickHouse the
 * same text could be sent with server-side parameters. test/modern checks every
 * file on current ClickHouse with the EXAMPLE values. A file may write two
 * macros, expanded when it is loaded (expandQuery): `include(name)`, a piece
 * of SQL several files share, from `src/clickhouse/queries/fragments/NAME.sql`, and
 * `decimal_text(d)`, a Decimal128 sum as its exact text.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { fileURLToPath } from 'node:url';
import { quoteIdent, quoteString } from './client.js';
import { ONE_SERVER, type StateSql } from './replicas.js';

/** The fragments every folder's query files include, from the compiled dist/src/clickhouse/. */
const FRAGMENTS_DIR = fileURLToPath(new URL('../../../src/clickhouse/queries/fragments/', import.meta.url));

export type SqlValue = string | number | bigint | readonly SqlValue[];

function literal(value: SqlValue): string {
  if (typeof value === 'string') return quoteString(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
    return String(value);
  }
  return Array.isArray(value) && value.length > 0 && Array.isArray(value[0])
    ? `[${value.map((t) => `(${(t as readonly SqlValue[]).map(literal).join(', ')})`).join(', ')}]`
    : `[${value.map(literal).join(', ')}]`;
}

/**
 * Substitutes `{name:Type}` placeholders (`{name:Identifier}`: a table or
 * column name, a plain word only); every one must have a value. An
 * array right after `IN` (any case, as SQL keywords are) is written as a
 * parenthesised list: 18.16 refuses `x IN [..]` ("Invalid types for IN
 * function"), both versions take `x IN (..)`. Values are only ever written as
 * literals (strings through quoteString()), and the text substituted is not
 * scanned again, so a value that looks like a placeholder stays text.
 */
export function renderSql(text: string, params: Record<string, SqlValue>): string {
  return text.replace(/(\bIN\s+)?\{([A-Za-z_][A-Za-z0-9_]*):([^}]+)\}/gi, (_, inKeyword: string | undefined, name: string, type: string) => {
    // Own properties only: `{constructor:String}` must not find Object.prototype's.
    const value = Object.hasOwn(params, name) ? params[name] : undefined;
    if (value === undefined) throw new Error(`query parameter ${name} has no value`);
    if (type.trim() === 'Identifier') {
      if (typeof value !== 'string') throw new Error(`query parameter ${name}: an identifier is a string`);
      return (inKeyword ?? '') + quoteIdent(value);
    }
    if (inKeyword && Array.isArray(value)) {
      if (value.length === 0) throw new Error(`query parameter ${name}: IN needs at least one value`);
      const items = value as readonly SqlValue[];
      return `${inKeyword}(${items.map((v) => (Array.isArray(v) ? `(${(v as readonly SqlValue[]).map(literal).join(', ')})` : literal(v))).join(', ')})`;
    }
    return (inKeyword ?? '') + literal(value);
  });
}

/** 10^18 as a Decimal128: the size of the low piece of a rendered sum. */
const E18 = "toDecimal128('1000000000000000000', 0)";

/**
 * A Decimal128 sum `d` (a column or alias) as its exact decimal text, on
 * 18.16 and on current ClickHouse: the digits above 10^18 and the 18 below,
 * joined. 18.16's toString garbles a Decimal128 of 21 digits and more (NUL
 * bytes, lost digits; it overruns a stack array), and if() evaluates both
 * branches, so neither branch writes more than 20 digits. Migration 0017
 * ships the same expression inside its views; docs/spend.md says why.
 */
export function decimalTextSql(d: string): string {
  return (
    `if(abs(${d}) < ${E18}, toString(${d} - intDiv(${d}, ${E18}) * ${E18}), ` +
    `concat(toString(intDiv(${d}, ${E18})), substring(toString(abs(${d} - intDiv(${d}, ${E18}) * ${E18}) + ${E18}), 2)))`
  );
}

/** `decimal_text(d)` in a query file: decimalTextSql(d), for a column or alias `d`. */
const DECIMAL_TEXT = /\bdecimal_text\((\w+)\)/g;

/** `include(name)` in a query file: the piece of SQL in `src/clickhouse/queries/fragments/NAME.sql`. */
const INCLUDE = /\binclude\((\w+)\)/g;

/** A file's text without its `--` comment lines, trimmed. */
function withoutComments(text: string): string {
  return text
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('--'))
    .join('\n')
    .trim();
}

function readFragment(name: string): string {
  try {
    return readFileSync(`${FRAGMENTS_DIR}${name}.sql`, 'utf8');
  } catch (e) {
    throw new Error(`include(${name}): no fragment queries/fragments/${name}.sql`, { cause: e });
  }
}

/**
 * Replaces each `include(name)` by the fragment `src/clickhouse/queries/fragments/NAME.sql`:
 * its text without its comment lines, each line after the first indented as
 * the line the include stands on (so the SQL reads as if written there). A
 * fragment may include others, not itself. A fragment is plain SQL, not a
 * statement: it uses the placeholders its includers declare, and ends with no
 * `;`. test/modern/check_sql.py expands includes the same way.
 */
export function expandIncludes(text: string, fragment: (name: string) => string = readFragment, within: readonly string[] = []): string {
  return text.replace(INCLUDE, (_, name: string, offset: number) => {
    if (within.includes(name)) throw new Error(`fragment ${name} includes itself (${[...within, name].join(' > ')})`);
    const body = withoutComments(fragment(name));
    if (body === '' || body.endsWith(';')) throw new Error(`fragment ${name}: empty, or a statement ending with ';'`);
    const indent = /^[ \t]*/.exec(text.slice(text.lastIndexOf('\n', offset - 1) + 1))![0];
    return expandIncludes(body, fragment, [...within, name])
      .split('\n')
      .map((line, i) => (i === 0 || line === '' ? line : indent + line))
      .join('\n');
  });
}

/**
 * Expands the query files' two macros: `include(name)` first (expandIncludes),
 * then `decimal_text(d)` (test/modern/check_sql.py expands both the same way).
 */
export function expandQuery(text: string, fragment?: (name: string) => string): string {
  return expandIncludes(text, fragment).replace(DECIMAL_TEXT, (_, d: string) => decimalTextSql(d));
}

/** Bytes of rendered IN-list values per query: max_query_size is 262,144 bytes, and a list may appear twice. */
export const IN_LIST_BYTES = 100_000;

/** An upper bound of a value's size once rendered as a literal (every character escaped, UTF-8, quotes, separator). */
export function literalBytes(value: SqlValue): number {
  if (typeof value === 'string') return 2 * Buffer.byteLength(value, 'utf8') + 4;
  if (Array.isArray(value)) return (value as readonly SqlValue[]).reduce<number>((n, v) => n + literalBytes(v), 4);
  return 24;
}

/**
 * Splits values for IN lists so that each list renders to at most `budget`
 * bytes: counted in bytes, not values, so no batch of honest ids (long ones
 * included) can push a query past max_query_size. A value larger than the
 * budget alone goes in a list of its own (the decoders cap ids well below it).
 */
export function inListChunks<T extends SqlValue>(values: readonly T[], budget = IN_LIST_BYTES): T[][] {
  const chunks: T[][] = [];
  let chunk: T[] = [];
  let bytes = 0;
  for (const v of values) {
    const size = literalBytes(v);
    if (chunk.length > 0 && bytes + size > budget) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(v);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/** The query files of one folder (queriesIn()). */
export interface Queries {
  /** The text of `NAME.sql` in the folder, without its comment header, its `include()` and `decimal_text()` expanded. */
  readonly querySql: (name: string) => string;
  /**
   * The rows of `NAME.sql` in the folder with these parameters, as JSON objects: the
   * one read every module uses. `sql` turns the text into the one sent (the
   * ingest's state reads on a cluster: replicas.ts).
   */
  readonly queryRows: <T>(ch: ClickHouseClient, name: string, params?: Record<string, SqlValue>, sql?: StateSql) => Promise<T[]>;
}

/**
 * The query files of the folder `dir`, each read once. A feature loads its
 * own (its queries.ts): `new URL('../../../src/<feature>/queries/',
 * import.meta.url)` from the compiled dist/src/<feature>/, which climbs out
 * of dist into src, where the files are.
 */
export function queriesIn(dir: URL): Queries {
  const folder = fileURLToPath(dir);
  const cache = new Map<string, string>();
  const querySql = (name: string): string => {
    let text = cache.get(name);
    if (text === undefined) {
      text = withoutComments(readFileSync(join(folder, `${name}.sql`), 'utf8')).replace(/;$/, '');
      text = expandQuery(text);
      cache.set(name, text);
    }
    return text;
  };
  const queryRows = async <T>(ch: ClickHouseClient, name: string, params: Record<string, SqlValue> = {}, sql: StateSql = ONE_SERVER): Promise<T[]> =>
    ch.query({ query: renderSql(sql(querySql(name)), params), format: 'JSONEachRow' }).then((r) => r.json<T>());
  return { querySql, queryRows };
}
