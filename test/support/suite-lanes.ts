/**
 * Which integration files run side by side (run-suite.ts drives it; this
 * file decides). Every file has its own database, topics, group and queue
 * prefix, so most files share nothing but the machine's two cores:
 *
 * - the **cluster lane**: the files that use the local cluster
 *   (`cluster-*.test.ts`), one after another, from the moment the cluster is
 *   up, beside everything else: they use servers no other file touches;
 * - the **single-node lane**: every other file, longest first, and two at
 *   once only where the CPU they measured alone (suite-times.ts), added to
 *   that of the cluster file running, stays within CPU_BUDGET: two files
 *   that mostly wait on Kafka's or ClickHouse's clocks gain from sharing
 *   the cores; two that compute gain nothing and starve each other's
 *   heartbeats;
 * - the files of ALONE run with no other single-node file beside them, for
 *   the reason given, and not beside the cluster files named with it.
 */

/** The lanes: the local cluster's files, and the single-node stack's. */
export type Lane = 'cluster' | 'node';

/** Why a file runs with no other single-node file beside it, and which cluster files it may not overlap either. */
export interface Alone {
  readonly why: string;
  readonly notBeside?: readonly string[];
  /**
   * It may run while the unit tests do: they use no service and it asserts
   * no timing (the files that assert how fast something happens may not).
   */
  readonly besideUnit?: boolean;
}

/**
 * The one list of files that run alone in the single-node lane. A file goes
 * here when it stops or restarts a service every other file uses, touches
 * the shared `agentledger` database, or asserts how fast something happens
 * (another file's load would make that a measure of the neighbour).
 */
export const ALONE: Readonly<Record<string, Alone>> = {
  'envelope-faults.test.ts': {
    why: "stops and starts the stack's ClickHouse server",
    // Its last test runs `serve` and `worker` against the single-node server.
    notBeside: ['cluster-queries.test.ts'],
    besideUnit: true,
  },
  'alerts.test.ts': {
    why: "restarts the stack's Redis",
    // Its workers keep their leases and queues in the stack's Redis.
    notBeside: ['cluster-workers.test.ts', 'cluster-queries.test.ts'],
    besideUnit: true,
  },
  'least-privilege.test.ts': { why: 'creates users and grants on the shared `agentledger` database and reads it as the dashboard user', besideUnit: true },
  'grafana-dashboard.test.ts': { why: 'migrates the shared `agentledger` database and reads it as the dashboard user', besideUnit: true },
  'worker-stop.test.ts': { why: 'asserts a stop within its grace and an alert within seconds of its envelope' },
  'worker-rolling.test.ts': { why: 'asserts each rolling stop within its grace' },
  'ingest-stall.test.ts': { why: "asserts the stall watchdog's timing against ClickHouse held back by a proxy" },
  'service-errors.test.ts': { why: 'asserts each unreachable service is reported fast' },
  // Not here: alertmanager.test.ts restarts the stack's Alertmanager, which no other file uses.
};

/**
 * The share of both cores that the files running side by side may add up
 * to, each counted at what it measured alone (1 is both cores busy). Not 1:
 * in a lanes run on 2026-12-06 the committed shares times the files'
 * seconds came to 1,363 s of both cores, where /proc/stat measured 732 s
 * over the whole run (the cores 48 % busy with a budget of 1.2). A share
 * measured alone overstates what a file takes beside another (ClickHouse
 * spreads a lone query over both cores, and the services' common work is
 * counted in every file), so the budget is about that factor: it still
 * keeps two CPU-bound files apart while a cluster file runs.
 */
export const CPU_BUDGET = 2.0;
/** At most this many single-node files at once. */
export const NODE_WIDTH = 2;
/**
 * What a file never measured is taken to cost: a whole core and a minute,
 * so it runs alone, early.
 */
export const UNMEASURED = { seconds: 60, cpu: 0.5 } as const;

export interface Planned {
  readonly file: string;
  readonly lane: Lane;
  readonly seconds: number;
  readonly cpu: number;
  readonly alone?: Alone;
}

