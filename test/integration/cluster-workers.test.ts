/**
 * Ingest and the worker together on the local cluster (ClickHouse 18.16, two
 * shards of two replicas, a 3-broker Kafka): three `ingest` processes in one
 * group and two `worker` processes, one of each SIGKILLed again and again
 * while the traffic arrives in two halves. At the end every (loop, seq) is
 * stored once with its planted verdict, as on one server; every committed
 * rollup hour equals the live view (spend_by_hour), read through the
 * Distributed tables; `rollups sweep`, run again and again beside the
 * workers, exits 0 each time; no hour was committed twice under one version, and no
 * version was claimed by two recomputes that both committed. Runs only with
 * AGENTLEDGER_TEST_CLUSTER=1 (as cluster-faults.test.ts).
 */
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { defaultViolationPlan, generateTraffic } from '../../src/demo/traffic/index.js';
import { query } from '../support/clickhouse.js';
import { runToEnd } from '../support/cli-run.js';
import { assertTrafficStored, CLUSTER_SKIP, clusterContexts } from '../support/cluster.js';
import type { TestContext } from '../support/context.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { prng, runCli, sleep, until, type Running } from '../support/processes.js';
import { rollupMismatches } from '../support/rollup-check.js';

const clusterContext = clusterContexts().make;

/**
 * `agentledger verify` over the records in the order produced (each loop's
 * records in order: one loop, one partition) against `report` on the
 * cluster: the same count of every verdict but the redeliveries, which are
 * not stored again.
 */
async function assertReportAgreesWithVerify(ctx: TestContext, records: readonly { readonly value: Buffer }[]): Promise<void> {
  const file = join(tmpdir(), `${ctx.id}.jsonl`);
  await writeFile(file, records.map((r) => r.value.toString('utf8')).join('\n') + '\n');
  try {
    const verified = await runToEnd(['verify', '--json', file], ctx.env, { timeoutMs: 120_000 });
    assert.ok(verified.code === 0 || verified.code === 1, verified.stderr);
    const reference = JSON.parse(verified.stdout) as { ok: number; duplicates: number; violations: { verdict: string }[] };
    const want = new Map<string, number>([['ok', reference.ok]]);
    for (const v of reference.violations) want.set(v.verdict, (want.get(v.verdict) ?? 0) + 1);
    const reported = await runToEnd(['report', '--json', '--limit', '0'], ctx.env, { timeoutMs: 120_000 });
    assert.equal(reported.code, 0, reported.stderr);
    const report = JSON.parse(reported.stdout) as { verdicts: { verdict: string; envelopes: number }[] };
    const got = new Map(report.verdicts.map((v) => [v.verdict, v.envelopes]));
    assert.deepEqual(Object.fromEntries([...got].sort()), Object.fromEntries([...want].filter(([v]) => v !== 'duplicate').sort()), 'report on the cluster = verify over what was produced');
  } finally {
    await rm(file, { force: true });
  }
}
const BROKERS = '127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094';

