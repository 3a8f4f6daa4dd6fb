/**
 * Applies the numbered, append-only migrations in `schema/clickhouse/` exactly
 * once each.
 *
 * ClickHouse has no transactions, so "exactly once" rests on three things:
 * - a lock that is a table: `CREATE TABLE` (without IF NOT EXISTS) succeeds for
 *   one process only, so two `migrate` runs at once apply each file once;
 *   the holder renews it while it runs, and one not renewed for
 *   STALE_LOCK_MS is a killed run's, broken by the next;
 * - every statement in a migration is idempotent (`IF NOT EXISTS`, or an
 *   `ADD COLUMN` whose column is already there counting as done, since
 *   ClickHouse 18.16 has no `ADD COLUMN IF NOT EXISTS`), so a run killed
 *   half-way through a file is finished by the next run;
 * - a file is recorded in `schema_migrations` only after all its statements
 *   ran, with its checksum, so an edited released migration is refused.
 */
import { hostname } from 'node:os';
import type { ClickHouseClient, ClickHouseSettings as ClickHouseCommandSettings } from '@clickhouse/client';
import { failureMessage } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import { createClickHouse, credentials, quoteIdent, quoteString, type ClickHouseSettings } from '../clickhouse/client.js';
import { answeredWith, checkFailed, columnMayExist, tableExists } from '../clickhouse/errors.js';
import { clusterServers, clusterTarget, type ClusterTarget, type ServerAddress } from '../clickhouse/cluster.js';
import { atServer, bookkeepingTable, renderMigrations, type RenderedStatement } from './cluster-ddl.js';
import { explainDdlTimeout } from './ddl-laggards.js';
import { loadMigrations, type Migration } from './migrations.js';

/** Where a database stands against the migrations in a folder (migrationStatus()). */
export interface MigrationStatus {
  /** Versions recorded in the database's schema_migrations, ascending; none when it has no such table. */
  readonly applied: readonly number[];
  /** Migrations of the folder not recorded there yet, in the order migrate() would apply them. */
  readonly pending: readonly Migration[];
}

export interface MigrateResult {
  readonly applied: readonly Migration[];
  readonly alreadyApplied: number;
}

const LOCK_TABLE = 'schema_migrations_lock';
/** A lock not renewed for this long is taken to be left by a killed run. */
const STALE_LOCK_MS = 10 * 60_000;
/**
 * How often a run renews the lock it holds (a row with a new taken_at): one
 * statement may run for an hour (STATEMENT_TIMEOUT_MS), far past
 * STALE_LOCK_MS, and a second run must not take a live run's lock for a
 * killed one's.
 */
const LOCK_RENEW_MS = 60_000;
/**
 * How long one migration statement may run (the HTTP request's timeout).
 * Past it the run fails and the server goes on with the statement; the next
 * run finishes the file (every statement runs again to the same end).
 */
const STATEMENT_TIMEOUT_MS = 60 * 60_000;

/** What an `ALTER TABLE t ADD COLUMN c Type [DEFAULT …]` statement adds. */
export interface AddedColumn {
  readonly table: string;
  readonly column: string;
  readonly type: string;
}

// One column per statement (its cluster form, `db.t ON CLUSTER c`, too: it
// is looked up in the database migrate is connected to): with several, a half-applied statement could not
// be told from a done one. The DEFAULT expression may hold commas inside
// parentheses or quotes (a function's arguments), never at its top level,
// where a comma would start a second command (topLevelComma).
const ADD_COLUMN = /^ALTER\s+TABLE\s+(?:\w+\.)?(\w+)(?:\s+ON\s+CLUSTER\s+\w+)?\s+ADD\s+COLUMN\s+(\w+)\s+(\w+(?:\([^()]*\))?)(?:\s+DEFAULT\s+([\s\S]+))?$/i;

