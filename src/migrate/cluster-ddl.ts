/**
 * The cluster form of the migrations (issue 24, "One schema, two engines").
 *
 * A migration is one text; this renders each of its statements for a cluster
 * (AGENTLEDGER_CLICKHOUSE_CLUSTER), and without one hands them back unchanged,
 * so a single-node install runs exactly the statements it always ran. Pure:
 * text in, text out, no server asked (test/unit/migrate/cluster-ddl.test.ts
 * renders every shipped migration both ways; docs/architecture.md "One schema,
 * two engines" has the rules and why).
 *
 * On a cluster every MergeTree-family table `t` becomes `t_local`, a
 * Replicated*MergeTree on every server, plus `t`, a Distributed table over
 * it, so readers and writers keep naming `t`. Every statement is `ON CLUSTER`
 * and names its tables with their database: the servers run it from their
 * DDL queue, in no database of the query's.
 */
import { localName, type ClusterTarget, type ServerAddress } from '../clickhouse/cluster.js';
import type { Migration } from './migrations.js';

/**
 * One statement to run: `here` on the server migrate is connected to (an
 * `ON CLUSTER` statement is sent to the others by that server), `every-server`
 * on each server of the cluster itself (a check of what one server holds).
 */
export interface RenderedStatement {
  readonly sql: string;
  readonly where: 'here' | 'every-server';
  /**
   * Error codes whose reply does not say the statement failed, because the
   * statement after it checks what it did (on every server): 18.16 answers
   * OPTIMIZE … ON CLUSTER of a replicated table taken by a non-leader replica
   * with code 49 "Unknown log entry type: 0" after its leader merged.
   */
  readonly checkedAfter?: readonly number[];
}

export interface RenderedMigration {
  readonly migration: Migration;
  readonly statements: readonly RenderedStatement[];
}

/** What a name is, as the migrations so far made it: a table pair, another table, or a view. */
export type Kind = 'pair' | 'table' | 'view';

