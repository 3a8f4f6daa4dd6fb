/**
 * What an insert needs to know of a table: its columns in insert order and
 * each one's ClickHouse type. TabSeparated needs only the names (the server
 * parses text by the column's type); RowBinary carries no names and no
 * lengths for numbers, so a type the encoder gets wrong is not refused, it is
 * stored as other values (a UInt32 written into a UInt64 column shifts every
 * later field of the row). The types are declared next to the column lists
 * (columns.ts) and checked against the migrated tables (specDrift, run by
 * test/integration/rowbinary.test.ts), so a migration cannot drift from them
 * unseen.
 */
import type { Columns } from './tsv.js';

/**
 * The column types agentledger's inserted columns have. FixedString(32) is
 * written from the row's 64 hex characters ('' as 32 zero bytes): a layout
 * bench/columns.ts measures, no table has it.
 */
export const COLUMN_TYPES = ['String', 'UInt8', 'UInt16', 'UInt32', 'UInt64', 'Int64', "DateTime('UTC')", 'FixedString(32)'] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

export interface TableSpec<Row> {
  /** The columns as the INSERT names them. */
  readonly columns: Columns<Row>;
  /** The ClickHouse type of each column, in the same order. */
  readonly types: readonly ColumnType[];
}

/**
 * The spec of `Row`'s table from one object literal naming every field of
 * the row type with its column type (one left out does not compile), in
 * insert order.
 */
export function tableSpec<Row>(every: { readonly [K in keyof Row & string]: ColumnType }): TableSpec<Row> {
  const entries = Object.entries(every) as [keyof Row & string, ColumnType][];
  const [first, ...rest] = entries.map(([name]) => name);
  if (first === undefined) throw new Error('a table has at least one column');
  return { columns: [first, ...rest], types: entries.map(([, type]) => type) };
}

/** Specs one after the other: a row of all their fields. */
export function joinSpecs<A, B>(a: TableSpec<A>, b: TableSpec<B>): TableSpec<A & B> {
  return { columns: [...a.columns, ...b.columns] as Columns<A & B>, types: [...a.types, ...b.types] };
}

/** A column as system.columns describes it. */
export interface DescribedColumn {
  readonly name: string;
  readonly type: string;
  /** '' (an ordinary column), DEFAULT, MATERIALIZED or ALIAS. */
  readonly default_kind: string;
}

/**
 * Where a migrated table and an insert's spec disagree, as sentences (none
 * when they agree): a declared column the table lacks or types otherwise,
 * and a column the table stores that the insert leaves out (it would get its
 * default on every row). ALIAS and MATERIALIZED columns cannot be inserted.
 */
export function specDrift<Row>(table: string, described: readonly DescribedColumn[], spec: TableSpec<Row>): string[] {
  const stored = new Map(described.filter((c) => c.default_kind !== 'ALIAS' && c.default_kind !== 'MATERIALIZED').map((c) => [c.name, c.type]));
  const drift: string[] = [];
  spec.columns.forEach((name, i) => {
    const type = stored.get(name);
    if (type === undefined) drift.push(`${table}.${name} is inserted as ${spec.types[i]} but the table stores no such column`);
    else if (type !== spec.types[i]) drift.push(`${table}.${name} is ${type} in the table but inserted as ${spec.types[i]}`);
  });
  const named = new Set<string>(spec.columns);
  for (const name of stored.keys()) if (!named.has(name)) drift.push(`${table}.${name} is stored but no insert names it`);
  return drift;
}