/** The column a statement adds, when it is a single-column ADD COLUMN; else undefined. */
export function addedColumn(statement: string): AddedColumn | undefined {
  const m = ADD_COLUMN.exec(statement.trim());
  if (!m || (m[4] !== undefined && topLevelComma(m[4]))) return undefined;
  return { table: m[1]!, column: m[2]!, type: m[3]! };
}

/** Whether SQL text has a comma outside every parenthesis and quoted string (unbalanced text counts as having one). */
function topLevelComma(sql: string): boolean {
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (quote !== undefined) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) return true;
    if (depth < 0) return true;
  }
  return depth !== 0 || quote !== undefined;
}


/**
 * Runs one migration statement. An ADD COLUMN refused because its column
 * exists is done already: a run killed half-way through the file added it.
 * That is confirmed in system.columns, type included, so another refusal
 * under the same code (or a column of another type) is never taken for done.
 */
export async function applyStatement(ch: ClickHouseClient, statement: string, settings?: ClickHouseCommandSettings): Promise<void> {
  try {
    await ch.command({ query: statement, ...(settings === undefined ? {} : { clickhouse_settings: settings }) });
  } catch (err) {
    const added = addedColumn(statement);
    if (added === undefined || !columnMayExist(err)) throw err;
    const [existing] = await ch
      .query({
        query: `SELECT type FROM system.columns WHERE database = currentDatabase() AND table = ${quoteString(added.table)} AND name = ${quoteString(added.column)}`,
        format: 'JSONEachRow',
      })
      .then((r) => r.json<{ type: string }>());
    if (existing === undefined) throw err;
    if (existing.type !== added.type) {
      throw new Error(
        `ClickHouse column ${added.table}.${added.column} exists as ${existing.type}, but the migration adds it as ${added.type}: was it added by hand? Drop or rename it, then run migrate again`,
      );
    }
  }
}

/** The timings of the migration lock (tests shorten them). */
export interface LockTimings {
  /** How long to wait for another run's lock before giving up. */
  readonly waitMs: number;
  /** A lock not renewed for this long is broken (STALE_LOCK_MS). */
  readonly staleMs: number;
  /** How often the holder renews it (LOCK_RENEW_MS). */
  readonly renewMs: number;
}