test('three ingest and two worker processes on the cluster, one of each SIGKILLed five times: every link once, every committed rollup hour equal to the live view, no version written by two sweeps', { skip: CLUSTER_SKIP, timeout: 900_000 }, async (t) => {
  const ctx = await clusterContext('cluster_workers', {
    AGENTLEDGER_KAFKA_BROKERS: BROKERS,
    AGENTLEDGER_BATCH_MAX_ROWS: '300',
    AGENTLEDGER_BATCH_MAX_WAIT_MS: '100',
    AGENTLEDGER_ROLLUP_SWEEP_MS: '500',
    AGENTLEDGER_ALERT_SWEEP_MS: '500',
  });
  // Four fleets of 80 loops, a day and some hours apart: the rollups span several days and hours.
  const fleets = [0, 1, 2, 3].map((i) =>
    generateTraffic({ loops: 80, envelopesPerLoop: 20, seed: 43 + i, payloadBytes: 200, violations: defaultViolationPlan(80), startTime: `2026-11-${String(26 + i).padStart(2, '0')}T${String(3 + 5 * i).padStart(2, '0')}:30:00Z` }),
  );
  const expected = { stored: fleets.flatMap((f) => f.expected.stored), violations: fleets.flatMap((f) => f.expected.violations) };
  const records = fleets.flatMap((f) => [...f.records].map((r) => ({ key: r.key, value: r.value })));
  // Each loop's records keep their order within either half; a loop's second half follows its first.
  const half = Math.floor(records.length / 2);
  await produceEnvelopes(ctx, records.slice(0, half), 6);
  const seed = Date.now() % 100_000;
  const random = prng(seed);
  t.diagnostic(`seed ${seed}`);

  // Their idle exit is guarded by the caught-up check (every partition committed to its end): a victim's records are not left behind.
  const steadyIngest = [0, 1].map(() => runCli(['ingest', '--no-migrate', '--idle-exit-ms', '8000'], ctx.env));
  const steadyWorker = runCli(['worker'], ctx.env);
  const killed: Running[] = [];
  // `rollups sweep` run again and again beside the workers, as an operator
  // might: it takes the same lease and reads the same claims on every replica.
  const cli = { done: false, swept: 0, leased: 0, failures: [] as string[] };
  const sweeper = (async () => {
    while (!cli.done) {
      const r = await runToEnd(['rollups', 'sweep'], ctx.env, { timeoutMs: 300_000 });
      if (r.code !== 0) cli.failures.push(r.stderr.slice(-1500));
      else if (r.stdout.includes('another sweep is running')) cli.leased++;
      else cli.swept++;
      await sleep(300);
    }
  })();
  try {
    for (let kill = 0; kill < 5; kill++) {
      if (kill === 2) await produceEnvelopes(ctx, records.slice(half), 6);
      const ingest = runCli(['ingest', '--no-migrate'], ctx.env);
      const worker = runCli(['worker'], ctx.env);
      await sleep(1500 + Math.floor(random() * 3000));
      for (const victim of [ingest, worker]) {
        victim.child.kill('SIGKILL');
        await victim.exited;
        killed.push(victim);
      }
    }
    cli.done = true;
    await sweeper;
    assert.deepEqual(cli.failures, [], '`rollups sweep` beside the workers exits 0 every time');
    for (const run of steadyIngest) assert.equal(await run.exited, 0, run.stderr().slice(-3000));
    const last = await runToEnd(['ingest', '--no-migrate', '--idle-exit-ms', '4000'], ctx.env, { timeoutMs: 300_000 });
    assert.equal(last.code, 0, last.stderr.slice(-3000));
    await assertTrafficStored(ctx.config.clickhouse.database, expected);
    await assertReportAgreesWithVerify(ctx, records);

    // A sweep that began after the last row was stored: the rollups hold everything.
    const [mark] = await query<{ v: string }>(ctx, 'SELECT toString(max(version)) AS v FROM rollup_claims');
    const storedVersion = BigInt(mark!.v);
    await until('a sweep begun after the last row, finished', 120_000, async () => {
      const [r] = await query<{ v: string }>(ctx, 'SELECT toString(max(version)) AS v FROM rollup_sweeps');
      return BigInt(r!.v) > storedVersion ? true : undefined;
    }, [steadyWorker]);
  } finally {
    cli.done = true;
    await sweeper;
    steadyWorker.child.kill('SIGTERM');
    assert.equal(await steadyWorker.exited, 0, steadyWorker.stderr().slice(-3000));
  }

  // Read through the Distributed tables; a replica may still be fetching the last parts for a moment.
  let wrong: string[] = [];
  await until('every committed hour equal to the live view', 60_000, async () => ((wrong = await rollupMismatches(ctx)).length === 0 ? true : undefined)).catch(() => undefined);
  assert.deepEqual(wrong.slice(0, 10), [], 'every committed hour equal to the live view');
  const [hours] = await query<{ committed: string; live: string }>(
    ctx,
    'SELECT toString((SELECT uniqExact(hour) FROM rollup_commits)) AS committed, toString((SELECT uniqExact(hour) FROM spend_by_hour)) AS live',
  );
  assert.ok(Number(hours!.live) > 0 && Number(hours!.committed) >= Number(hours!.live), `every hour with spend committed (${hours!.committed} committed, ${hours!.live} with spend)`);
  const [twice] = await query<{ n: string }>(ctx, 'SELECT toString(count()) AS n FROM (SELECT hour, version FROM rollup_commits GROUP BY hour, version HAVING count() > 1)');
  assert.equal(twice!.n, '0', 'no hour committed twice under one version');
  const [shared] = await query<{ n: string }>(
    ctx,
    `SELECT toString(count()) AS n FROM (SELECT version FROM rollup_claims GROUP BY version HAVING uniqExact(claimant) > 1)
     WHERE version IN (SELECT version FROM rollup_commits)`,
  );
  assert.equal(shared!.n, '0', 'no committed version claimed by two recomputes');
  const died = killed.filter((k) => k.child.signalCode === 'SIGKILL').length;
  assert.equal(died, killed.length, 'every victim died of SIGKILL');
  const [sweeps] = await query<{ claimed: string; finished: string }>(
    ctx,
    'SELECT toString((SELECT uniqExact(version) FROM rollup_claims)) AS claimed, toString((SELECT count() FROM rollup_sweeps)) AS finished',
  );
  process.stderr.write(
    `cluster-workers: ${killed.length / 2} ingest and ${killed.length / 2} worker processes SIGKILLed; ${sweeps!.claimed} versions claimed, ${sweeps!.finished} sweeps finished; ${hours!.committed} hours committed; \`rollups sweep\` beside them: ${cli.swept} swept, ${cli.leased} found the lease held; seed ${seed}\n`,
  );
});