/** What the migrations so far made of each name, and how to make its unreplicated tables again. */
interface Catalog {
  readonly kinds: Map<string, Kind>;
  /** A pair's Distributed sharding key. */
  readonly keys: Map<string, string>;
  /** A Null table's source (it was created `AS` it). */
  readonly twins: Map<string, string>;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** ClickHouse's LOGICAL_ERROR code. */
const LOGICAL_ERROR = 49;

const CREATE_MERGE = /^CREATE TABLE IF NOT EXISTS (\w+)\s*(\([\s\S]*\))\s*ENGINE\s*=\s*(\w*)MergeTree\b(?:\s*\(([^()]*)\))?([\s\S]*)$/i;
const CREATE_AS = /^CREATE TABLE IF NOT EXISTS (\w+) AS (\w+) ENGINE\s*=\s*(Null)$/i;
const CREATE_VIEW = /^CREATE VIEW IF NOT EXISTS (\w+) AS\b([\s\S]*)$/i;
const CREATE_MV = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+) AS\b([\s\S]*)$/i;
const DROP = /^DROP TABLE IF EXISTS (\w+)$/i;
const ALTER = /^ALTER TABLE (\w+)\s+([\s\S]+)$/i;
const OPTIMIZE = /^OPTIMIZE TABLE (\w+)((?:\s+FINAL)?)$/i;
const INSERT_SELECT = /^INSERT INTO (\w+)\s+SELECT\b/i;
const CHECK = /^SELECT throwIf\(/i;

/**
 * Every migration's statements for `target`; with no target, the statements
 * themselves. Throws, naming the migration and statement, on a statement with
 * no cluster form: better than a schema that differs from server to server.
 */
export function renderMigrations(migrations: readonly Migration[], target: ClusterTarget | undefined): RenderedMigration[] {
  if (target === undefined) {
    return migrations.map((migration) => ({ migration, statements: migration.statements.map((sql) => ({ sql, where: 'here' as const })) }));
  }
  for (const [what, name] of [['cluster', target.cluster], ['database', target.database]] as const) {
    if (!IDENT.test(name)) throw new Error(`cluster DDL: the ${what} name ${JSON.stringify(name)} is not a plain identifier`);
  }
  const catalog: Catalog = { kinds: new Map(), keys: new Map(), twins: new Map() };
  return migrations.map((migration) => ({
    migration,
    statements: checkedOnlyBeforeACheck(coalesceRemakes(migration.statements.flatMap((statement, i) => {
      try {
        return renderStatement(statement, target, catalog);
      } catch (err) {
        const where = `${String(migration.version).padStart(4, '0')}_${migration.name} statement ${i + 1}`;
        throw new Error(`cluster DDL, ${where}: ${(err as Error).message}`, { cause: err });
      }
    }))),
  }));
}

/** A failed reply is taken for done only where an every-server check comes next (0022); elsewhere it fails the run. */
function checkedOnlyBeforeACheck(statements: readonly RenderedStatement[]): RenderedStatement[] {
  return statements.map((s, i) => (s.checkedAfter === undefined || statements[i + 1]?.where === 'every-server' ? s : { sql: s.sql, where: s.where }));
}

/** A rendered statement, or the making again of an unreplicated table (remake()), before coalescing. */
type Step = RenderedStatement | { readonly remake: string; readonly statements: readonly RenderedStatement[] };

/**
 * Only the last remake of a run: a remake followed by an ALTER of the same
 * table's local half, or by the same remake, is left out (0008's 33 ADD
 * COLUMNs remake envelopes once, not 33 times).
 */
function coalesceRemakes(steps: readonly Step[]): RenderedStatement[] {
  return steps.flatMap((step, i) => {
    if (!('remake' in step)) return [step];
    const next = steps[i + 1];
    const again = next !== undefined && ('remake' in next ? next.remake === step.remake : next.sql.startsWith(`ALTER TABLE `) && next.sql.includes(`.${localName(step.remake)} ON CLUSTER `));
    return again ? [] : step.statements;
  });
}

/** One statement's cluster form; the catalog learns what it creates or drops. */
function renderStatement(sql: string, t: ClusterTarget, catalog: Catalog): Step[] {
  const { kinds } = catalog;
  const here = (text: string): Step => ({ sql: text, where: 'here' });
  const on = `ON CLUSTER ${t.cluster}`;
  const q = (name: string): string => `${t.database}.${name}`;
  let m: RegExpExecArray | null;
  if ((m = CREATE_MERGE.exec(sql))) {
    const [, name, columns, variant, args, rest] = m as unknown as [string, string, string, string, string | undefined, string];
    const local = localName(name);
    const path = `'/clickhouse/tables/{shard}/${t.database}/${local}', '{replica}'`;
    const engineArgs = args === undefined || args.trim() === '' ? path : `${path}, ${args.trim()}`;
    kinds.set(name, 'pair');
    catalog.keys.set(name, shardKey(rest));
    return [
      here(`CREATE TABLE IF NOT EXISTS ${q(local)} ${on} ${columns}\nENGINE = Replicated${variant}MergeTree(${engineArgs})${rest}`),
      here(createUnreplicated(name, t, catalog)),
    ];
  }
  if ((m = CREATE_AS.exec(sql))) {
    const [, name, source, engine] = m as unknown as [string, string, string, string];
    if (engine.toLowerCase() !== 'null') throw new Error(`only a Null table may be created AS another, not ${engine}`);
    kinds.set(name, 'table');
    catalog.twins.set(name, source);
    return [here(createUnreplicated(name, t, catalog))];
  }
  if ((m = CREATE_MV.exec(sql))) {
    const [, name, target, body] = m as unknown as [string, string, string, string];
    if (kinds.get(target) !== 'pair') throw new Error(`materialized view ${name} writes to ${target}, not a table pair`);
    kinds.set(name, 'view');
    return [here(`CREATE MATERIALIZED VIEW IF NOT EXISTS ${q(name)} ${on} TO ${q(localName(target))} AS${mvSource(body, t, kinds)}`)];
  }
  if ((m = CREATE_VIEW.exec(sql))) {
    const [, name, body] = m as unknown as [string, string, string];
    kinds.set(name, 'view');
    return [here(`CREATE VIEW IF NOT EXISTS ${q(name)} ${on} AS${globalIn(qualified(body, t.database, kinds))}`)];
  }
  if ((m = DROP.exec(sql))) {
    const [, name] = m as unknown as [string, string];
    const kind = kinds.get(name);
    kinds.delete(name);
    catalog.twins.delete(name);
    const drops = [here(`DROP TABLE IF EXISTS ${q(name)} ${on}`)];
    // The Distributed table first: no reader is left naming a dropped local table.
    return kind === 'pair' ? [...drops, here(`DROP TABLE IF EXISTS ${q(localName(name))} ${on}`)] : drops;
  }
  if ((m = ALTER.exec(sql))) {
    const [, name, commands] = m as unknown as [string, string, string];
    // 18.16 runs an ALTER ON CLUSTER only on replicated tables where the
    // cluster's shards replicate (code 371 on a Distributed or Null table):
    // the replicated local table is altered, and the unreplicated tables made
    // from it are made again, with its columns (remake).
    if (kinds.get(name) === 'pair') return [here(`ALTER TABLE ${q(localName(name))} ${on} ${commands}`), remake(name, t, catalog)];
    if (catalog.twins.has(name)) return [remake(name, t, catalog)];
    throw new Error(`ALTER of ${name}, neither a table pair nor a Null twin`);
  }
  if ((m = OPTIMIZE.exec(sql))) {
    const [, name, final] = m as unknown as [string, string, string];
    const table = kinds.get(name) === 'pair' ? localName(name) : name;
    const optimize = here(`OPTIMIZE TABLE ${q(table)} ${on}${final}`);
    return kinds.get(name) === 'pair' ? [{ ...optimize, checkedAfter: [LOGICAL_ERROR] }] : [optimize];
  }
  if (INSERT_SELECT.test(sql)) {
    // Through the Distributed tables: read from every shard, each row sent to
    // its shard (the migrator inserts with insert_distributed_sync=1).
    return [here(sql)];
  }
  if (CHECK.test(sql)) return [{ sql: localTables(sql, kinds), where: 'every-server' }];
  throw new Error(`no cluster form for: ${sql.slice(0, 80).replace(/\s+/g, ' ')}…`);
}

/**
 * The CREATE of an unreplicated table: a pair's Distributed half, or a Null
 * twin, which copies its source's local table (a Null table stores nothing,
 * so it is made again rather than altered).
 */
function createUnreplicated(name: string, t: ClusterTarget, catalog: Catalog): string {
  const on = `ON CLUSTER ${t.cluster}`;
  const key = catalog.keys.get(name);
  if (key !== undefined && catalog.kinds.get(name) === 'pair') {
    return `CREATE TABLE IF NOT EXISTS ${t.database}.${name} ${on} AS ${t.database}.${localName(name)}\nENGINE = Distributed(${t.cluster}, ${t.database}, ${localName(name)}, ${key})`;
  }
  const source = catalog.twins.get(name)!;
  const from = catalog.kinds.get(source) === 'pair' ? localName(source) : source;
  return `CREATE TABLE IF NOT EXISTS ${t.database}.${name} ${on} AS ${t.database}.${from} ENGINE = Null`;
}

/**
 * An unreplicated table dropped and created again from what it copies, so it
 * has the columns its local table has now (ALIAS columns too). Both are ON
 * CLUSTER and idempotent. A Distributed table holds no rows of its own, only,
 * with insert_distributed_sync=0, blocks not sent yet: stop the writers first.
 */
function remake(name: string, t: ClusterTarget, catalog: Catalog): Step {
  const statements = [`DROP TABLE IF EXISTS ${t.database}.${name} ON CLUSTER ${t.cluster}`, createUnreplicated(name, t, catalog)];
  return { remake: name, statements: statements.map((sql) => ({ sql, where: 'here' as const })) };
}

/**
 * The Distributed table's sharding key: cityHash64 of the first column of the
 * ORDER BY. The rows a ReplacingMergeTree collapses share their whole sorting
 * key, so they land on one shard and FINAL, run on each shard, still collapses
 * them; for envelopes the key is loop_id, so a loop's chain stays together.
 */
export function shardKey(tableClauses: string): string {
  const m = /\bORDER\s+BY\s+(\([^()]*\)|\w+)/i.exec(tableClauses);
  if (!m?.[1]) throw new Error('a MergeTree table without ORDER BY has no sharding key');
  const first = m[1].replace(/^\(/, '').split(',')[0]!.replace(/\)$/, '').trim();
  if (!IDENT.test(first)) throw new Error(`the first ORDER BY column ${first} is not a column name`);
  return `cityHash64(${first})`;
}

/**
 * `IN (SELECT …)` as `GLOBAL IN (SELECT …)`. Over a Distributed table with two
 * shards, ClickHouse refuses a subquery that reads another Distributed table
 * (distributed_product_mode = 'deny', code 288); GLOBAL runs the subquery once,
 * where the view is read, and sends its result to the shards: the same rows
 * the single-node view reads. A literal list (`IN ('a', 'b')`) is left alone.
 */
export function globalIn(body: string): string {
  return body.replace(/(?<!GLOBAL\s+)\b((?:NOT\s+)?IN)\s*\(\s*SELECT\b/gi, (_all, op: string) => `GLOBAL ${op} (SELECT`);
}

/**
 * A view's body with the tables and views it reads named with their database.
 * Each server creates an ON CLUSTER view from its DDL queue, in its default
 * database, and 18.16 reads the body there to learn the view's columns: an
 * unqualified `envelopes` is `default.envelopes` (code 60, seen on 18.16).
 */
function qualified(body: string, database: string, kinds: ReadonlyMap<string, Kind>): string {
  return body.replace(/\b(FROM|JOIN)(\s+)(\w+)\b(?!\.)/gi, (all, word: string, space: string, name: string) =>
    kinds.has(name) ? `${word}${space}${database}.${name}` : all,
  );
}

/**
 * A materialized view's body reading its source's local table: a view fires on
 * the server an insert into its FROM table lands on, and the rows sent to a
 * shard land in the local table there, never in the Distributed one.
 */
function mvSource(body: string, t: ClusterTarget, kinds: Map<string, Kind>): string {
  return body.replace(/\bFROM\s+(\w+)\b/gi, (all, name: string) => (kinds.get(name) === 'pair' ? `FROM ${t.database}.${localName(name)}` : all));
}

/** A check of system tables about `table = 'x'` of a pair: about its local table, which holds the parts. */
function localTables(sql: string, kinds: Map<string, Kind>): string {
  return sql.replace(/\btable\s*=\s*'(\w+)'/g, (all, name: string) => (kinds.get(name) === 'pair' ? `table = '${localName(name)}'` : all));
}

/**
 * An `every-server` statement as run, from the server migrate is connected
 * to, on `server`: each system table it reads becomes that server's through
 * remote(), and currentDatabase() (which remote() would not carry) the
 * database itself.
 */
export function atServer(sql: string, server: ServerAddress, database: string, login: { user: string; password: string }): string {
  const text = (s: string): string => "'" + s.replace(/\\/g, '\\\\').replace(/'/g, "\\'") + "'";
  const address = text(`${server.host}:${server.port}`);
  return sql
    .replace(/\bcurrentDatabase\(\)/g, text(database))
    .replace(/\bsystem\.(\w+)\b/g, (_all, table: string) => `remote(${address}, system, ${table}, ${text(login.user)}, ${text(login.password)})`);
}

/**
 * The migrations table and the migration lock: on a cluster, one replicated
 * table across all its servers (a ZooKeeper path without {shard}), so every
 * server reads the same applied list and one lock holds for all of them.
 */
export function bookkeepingTable(name: string, columns: string, orderBy: string, target: ClusterTarget | undefined, ifNotExists: boolean): string {
  const create = `CREATE TABLE ${ifNotExists ? 'IF NOT EXISTS ' : ''}`;
  if (target === undefined) return `${create}${name} (${columns}) ENGINE = ${orderBy === '' ? 'Log' : `MergeTree ORDER BY ${orderBy}`}`;
  const path = `'/clickhouse/tables/all/${target.database}/${name}', '{replica}'`;
  return `${create}${target.database}.${name} ON CLUSTER ${target.cluster} (${columns}) ENGINE = ReplicatedMergeTree(${path}) ORDER BY ${orderBy === '' ? 'tuple()' : orderBy}`;
}