async function acquireLock(ch: ClickHouseClient, owner: string, log: Logger, { waitMs, staleMs }: LockTimings, target: ClusterTarget | undefined): Promise<void> {
  const deadline = Date.now() + waitMs;
  let announced = false;
  for (;;) {
    try {
      await ch.command({ query: bookkeepingTable(LOCK_TABLE, 'owner String, taken_at DateTime', '', target, false) });
      await ch.insert({ table: LOCK_TABLE, values: [{ owner, taken_at: Math.floor(Date.now() / 1000) }], format: 'JSONEachRow' });
      return;
    } catch (err) {
      if (!tableExists(err)) throw err;
    }
    const holder = await ch
      // The newest row: the holder renews the lock by adding rows.
      .query({ query: `SELECT owner, toUInt32(max(taken_at)) AS taken_at FROM ${LOCK_TABLE} GROUP BY owner LIMIT 1`, format: 'JSONEachRow' })
      .then((r) => r.json<{ owner: string; taken_at: number }>())
      .catch(() => []);
    const row = holder[0];
    if (row && Date.now() - row.taken_at * 1000 > staleMs) {
      log.warn('breaking a stale migration lock', { owner: row.owner, takenAt: new Date(row.taken_at * 1000).toISOString() });
      await ch.command({ query: dropLock(target) });
      continue;
    }
    if (!announced) {
      log.info('waiting for another migrate run to finish', { holder: row?.owner ?? 'unknown' });
      announced = true;
    }
    if (Date.now() > deadline) throw new Error(`migration lock ${LOCK_TABLE} still held by ${row?.owner ?? 'another run'} after ${waitMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Renews the lock every `renewMs` until the returned function is called. */
function renewLock(ch: ClickHouseClient, owner: string, log: Logger, renewMs: number): () => void {
  const timer = setInterval(() => {
    ch.insert({ table: LOCK_TABLE, values: [{ owner, taken_at: Math.floor(Date.now() / 1000) }], format: 'JSONEachRow' }).catch((err: unknown) =>
      log.warn('could not renew the migration lock; another run may take it for a killed one after it goes stale', { error: failureMessage(err) }),
    );
  }, renewMs);
  timer.unref();
  return () => clearInterval(timer);
}

function dropLock(target: ClusterTarget | undefined): string {
  return target === undefined ? `DROP TABLE IF EXISTS ${LOCK_TABLE}` : `DROP TABLE IF EXISTS ${target.database}.${LOCK_TABLE} ON CLUSTER ${target.cluster}`;
}

/**
 * Which migrations of `dir` the database has and which are pending, read
 * without changing anything (no database, table or lock is created). `ch` may
 * be connected to any database: the database need not exist yet.
 */
export async function migrationStatus(ch: ClickHouseClient, database: string, dir: string): Promise<MigrationStatus> {
  const table = `${quoteIdent(database)}.schema_migrations`;
  const migrations = await loadMigrations(dir);
  const [exists] = await ch
    .query({
      query: `SELECT count() AS n FROM system.tables WHERE database = ${quoteString(database)} AND name = 'schema_migrations'`,
      format: 'JSONEachRow',
    })
    .then((r) => r.json<{ n: string }>());
  const applied =
    Number(exists?.n ?? 0) === 0
      ? []
      : await ch
          .query({ query: `SELECT DISTINCT version FROM ${table} ORDER BY version`, format: 'JSONEachRow' })
          .then((r) => r.json<{ version: number | string }>())
          .then((rows) => rows.map((r) => Number(r.version)));
  const done = new Set(applied);
  return { applied, pending: migrations.filter((m) => !done.has(m.version)) };
}

/**
 * Creates the database if needed and applies every pending migration.
 * Safe to run twice and from two processes at once. With `settings.cluster`,
 * each statement runs in its cluster form (cluster-ddl.ts), the database and
 * the bookkeeping tables too; without it, exactly as written.
 */
export async function migrate(
  settings: ClickHouseSettings,
  dir: string,
  log: Logger,
  options: { lock?: Partial<LockTimings> } = {},
): Promise<MigrateResult> {
  try {
    return await migrateOnce(settings, dir, log, options);
  } catch (err) {
    // An ON CLUSTER statement some server has not run in time: say which.
    if (settings.cluster === undefined) throw err;
    const ch = createClickHouse(settings, 'system');
    try {
      throw await explainDdlTimeout(ch, err);
    } finally {
      await ch.close();
    }
  }
}

async function migrateOnce(settings: ClickHouseSettings, dir: string, log: Logger, options: { lock?: Partial<LockTimings> }): Promise<MigrateResult> {
  const target = clusterTarget(settings);
  // Rendered before anything is created: a statement without a cluster form stops the run here.
  const migrations = renderMigrations(await loadMigrations(dir), target);
  // `system`, not `default`: a user confined to its database (allow_databases)
  // may not open `default`; every user may open `system`.
  // An ON CLUSTER statement waits for every server (distributed_ddl_task_timeout,
  // 180 s by default): the server's answer, not the client's minute, ends it.
  const admin = createClickHouse(settings, 'system', STATEMENT_TIMEOUT_MS);
  try {
    if (target !== undefined) await clusterServers(admin, target.cluster);
    const onCluster = target === undefined ? '' : ` ON CLUSTER ${target.cluster}`;
    await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${quoteIdent(settings.database)}${onCluster}` });
  } finally {
    await admin.close();
  }
  // A statement may rewrite a whole table (0022's OPTIMIZE … FINAL): far
  // beyond a read's minute on a large one.
  const ch = createClickHouse(settings, settings.database, STATEMENT_TIMEOUT_MS);
  const owner = `${hostname()}:${process.pid}`;
  try {
    await ch.command({ query: bookkeepingTable('schema_migrations', 'version UInt32, name String, checksum String, applied_at DateTime', 'version', target, true) });
    const lock: LockTimings = { waitMs: 120_000, staleMs: STALE_LOCK_MS, renewMs: LOCK_RENEW_MS, ...options.lock };
    await acquireLock(ch, owner, log, lock, target);
    const stopRenewing = renewLock(ch, owner, log, lock.renewMs);
    try {
      const rows = await ch
        .query({ query: 'SELECT version, name, checksum FROM schema_migrations ORDER BY version', format: 'JSONEachRow' })
        .then((r) => r.json<{ version: number; name: string; checksum: string }>());
      const done = new Map(rows.map((r) => [Number(r.version), r]));
      const servers = target === undefined ? [] : await clusterServers(ch, target.cluster);
      const applied: Migration[] = [];
      for (const { migration: m, statements } of migrations) {
        const before = done.get(m.version);
        if (before) {
          if (before.checksum !== m.checksum) {
            throw new Error(
              `migration ${String(m.version).padStart(4, '0')}_${m.name} was edited after it was applied (checksum differs); add a new migration instead`,
            );
          }
          continue;
        }
        log.info('applying migration', { version: m.version, name: m.name, statements: statements.length, ...(target ? { cluster: target.cluster } : {}) });
        for (const statement of statements) await runStatement(ch, statement, settings, servers, log);
        await ch.insert({
          table: 'schema_migrations',
          values: [{ version: m.version, name: m.name, checksum: m.checksum, applied_at: Math.floor(Date.now() / 1000) }],
          format: 'JSONEachRow',
        });
        applied.push(m);
      }
      return { applied, alreadyApplied: migrations.length - applied.length };
    } finally {
      stopRenewing();
      await ch.command({ query: dropLock(target) });
    }
  } finally {
    await ch.close();
  }
}

