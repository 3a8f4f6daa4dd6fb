/**
 * A cluster as the migrations' cluster DDL (src/migrate/cluster-ddl.ts), the
 * state reads of every replica (replicas.ts) and the worker's mutations name
 * it: the cluster and database a statement is rendered for, its servers
 * (system.clusters), and the local half of a table pair. The DDL and the
 * reads both import it, and so never each other.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { quoteString } from './client.js';

export interface ClusterTarget {
  /** A cluster of the servers' remote_servers (system.clusters). */
  readonly cluster: string;
  readonly database: string;
}

/** One server's address for remote(), as system.clusters lists it. */
export interface ServerAddress {
  readonly host: string;
  readonly port: number;
}

/** The cluster these settings name, with their database; undefined on one server. */
export function clusterTarget(settings: { readonly cluster?: string | undefined; readonly database: string }): ClusterTarget | undefined {
  return settings.cluster === undefined ? undefined : { cluster: settings.cluster, database: settings.database };
}

/** The local (replicated) half of a table pair. */
export function localName(table: string): string {
  return `${table}_local`;
}

/** The cluster's servers (system.clusters), by shard and replica; a cluster the server does not know stops with one line naming the setting. */
export async function clusterServers(ch: ClickHouseClient, cluster: string): Promise<ServerAddress[]> {
  const rows = await ch
    .query({
      query: `SELECT host_address, port FROM system.clusters WHERE cluster = ${quoteString(cluster)} ORDER BY shard_num, replica_num`,
      format: 'JSONEachRow',
    })
    .then((r) => r.json<{ host_address: string; port: number | string }>());
  if (rows.length === 0) {
    throw new Error(`AGENTLEDGER_CLICKHOUSE_CLUSTER=${cluster}: the ClickHouse server has no such cluster in system.clusters (its remote_servers); unset it for a single server`);
  }
  return rows.map((r) => ({ host: r.host_address, port: Number(r.port) }));
}

/**
 * A mutation the worker runs (`ALTER TABLE t DELETE …`: the compaction and
 * the prunes) in its cluster form: of `t`'s replicated local table, ON
 * CLUSTER, so one replica of each shard runs it and its peer replicates it
 * (a Distributed table refuses mutations, code 48). The statement's text is
 * otherwise unchanged, so it stays deterministic (literals only), as a
 * replicated mutation must be. Without a target, the text itself.
 */
export function mutationSql(sql: string, t: ClusterTarget | undefined): string {
  if (t === undefined) return sql;
  let found = 0;
  const text = sql.replace(/\bALTER TABLE\s+`?(\w+)`?\s+(?=(?:DELETE|UPDATE)\b)/gi, (_all, name: string) => {
    found++;
    return `ALTER TABLE ${t.database}.${localName(name)} ON CLUSTER ${t.cluster} `;
  });
  if (found !== 1) throw new Error(`mutationSql: expected one ALTER TABLE … DELETE or UPDATE, found ${found}`);
  return text;
}
