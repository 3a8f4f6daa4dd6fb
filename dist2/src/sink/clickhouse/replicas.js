import { credentials, quoteString } from './client.js';
import { localName } from './cluster-ddl.js';
/** The cluster's servers (system.clusters), by shard and replica; a cluster the server does not know stops with one line naming the setting. */
export async function clusterServers(ch, cluster) {
    const rows = await ch
        .query({
        query: `SELECT host_address, port FROM system.clusters WHERE cluster = ${quoteString(cluster)} ORDER BY shard_num, replica_num`,
        format: 'JSONEachRow',
    })
        .then((r) => r.json());
    if (rows.length === 0) {
        throw new Error(`AGENTLEDGER_CLICKHOUSE_CLUSTER=${cluster}: the ClickHouse server has no such cluster in system.clusters (its remote_servers); unset it for a single server`);
    }
    return rows.map((r) => ({ host: r.host_address, port: Number(r.port) }));
}
/**
 * The tables a state read may name: each is a Distributed table over its
 * `_local` pair on a cluster. The ingest's (envelopes, loop_heads,
 * craze_events), and the worker's bookkeeping that must see a write another
 * worker had answered a moment ago: the claims of a rollup version, and the
 * highest version and swept stamp anywhere (rollups.ts, claimVersion and
 * watermarks).
 */
export const STATE_TABLES = ['envelopes', 'loop_heads', 'craze_events', 'rollup_claims', 'rollup_sweeps', 'rollup_commits', 'loop_roots'];
export const ONE_SERVER = (text) => text;
/**
 * A state query read from every replica: each `FROM t` of a state table
 * becomes `FROM remote('<every server>', <database>, t_local, <user>, <password>)`
 * (the addresses comma-separated, so that remote() asks each server as a
 * shard of its own and unions their rows). The login is the ingest's own:
 * a remote() without one logs in as `default`.
 */
export function everyReplica(servers, database, login) {
    if (servers.length === 0)
        throw new Error('everyReplica: the cluster lists no server');
    const addresses = quoteString(servers.map((s) => `${s.host}:${s.port}`).join(','));
    const tables = new RegExp(`\\bFROM\\s+(${STATE_TABLES.join('|')})\\b`, 'gi');
    const source = (table) => `remote(${addresses}, ${database}, ${localName(table)}, ${quoteString(login.user)}, ${quoteString(login.password)})`;
    return (text) => text.replace(tables, (_all, table) => `FROM ${source(table)}`);
}
/** The state reads for these settings: every replica of the cluster when one is set, else the one server's tables. */
export async function stateSqlFor(ch, settings) {
    if (settings.cluster === undefined)
        return ONE_SERVER;
    return everyReplica(await clusterServers(ch, settings.cluster), settings.database, credentials(settings));
}
//# sourceMappingURL=replicas.js.map