/**
 * Runs a rendered statement: `here` on this server (on a cluster, an INSERT
 * … SELECT waits until every row is on its shard, so the migration is only
 * recorded once they are), `every-server` once per server of the cluster.
 */
async function runStatement(
  ch: ClickHouseClient,
  statement: RenderedStatement,
  settings: ClickHouseSettings,
  servers: readonly ServerAddress[],
  log: Logger,
): Promise<void> {
  if (statement.where === 'here') {
    try {
      await applyStatement(ch, statement.sql, settings.cluster === undefined ? undefined : { insert_distributed_sync: 1 });
    } catch (err) {
      const code = answeredWith(err, statement.checkedAfter ?? []);
      if (code === undefined) throw err;
      log.warn('a cluster statement failed in its reply only; the next statement checks its effect on every server', { code, statement: statement.sql });
    }
    return;
  }
  const { user, password } = credentials(settings);
  for (const server of servers) await checkAt(ch, atServer(statement.sql, server, settings.database, { user, password }), server, settings, log);
}

/** How long a check waits for a server's replica to catch up (a merge its leader assigned) before it fails the migration. */
const REPLICA_CATCH_UP_MS = 60_000;

/** A check on one server; failed, it is asked again while that server's replica may still be merging. */
async function checkAt(ch: ClickHouseClient, query: string, server: ServerAddress, settings: ClickHouseSettings, log: Logger): Promise<void> {
  const deadline = Date.now() + REPLICA_CATCH_UP_MS;
  for (;;) {
    try {
      await ch.command({ query });
      return;
    } catch (err) {
      if (!checkFailed(err) || Date.now() > deadline) {
        throw new Error(`migration check failed on server ${server.host}:${server.port} of cluster ${settings.cluster}: ${(err as Error).message}`, { cause: err });
      }
      log.info('migration check not yet true on a server; waiting for its replica', { server: `${server.host}:${server.port}` });
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
