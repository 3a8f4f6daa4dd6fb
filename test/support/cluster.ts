/**
 * The local cluster for the tests that run with AGENTLEDGER_TEST_CLUSTER=1
 * (infra/stack.sh up --cluster): its stack.sh commands, and a query to one of
 * its four ClickHouse servers by HTTP port (shard 1 = 18123, 18124; shard 2
 * = 18125, 18126) as the tests' user.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { REPO_ROOT, type Credentials } from './services.js';

export const CLUSTER_ENABLED = process.env['AGENTLEDGER_TEST_CLUSTER'] === '1';
export const CLUSTER_SKIP = !CLUSTER_ENABLED && 'set AGENTLEDGER_TEST_CLUSTER=1 to run it (starts the local cluster)';
export const CLUSTER_TEST_USER: Credentials = { user: 'agentledger_test', password: 'agentledger_test' };
/** HTTP ports of the four servers, by shard. */
export const SHARDS = [
  [18123, 18124],
  [18125, 18126],
] as const;
export const SERVERS = [...SHARDS[0], ...SHARDS[1]] as const;

/** `infra/stack.sh ARGS…`: its exit status and everything it printed. */
export function stack(...args: string[]): { status: number | null; out: string } {
  const r = spawnSync('bash', [join(REPO_ROOT, 'infra', 'stack.sh'), ...args], { encoding: 'utf8', timeout: 300_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** The trimmed answer of one server to `sql` in `database`; a refusal throws with the port and ClickHouse's text. */
export async function query(port: number, sql: string, database = 'system', who: Credentials = CLUSTER_TEST_USER): Promise<string> {
  const url = `http://127.0.0.1:${port}/?database=${database}&user=${encodeURIComponent(who.user)}&password=${encodeURIComponent(who.password)}`;
  const res = await fetch(url, { method: 'POST', body: sql });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse :${port}: ${text}`);
  return text.trim();
}

/**
 * A test file's before and after on the cluster: brings it up (whatever of it
 * is down), and at the end drops `databases()` ON CLUSTER, then stops the
 * cluster if it was not up before the file.
 */
export function useCluster(databases: () => readonly string[]): void {
  let wasUp = true;
  before(() => {
    if (!CLUSTER_ENABLED) return;
    wasUp = stack('status', '--cluster').status === 0;
    const up = stack('up', '--cluster');
    assert.equal(up.status, 0, up.out);
  });
  after(async () => {
    if (!CLUSTER_ENABLED) return;
    try {
      for (const db of databases()) await query(SHARDS[0][0], `DROP DATABASE IF EXISTS ${db} ON CLUSTER agentledger`);
    } finally {
      if (!wasUp) {
        const down = stack('down', '--cluster');
        assert.equal(down.status, 0, down.out);
      }
    }
  });
}
