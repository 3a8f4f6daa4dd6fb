/**
 * The local cluster for the tests that run with AGENTLEDGER_TEST_CLUSTER=1
 * (infra/stack.sh up --cluster): its stack.sh commands, and a query to one of
 * its four ClickHouse servers by HTTP port (shard 1 = 18123, 18124; shard 2
 * = 18125, 18126) as the tests' user.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import type { ExpectedTraffic } from '../../src/demo/traffic/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { clickhouseErrorCode } from '../../src/clickhouse/errors.js';
import { DdlTimeoutError } from '../../src/migrate/ddl-laggards.js';
import { migrate } from '../../src/migrate/migrate.js';
import { clusterPidFile, restartClusterServers } from './cluster-restart.js';
import { testContext, type TestContext } from './context.js';
import { CLUSTER_LOGS, logEnd, logSince } from './server-logs.js';
import { REPO_ROOT, type Credentials } from './services.js';
import { machineSkip } from './skips.js';

export const CLUSTER_ENABLED = process.env['AGENTLEDGER_TEST_CLUSTER'] === '1';
/** Off CI, the cluster's tests skip unless asked for; on CI they always run (skips.ts). */
export const CLUSTER_SKIP = machineSkip(!CLUSTER_ENABLED && 'set AGENTLEDGER_TEST_CLUSTER=1 to run it (starts the local cluster)');
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

/** The pid a service of the local cluster wrote (infra/cluster.sh): `clickhouse-N`, `kafka-N` or `zookeeper`. */
export function clusterPid(service: string): number {
  return Number(readFileSync(clusterPidFile(service), 'utf8').trim());
}

/**
 * The trimmed answer of one server to `sql` in `database`; a refusal throws
 * with the port and ClickHouse's text. A read is sent again once when the
 * connection closed under it: fetch reuses a kept-alive socket the server
 * may be closing at that instant ("other side closed", which failed a
 * cluster-faults test's count in a suite run on 2026-12-07).
 */
export async function query(port: number, sql: string, database = 'system', who: Credentials = CLUSTER_TEST_USER): Promise<string> {
  const url = `http://127.0.0.1:${port}/?database=${database}&user=${encodeURIComponent(who.user)}&password=${encodeURIComponent(who.password)}`;
  const send = (): Promise<Response> => fetch(url, { method: 'POST', body: sql });
  const read = /^\s*(SELECT|SHOW|EXISTS|DESCRIBE)\b/i.test(sql);
  const res = await send().catch((err: unknown) => {
    if (read && (err as { cause?: { code?: string } }).cause?.code === 'UND_ERR_SOCKET') return send();
    throw err;
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse :${port}: ${text}`);
  return text.trim();
}

/**
 * The line 18.16 logs when it met its ON CLUSTER race (docs/architecture.md):
 * two replicas of a shard ran one ALTER task, the second one's mark failed
 * ("Node exists"), and that server's DDL worker stopped until it restarts.
 */
export const DDL_WORKER_STOPPED = /DDLWorker: Unexpected ZooKeeper error: .*Node exists/;

/**
 * Watches the cluster's error logs for DDL_WORKER_STOPPED while a migrate
 * runs (during()), once before it and then once a second, and restarts a
 * server that logged it, rather than letting every later ON CLUSTER
 * statement wait out distributed_ddl_task_timeout (180 s) and fail the test
 * it happened in. Restarted, the server takes the task it stopped on again,
 * finds it marked executed for its shard and reports it done, so the
 * statement waiting for it ends. It reads from where the file began, so a
 * worker that stopped during an earlier test of the file is restarted before
 * the next migrate; it never restarts a server while a test runs (a command
 * of the test, such as a rollup sweep, would be cut). A worker that stops
 * during a file's last test is restarted by run-suite before the next file.
 */
class DdlWorkerWatch {
  /** How many servers it restarted so far. */
  restarts = 0;
  private readonly from = CLUSTER_LOGS.map(([, log]) => logEnd(log));
  private restarting: Promise<void> = Promise.resolve();
  private failure: Error | undefined;

  /** `work`, with the logs read before it and once a second while it runs. */
  async during<T>(work: () => Promise<T>): Promise<T> {
    this.check();
    const timer = setInterval(() => this.check(), 1000);
    try {
      return await work();
    } finally {
      clearInterval(timer);
    }
  }

  private check(): void {
    CLUSTER_LOGS.forEach(([server, log], n) => {
      const gained = logSince(this.from[n] ?? 0, log);
      this.from[n] = logEnd(log);
      if (!DDL_WORKER_STOPPED.test(gained)) return;
      this.restarts++;
      console.log(`# ${server}: its DDL worker stopped on 18.16's ON CLUSTER race ("Node exists" in its error log); restarting it`);
      this.restarting = this.restarting.then(() => restartClusterServers([server])).then(replicasWritable).catch((err: unknown) => {
        this.failure ??= err as Error;
      });
    });
  }

  /** Once every restart it began has finished and the cluster's replicas take writes again; throws when one failed. */
  async settled(): Promise<void> {
    await this.restarting;
    if (this.failure) throw this.failure;
  }
}

