/**
 * Which servers have not run an `ON CLUSTER` statement. A server answers one
 * after every server of the cluster has run it, or, after
 * `distributed_ddl_task_timeout` (180 s by default), with TIMEOUT_EXCEEDED
 * (159) naming the statement's task in ZooKeeper and how many servers have
 * not finished it, not which. Each server that has finished it leaves a node
 * under the task's `finished/`; the task's own node lists every server it was
 * sent to. The difference names the laggards, so an operator knows which
 * server to look at (docs/operations.md, "A local cluster", on a statement
 * that waits out distributed_ddl_task_timeout).
 *
 * `system.zookeeper` exists only on a server that has a ZooKeeper (on 18.16
 * and current ClickHouse alike), which every server of a cluster has: these
 * queries are inline rather than in queries/, whose files test/modern runs
 * on a server without one.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { quoteString } from '../clickhouse/client.js';
import { ddlTimeoutTask } from '../clickhouse/errors.js';

/**
 * The servers a task's node lists (`hosts: ['host:port', …]`), as ClickHouse
 * writes them: dots as `%2E`, which the `finished/` nodes' names share.
 */
export function taskHosts(node: string): string[] {
  const line = /^hosts: \[(.*)\]$/m.exec(node)?.[1];
  if (line === undefined || line.trim() === '') return [];
  return line.split(',').map((h) => h.trim().replace(/^'(.*)'$/, '$1'));
}

/** A host id as ClickHouse writes it in the queue (`127%2E0%2E0%2E1:9000`), readable (`127.0.0.1:9000`). */
export function readableHost(id: string): string {
  try {
    return decodeURIComponent(id);
  } catch {
    return id;
  }
}

/**
 * The servers (host:port, their native port) that have not finished the ON
 * CLUSTER task at `task`, in the order the task lists them; empty when all
 * have by now.
 */
export async function unfinishedHosts(ch: ClickHouseClient, task: string): Promise<string[]> {
  const parent = task.slice(0, task.lastIndexOf('/'));
  const name = task.slice(task.lastIndexOf('/') + 1);
  const rows = async (sql: string): Promise<{ name: string; value: string }[]> => (await ch.query({ query: sql, format: 'JSONEachRow' })).json();
  const [node] = await rows(`SELECT name, value FROM system.zookeeper WHERE path = ${quoteString(parent)} AND name = ${quoteString(name)}`);
  if (node === undefined) return [];
  const finished = new Set((await rows(`SELECT name, value FROM system.zookeeper WHERE path = ${quoteString(`${task}/finished`)}`)).map((r) => r.name));
  return taskHosts(node.value)
    .filter((h) => !finished.has(h))
    .map(readableHost);
}

/** An ON CLUSTER statement that `unfinished` (host:port) had not run within distributed_ddl_task_timeout. */
export class DdlTimeoutError extends Error {
  constructor(
    readonly unfinished: readonly string[],
    cause: unknown,
  ) {
    // The servers first: a message cut short still names them. ClickHouse's
    // text (with its code, which ddlTimeoutTask reads) follows.
    super(
      `an ON CLUSTER statement was not run by ${unfinished.join(', ')} within distributed_ddl_task_timeout: ` +
        `that server's DDL queue is stopped or behind (its log says why, under DDLWorker; docs/operations.md). ${(cause as Error).message}`,
      { cause },
    );
    this.name = 'DdlTimeoutError';
  }
}

/**
 * `err` again, or, for an ON CLUSTER timeout, a DdlTimeoutError naming the
 * servers that have not run the statement (looked up through `ch`; if that
 * lookup fails, or every server has run it by now, `err` as it was).
 */
export async function explainDdlTimeout(ch: ClickHouseClient, err: unknown): Promise<unknown> {
  const task = ddlTimeoutTask(err);
  if (task === undefined) return err;
  let hosts: string[];
  try {
    hosts = await unfinishedHosts(ch, task);
  } catch {
    return err;
  }
  return hosts.length === 0 ? err : new DdlTimeoutError(hosts, err);
}
