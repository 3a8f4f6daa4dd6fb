/**
 * The ClickHouse servers' error logs the suite reads: the single node's and
 * the local cluster's (infra/stack.sh, infra/cluster.sh), and what one gained
 * since an offset.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './services.js';

/** The single node's error log. */
export const ERROR_LOG = join(REPO_ROOT, '.state', 'clickhouse', 'log', 'clickhouse-server.err.log');
/** The local cluster's error logs, by server. */
export const CLUSTER_LOGS = [1, 2, 3, 4].map((n) => [`clickhouse-${n}`, join(REPO_ROOT, '.state', 'cluster', `clickhouse-${n}`, 'log', 'clickhouse-server.err.log')] as const);

/** Where an error log ends now (0 when there is none). */
export function logEnd(log = ERROR_LOG): number {
  return existsSync(log) ? statSync(log).size : 0;
}

/** What an error log gained since `from` (all of it when it was rotated or recreated). */
export function logSince(from: number, log = ERROR_LOG): string {
  const end = logEnd(log);
  const start = end < from ? 0 : from;
  if (end === start) return '';
  const fd = openSync(log, 'r');
  try {
    const buf = Buffer.alloc(end - start);
    readSync(fd, buf, 0, buf.length, start);
    return buf.toString('latin1');
  } finally {
    closeSync(fd);
  }
}