/** The lane of an integration file (its base name). */
export function laneOf(file: string): Lane {
  return file.startsWith('cluster-') ? 'cluster' : 'node';
}

/**
 * Every file planned, in the order each lane takes them: the cluster lane
 * in name order but the files an ALONE file may not overlap last (so the
 * ALONE files can run while the first cluster files do); the single-node
 * lane ALONE files first, then longest first.
 */
export function plan(files: readonly string[], times: Readonly<Record<string, { seconds: number; cpu: number }>>): Planned[] {
  const held = new Set(Object.values(ALONE).flatMap((a) => a.notBeside ?? []));
  const planned = files.map((file): Planned => {
    const t = times[`test/integration/${file}`] ?? UNMEASURED;
    const alone = ALONE[file];
    return { file, lane: laneOf(file), seconds: t.seconds, cpu: t.cpu, ...(alone ? { alone } : {}) };
  });
  const cluster = planned.filter((p) => p.lane === 'cluster').sort((a, b) => Number(held.has(a.file)) - Number(held.has(b.file)) || a.file.localeCompare(b.file));
  const node = planned.filter((p) => p.lane === 'node').sort((a, b) => Number(b.alone !== undefined) - Number(a.alone !== undefined) || b.seconds - a.seconds || a.file.localeCompare(b.file));
  return [...cluster, ...node];
}

/** What is running now, and whether the cluster's files may start. */
export interface LaneState {
  readonly pending: readonly Planned[];
  readonly running: readonly Planned[];
  readonly clusterReady: boolean;
  /** The unit tests run now (they take both cores): only an ALONE file that may run beside them starts. */
  readonly unitRunning?: boolean;
}

/**
 * The files to start now, in `pending`'s order: at most one cluster file at
 * a time once the cluster is ready; in the single-node lane an ALONE file
 * when that lane is empty and no cluster file it may not overlap runs, and
 * otherwise the first file that fits the CPU budget beside what runs. A
 * lane with nothing running always takes its next file, whatever it costs.
 * While an ALONE file waits for the lane to empty, nothing else starts in
 * it, so it is not starved. While the unit tests run, only the ALONE files
 * that may run beside them start, one at a time: those would otherwise run
 * with the single-node lane to themselves after the unit tests, so each
 * second they run beside them is a second off the lane.
 */
export function toStart(state: LaneState): Planned[] {
  if (state.unitRunning === true) {
    const first = state.pending.find((p) => p.lane === 'node' && p.alone?.besideUnit === true);
    return first !== undefined && !state.running.some((r) => r.lane === 'node') ? [first] : [];
  }
  const running = [...state.running];
  const started: Planned[] = [];
  const blocks = (cluster: Planned): boolean => running.some((r) => r.alone?.notBeside?.includes(cluster.file) === true);
  const clusterFile = state.pending.find((p) => p.lane === 'cluster');
  if (state.clusterReady && clusterFile !== undefined && !running.some((r) => r.lane === 'cluster') && !blocks(clusterFile)) {
    running.push(clusterFile);
    started.push(clusterFile);
  }
  const node = (): Planned[] => running.filter((r) => r.lane === 'node');
  if (node().some((r) => r.alone !== undefined)) return started;
  const clusterRunning = running.filter((r) => r.lane === 'cluster').map((r) => r.file);
  const waitingAlone = state.pending.filter((p) => p.lane === 'node' && p.alone !== undefined && !p.alone.notBeside?.some((f) => clusterRunning.includes(f)));
  if (waitingAlone[0] !== undefined) {
    if (node().length === 0) started.push(waitingAlone[0]);
    return started;
  }
  for (const candidate of state.pending) {
    if (candidate.lane !== 'node' || candidate.alone !== undefined) continue;
    const beside = node();
    if (beside.length >= NODE_WIDTH) break;
    const cpu = running.reduce((sum, r) => sum + r.cpu, 0) + candidate.cpu;
    if (beside.length === 0 || cpu <= CPU_BUDGET) {
      running.push(candidate);
      started.push(candidate);
    }
  }
  return started;
}
