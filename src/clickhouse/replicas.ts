/**
 * Where the ingest reads its own state on a cluster (docs/architecture.md,
 * "Exactly once on replicas and shards"). A write through a Distributed
 * table with insert_distributed_sync = 1 is answered once its rows are on
 * one replica of their shard; the other replica fetches them later. A read
 * through the Distributed table takes one replica per shard, which may be
 * the one that has not fetched yet (lagging, stopped, just restarted, or the
 * survivor of a failover), and a heads or versions read that misses rows
 * turns a redelivery into a second copy and an honest next link into a gap.
 *
 * So the ingest's state reads (progress, heads, versions, the lost-heads
 * check, the re-derive) read every replica of every shard at once, through
 * remote() over all the servers system.clusters lists: the union of what
 * the replicas hold contains every answered write, whichever replica took
 * it. Those reads are union-safe by construction (a highest offset, a
 * highest seq per loop, the set of stored versions, "any row"), so a row
 * that two replicas hold counts once. A server that does not answer fails
 * the read (code 279, transient): ingest waits and tries again instead of
 * judging without the rows only that server may hold.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { credentials, quoteString, type ClickHouseSettings } from './client.js';
import { clusterServers, localName, type ServerAddress } from './cluster.js';

/**
 * The tables a state read may name: each is a Distributed table over its
 * `_local` pair on a cluster. The ingest's (envelopes, loop_heads,
 * craze_events), and the worker's bookkeeping that must see a write another
 * worker had answered a moment ago: the claims of a rollup version, and the
 * highest version and swept stamp anywhere (rollups.ts, claimVersion and
 * watermarks).
 */
export const STATE_TABLES = ['envelopes', 'loop_heads', 'craze_events', 'rollup_claims', 'rollup_sweeps', 'rollup_commits', 'loop_roots'] as const;

/** How a state query's text is turned into the one sent: unchanged on one server. */
export type StateSql = (text: string) => string;

export const ONE_SERVER: StateSql = (text) => text;

/**
 * A state query read from every replica: each `FROM t` of a state table
 * becomes `FROM remote('<every server>', <database>, t_local, <user>, <password>)`
 * (the addresses comma-separated, so that remote() asks each server as a
 * shard of its own and unions their rows). The login is the ingest's own:
 * a remote() without one logs in as `default`.
 */
export function everyReplica(servers: readonly ServerAddress[], database: string, login: { user: string; password: string }): StateSql {
  if (servers.length === 0) throw new Error('everyReplica: the cluster lists no server');
  const addresses = quoteString(servers.map((s) => `${s.host}:${s.port}`).join(','));
  const tables = new RegExp(`\\bFROM\\s+(${STATE_TABLES.join('|')})\\b`, 'gi');
  const source = (table: string): string => `remote(${addresses}, ${database}, ${localName(table)}, ${quoteString(login.user)}, ${quoteString(login.password)})`;
  return (text) => text.replace(tables, (_all, table: string) => `FROM ${source(table)}`);
}

/** The state reads for these settings: every replica of the cluster when one is set, else the one server's tables. */
export async function stateSqlFor(ch: ClickHouseClient, settings: Pick<ClickHouseSettings, 'cluster' | 'database' | 'url' | 'user' | 'password'>): Promise<StateSql> {
  if (settings.cluster === undefined) return ONE_SERVER;
  return everyReplica(await clusterServers(ch, settings.cluster), settings.database, credentials(settings));
}