/**
 * Until no replicated table on any server is read-only. A server killed
 * while it held its shard's lock of a DDL task (or its replicas' is_active
 * nodes) keeps them, through its old ZooKeeper session, until that session
 * expires; meanwhile its restarted tables are read-only and the other
 * replica cannot take the task's lock (18.16 then answers code 48, "Cannot
 * enqueue replicated DDL query"). Bounded at 60 s, past which the migrate's
 * own error says what is wrong.
 */
async function replicasWritable(): Promise<void> {
  const readOnly = async (): Promise<number> => {
    let n = 0;
    for (const port of SERVERS) n += Number(await query(port, 'SELECT count() FROM system.replicas WHERE is_readonly OR is_session_expired').catch(() => '1'));
    return n;
  };
  const deadline = Date.now() + 60_000;
  while ((await readOnly()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
}

/** The watch of the cluster file running in this process (useCluster). */
let ddlWatch: DdlWorkerWatch | undefined;

/**
 * A test file's before and after on the cluster: brings it up (whatever of it
 * is down) and reads its DDL workers' logs from here on (DdlWorkerWatch), and at the end drops
 * `databases()` on each server, then stops the cluster if it was not up
 * before the file. Each server drops its own copy rather than one DROP … ON
 * CLUSTER: that waits in the servers' DDL queues behind every ON CLUSTER
 * statement the file's processes left there, and once in CI it outlasted
 * distributed_ddl_task_timeout (180 s) after the file's tests had passed.
 */
export function useCluster(databases: () => readonly string[]): void {
  let wasUp = true;
  before(() => {
    if (!CLUSTER_ENABLED) return;
    wasUp = stack('status', '--cluster').status === 0;
    const up = stack('up', '--cluster');
    assert.equal(up.status, 0, up.out);
    ddlWatch = new DdlWorkerWatch();
  });
  after(async () => {
    if (!CLUSTER_ENABLED) return;
    try {
      await ddlWatch?.settled();
      ddlWatch = undefined;
      for (const db of databases()) for (const port of SERVERS) await query(port, `DROP DATABASE IF EXISTS ${db}`);
    } finally {
      if (!wasUp) {
        const down = stack('down', '--cluster');
        assert.equal(down.status, 0, down.out);
      }
    }
  });
}

/**
 * A test file's contexts on the cluster: useCluster() for the file, and
 * make(), a test context migrated on the cluster (its database on all four
 * servers, the first one's URL, as the tests' user, many small inserts);
 * their topics and groups are dropped at the end, while the cluster is up.
 */
export function clusterContexts(): { make(name: string, overrides?: Record<string, string>): Promise<TestContext> } {
  const contexts: TestContext[] = [];
  after(async () => {
    for (const ctx of contexts) await ctx.cleanup();
  });
  useCluster(() => contexts.map((c) => c.config.clickhouse.database));
  return {
    async make(name, overrides = {}) {
      const ctx = await testContext(name, {
        AGENTLEDGER_CLICKHOUSE_URL: `http://127.0.0.1:${SHARDS[0][0]}`,
        AGENTLEDGER_CLICKHOUSE_USER: CLUSTER_TEST_USER.user,
        AGENTLEDGER_CLICKHOUSE_PASSWORD: CLUSTER_TEST_USER.password,
        AGENTLEDGER_CLICKHOUSE_CLUSTER: 'agentledger',
        // Many small inserts, each through the Distributed table to a replica of its shard.
        AGENTLEDGER_BATCH_MAX_ROWS: '20',
        AGENTLEDGER_BATCH_MAX_WAIT_MS: '50',
        AGENTLEDGER_ALERT_EVALUATE_ON_INGEST: 'false',
        ...overrides,
      });
      contexts.push(ctx);
      await migrateCluster(ctx.config.clickhouse);
      return ctx;
    },
  };
}

/** The service of a server as the DDL queue names it: clickhouse-1 listens on native port 19000, clickhouse-4 on 19003 (infra/cluster.sh). */
const serverOfHost = (host: string): string => `clickhouse-${Number(host.split(':').pop()) - 18999}`;

/**
 * migrate() on the cluster, as an operator does when a server's DDL queue
 * has stopped: on 18.16 two replicas of a shard can both run one ALTER … ON
 * CLUSTER, and the second one's DDL worker then stops for good
 * (docs/architecture.md); it failed CI on 2026-12-05 and 2026-12-06, in
 * tests about a broker and about queries, not about DDL. The file's
 * DdlWorkerWatch, read while this runs, restarts such a server within
 * seconds; a migrate that failed meanwhile (its connection cut, or a host's
 * error) is run again. A server named as not running an ON CLUSTER
 * statement in time is restarted the same way. Right after a restart, 18.16
 * may refuse an ALTER for the restarted server's shard (code 48) while its
 * old ZooKeeper session lives: the next try waits until no replica is
 * read-only (replicasWritable). At most five mends, each said in the test's
 * output. test/integration/cluster-migrate.test.ts asserts what this
 * leaves, and the laggards the real migrate names without it.
 */
export async function migrateCluster(settings: TestContext['config']['clickhouse']): Promise<void> {
  const watch = (ddlWatch ??= new DdlWorkerWatch());
  await watch.during(async () => {
    await watch.settled();
    for (let mended = 0; ; mended++) {
      const restarts = watch.restarts;
      try {
        // A try after a mend breaks the migration lock at once: only this
        // process migrates this test's database, and its failed try may have
        // left the lock behind (its release met the restarted server), which a
        // live run's ten minutes of staleness would make the next try wait out.
        await migrate(settings, MIGRATIONS_DIR, createLogger('warn'), mended === 0 ? {} : { lock: { staleMs: 0 } });
        await watch.settled();
        return;
      } catch (err) {
        if (mended === 5) throw err;
        await watch.settled();
        if (watch.restarts > restarts) {
          console.log(`# migrating again after the restart (migrate said: ${String((err as Error).message).split('\n')[0]!.slice(0, 200)})`);
          continue;
        }
        if (clickhouseErrorCode(err) === 48 && /Cannot enqueue replicated DDL query/.test(String((err as Error).message))) {
          console.log('# the cluster refused an ON CLUSTER statement while a restarted replica starts (code 48); migrating again once its replicas take writes');
          await replicasWritable();
          continue;
        }
        if (!(err instanceof DdlTimeoutError)) throw err;
        const servers = err.unfinished.map(serverOfHost);
        console.log(`# ${servers.join(', ')} (${err.unfinished.join(', ')}) did not run an ON CLUSTER statement: a stopped DDL queue; restarting, then migrating again`);
        await restartClusterServers(servers);
        await replicasWritable();
      }
    }
  });
}

/** Per loop and verdict on one server: loop, verdict, rows, highest seq. */
export const perLoop = (port: number, db: string): Promise<string> =>
  query(port, `SELECT loop_id, verdict, count(), max(seq) FROM envelopes_local GROUP BY loop_id, verdict ORDER BY loop_id, verdict FORMAT TSV`, db);

/**
 * Generated traffic stored as on one server: once the two replicas of each
 * shard agree, every (loop, seq) it must store is stored once, and every
 * planted verdict once and no other, read through the Distributed table
 * from a second replica of each shard.
 */
export async function assertTrafficStored(db: string, expected: Pick<ExpectedTraffic, 'stored' | 'violations'>): Promise<void> {
  for (const [a, b] of SHARDS) {
    const deadline = Date.now() + 60_000;
    while ((await perLoop(a, db)) !== (await perLoop(b, db)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
    assert.equal(await perLoop(b, db), await perLoop(a, db), `the replicas of the shard of :${a} agree`);
  }
  const READ = ' SETTINGS prefer_localhost_replica = 0 FORMAT TSV';
  const keys = (await query(SHARDS[1][1], `SELECT loop_id, seq, count() FROM envelopes FINAL WHERE verdict NOT IN ('fork', 'malformed') GROUP BY loop_id, seq ORDER BY loop_id, seq${READ}`, db))
    .split('\n')
    .map((line) => line.split('\t'));
  assert.deepEqual(keys.filter((k) => k[2] !== '1').slice(0, 5), [], '(loop, seq) stored more than once');
  assert.deepEqual(
    keys.map((k) => `${k[0]}#${k[1]}`).sort(),
    expected.stored.map((k) => `${k.loopId}#${k.seq}`).sort(),
    'every (loop, seq) stored',
  );
  const flagged = (await query(SHARDS[0][1], `SELECT loop_id, seq, verdict FROM envelopes FINAL WHERE verdict != 'ok' ORDER BY loop_id, seq, verdict${READ}`, db)).split('\n').filter((l) => l !== '');
  const want = [...expected.violations]
    .sort((x, y) => (x.loopId === y.loopId ? x.seq - y.seq || x.verdict.localeCompare(y.verdict) : x.loopId < y.loopId ? -1 : 1))
    .map((v) => `${v.loopId}\t${v.seq}\t${v.verdict}`);
  assert.deepEqual(flagged, want, 'every planted violation once, and no false one');
}
