/**
 * schema/snapshot.sql: the `CREATE` of every table and view the migrations
 * leave behind, as ClickHouse itself states them, so the schema can be read
 * without replaying every migration. Generated on the local stack's server
 * (`npm run docs:schema`: a throwaway database, every migration, the
 * statements, the database dropped); an integration test applies the
 * migrations to a fresh database and fails when the file differs.
 *
 * The text is what the server prints (`system.tables.create_table_query`),
 * laid out one clause and one column per line: the statements of 18.16, the
 * server CI runs; a current server words a few of them differently.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { fileURLToPath } from 'node:url';
import { quoteString } from '../clickhouse/client.js';

/** schema/snapshot.sql, from the compiled dist/src/migrate/. */
export const SNAPSHOT_PATH = fileURLToPath(new URL('../../../schema/snapshot.sql', import.meta.url));

const HEADER = `-- The schema the migrations in schema/clickhouse/ build, one statement per
-- table and view, in name order, as ClickHouse 18.16 states them (a current
-- server words a few differently). Generated: do not edit; run
-- \`npm run docs:schema\` after adding a migration (a test compares).
`;

/** Keywords a clause starts with; a line break goes before each (outside quotes). */
const CLAUSES = [
  'UNION ALL',
  'ANY LEFT JOIN',
  'ALL LEFT JOIN',
  'ANY INNER JOIN',
  'ALL INNER JOIN',
  'LEFT JOIN',
  'INNER JOIN',
  'SELECT',
  'FROM',
  'PREWHERE',
  'WHERE',
  'GROUP BY',
  'HAVING',
  'ORDER BY',
  'LIMIT',
  'USING',
  'ENGINE',
  'PARTITION BY',
  'PRIMARY KEY',
  'SAMPLE BY',
  'TTL',
  'SETTINGS',
  'AS SELECT',
];

/**
 * One statement laid out for reading: a break before each clause and after
 * each top-level comma of a column list, indented by parenthesis depth.
 * Quoted text ('…', `…`, "…") is copied as it is.
 */
export function layOut(statement: string): string {
  const out: string[] = [];
  let line = '';
  let depth = 0;
  /** Depths whose parenthesis opened a column list (one column per line). */
  const lists: number[] = [];
  const pad = (d: number): string => '    '.repeat(d);
  const breakLine = (d: number): void => {
    if (line.trim() !== '') out.push(line.replace(/\s+$/, ''));
    line = pad(d);
  };
  for (let i = 0; i < statement.length; ) {
    const c = statement[i]!;
    if (c === "'" || c === '`' || c === '"') {
      let j = i + 1;
      while (j < statement.length && statement[j] !== c) j += statement[j] === '\\' ? 2 : 1;
      line += statement.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === '(') {
      depth++;
      // A column list: `CREATE … name (` before ENGINE or AS.
      if (depth === 1 && /^CREATE /.test(out[0] ?? line) && out.length === 0) {
        lists.push(depth);
        line += '(';
        breakLine(depth);
        i++;
        while (statement[i] === ' ') i++;
        continue;
      }
      line += c;
      i++;
      continue;
    }
    if (c === ')') {
      if (lists.at(-1) === depth) {
        lists.pop();
        depth--;
        breakLine(depth);
        line += ')';
        i++;
        continue;
      }
      depth--;
      line += c;
      i++;
      continue;
    }
    if (c === ',' && lists.at(-1) === depth) {
      line += ',';
      breakLine(depth);
      i++;
      while (statement[i] === ' ') i++;
      continue;
    }
    const previous = statement[i - 1];
    if (lists.length === 0 && (previous === undefined || previous === ' ' || previous === '(')) {
      const clause = CLAUSES.find((k) => statement.startsWith(k, i) && !/[A-Za-z0-9_]/.test(statement[i + k.length] ?? ' '));
      if (clause !== undefined && line.trim() !== '' && line.trim() !== '(') {
        breakLine(depth);
        line += clause;
        i += clause.length;
        continue;
      }
    }
    if (c === ' ' && line.endsWith(' ')) {
      i++;
      continue;
    }
    line += c;
    i++;
  }
  breakLine(0);
  return out.join('\n');
}

/** The snapshot of `database`: every table and view, its name without the database. */
export async function renderSnapshot(ch: ClickHouseClient, database: string): Promise<string> {
  const rows = await ch
    .query({
      query: `SELECT name, create_table_query AS q FROM system.tables WHERE database = ${quoteString(database)} ORDER BY name`,
      format: 'JSONEachRow',
    })
    .then((r) => r.json<{ name: string; q: string }>());
  const own = new RegExp(`\\b${database.replace(/[^A-Za-z0-9_]/g, (ch) => `\\${ch}`)}\\.`, 'g');
  const statements = rows.map((r) => `${layOut(r.q.replace(own, ''))};`);
  return `${HEADER}\n${statements.join('\n\n')}\n`;
}
