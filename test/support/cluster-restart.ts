/**
 * Restarting servers of the local cluster (infra/cluster.sh) as
 * docs/operations.md tells an operator to when a server's DDL worker
 * stopped: SIGKILL, then `infra/stack.sh up --cluster` starts what is down.
 * Used by run-suite between cluster files and by cluster.ts during a
 * migrate. It does not block the caller's event loop.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './services.js';

/** The pid file of a service of the local cluster: `clickhouse-N`, `kafka-N` or `zookeeper`. */
export function clusterPidFile(service: string): string {
  const file = service.startsWith('clickhouse') ? 'clickhouse.pid' : service.startsWith('kafka') ? 'kafka.pid' : 'zookeeper.pid';
  return join(REPO_ROOT, '.state', 'cluster', service, file);
}

/** SIGKILLs `servers` (one already gone is started all the same) and brings the cluster up; throws with stack.sh's last lines when it fails. */
export async function restartClusterServers(servers: readonly string[]): Promise<void> {
  for (const server of servers) {
    try {
      process.kill(Number(readFileSync(clusterPidFile(server), 'utf8').trim()), 'SIGKILL');
    } catch {
      // Already gone: `up --cluster` starts it.
    }
  }
  const child = spawn('bash', [join(REPO_ROOT, 'infra', 'stack.sh'), 'up', '--cluster'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => chunks.push(d));
  child.stderr.on('data', (d: Buffer) => chunks.push(d));
  const status = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (status !== 0) {
    const tail = Buffer.concat(chunks).toString('utf8').trim().split('\n').slice(-10).join('\n');
    throw new Error(`restarting ${servers.join(', ')}: infra/stack.sh up --cluster exited ${status}:\n${tail}`);
  }
}
