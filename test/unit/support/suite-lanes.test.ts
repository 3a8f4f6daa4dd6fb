/**
 * The suite's schedule (suite-lanes.ts) and its measurements
 * (suite-times.ts): which files may run side by side, in what order, and
 * the CPU share read from /proc/stat.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALONE, CPU_BUDGET, laneOf, plan, toStart, UNMEASURED, type Planned } from '../../support/suite-lanes.js';
import { busyShare, parseCpuLine, schedulingTimes, timesTable } from '../../support/suite-times.js';

const at = (seconds: number, cpu: number) => ({ seconds, cpu });
const times = {
  'test/integration/a-wait.test.ts': at(100, 0.2),
  'test/integration/b-wait.test.ts': at(90, 0.3),
  'test/integration/c-busy.test.ts': at(80, 0.8),
  'test/integration/cluster-faults.test.ts': at(500, 0.3),
  'test/integration/cluster-queries.test.ts': at(60, 0.4),
  'test/integration/envelope-faults.test.ts': at(40, 0.2),
  'test/integration/alerts.test.ts': at(30, 0.3),
};
const files = ['a-wait.test.ts', 'alerts.test.ts', 'b-wait.test.ts', 'c-busy.test.ts', 'cluster-faults.test.ts', 'cluster-queries.test.ts', 'envelope-faults.test.ts', 'never-measured.test.ts'];
const byName = (planned: readonly Planned[]): Map<string, Planned> => new Map(planned.map((p) => [p.file, p]));

test('plan: cluster files in their lane, the ones an ALONE file may not overlap last; ALONE files first in the single-node lane, then longest first', () => {
  const planned = plan(files, times);
  assert.deepEqual(
    planned.filter((p) => p.lane === 'cluster').map((p) => p.file),
    ['cluster-faults.test.ts', 'cluster-queries.test.ts'],
  );
  assert.deepEqual(
    planned.filter((p) => p.lane === 'node').map((p) => p.file),
    ['envelope-faults.test.ts', 'alerts.test.ts', 'a-wait.test.ts', 'b-wait.test.ts', 'c-busy.test.ts', 'never-measured.test.ts'],
  );
  const never = byName(planned).get('never-measured.test.ts');
  assert.equal(never?.seconds, UNMEASURED.seconds);
  assert.equal(laneOf('cluster-x.test.ts'), 'cluster');
  assert.equal(laneOf('stack.test.ts'), 'node');
});

test('toStart: an ALONE file waits for an empty single-node lane and holds the lane while it runs; a cluster file it may not overlap waits for it', () => {
  const p = byName(plan(files, times));
  const get = (f: string): Planned => p.get(f) ?? assert.fail(f);
  // At the start: the first cluster file (not one an ALONE file holds) and the first ALONE file.
  const first = toStart({ pending: plan(files, times), running: [], clusterReady: true });
  assert.deepEqual(first.map((f) => f.file), ['cluster-faults.test.ts', 'envelope-faults.test.ts']);
  // An ALONE file runs: nothing else starts in the single-node lane.
  const rest = plan(files, times).filter((f) => !first.includes(f));
  assert.deepEqual(toStart({ pending: rest, running: first, clusterReady: true }), []);
  // A plain file runs and an ALONE file waits: nothing else starts beside the plain one, so the lane empties.
  assert.deepEqual(toStart({ pending: [get('alerts.test.ts'), get('b-wait.test.ts')], running: [get('a-wait.test.ts')], clusterReady: true }), []);
  // envelope-faults runs: cluster-queries (in its notBeside) waits, even with the cluster lane empty.
  assert.deepEqual(toStart({ pending: [get('cluster-queries.test.ts')], running: [get('envelope-faults.test.ts')], clusterReady: true }), []);
  // cluster-queries runs: alerts (which may not overlap it) waits, and the plain files go on meanwhile.
  const meanwhile = toStart({ pending: [get('alerts.test.ts'), get('a-wait.test.ts')], running: [get('cluster-queries.test.ts')], clusterReady: true });
  assert.deepEqual(meanwhile.map((f) => f.file), ['a-wait.test.ts']);
  assert.ok(ALONE['alerts.test.ts']?.notBeside?.includes('cluster-queries.test.ts'));
});

test('toStart: two single-node files side by side only within the CPU budget, counting the cluster file that runs; an empty lane always takes its next file', () => {
  const p = byName(plan(files, times));
  const get = (f: string): Planned => p.get(f) ?? assert.fail(f);
  const waits = [get('a-wait.test.ts'), get('b-wait.test.ts'), get('c-busy.test.ts')];
  // Without the cluster: 0.2 + 0.3 fits, the busy one waits.
  assert.deepEqual(toStart({ pending: waits, running: [], clusterReady: false }).map((f) => f.file), ['a-wait.test.ts', 'b-wait.test.ts']);
  assert.ok(0.2 + 0.3 <= CPU_BUDGET);
  // The busy one alone in an empty lane: it runs, whatever it costs.
  assert.deepEqual(toStart({ pending: [get('c-busy.test.ts')], running: [], clusterReady: false }).map((f) => f.file), ['c-busy.test.ts']);
  // Beside cluster-faults (0.3): 0.3 + 0.2 + 0.3 = 0.8 still fits; beside a cluster file that leaves 0.4 of the budget, only the first does.
  assert.deepEqual(toStart({ pending: waits, running: [get('cluster-faults.test.ts')], clusterReady: true }).map((f) => f.file), ['a-wait.test.ts', 'b-wait.test.ts']);
  const busyCluster: Planned = { ...get('cluster-faults.test.ts'), cpu: CPU_BUDGET - 0.4 };
  assert.deepEqual(toStart({ pending: waits, running: [busyCluster], clusterReady: true }).map((f) => f.file), ['a-wait.test.ts']);
  // Never more than two single-node files.
  const light = (file: string): Planned => ({ file, lane: 'node', seconds: 10, cpu: 0.05 });
  assert.equal(toStart({ pending: [light('x'), light('y'), light('z')], running: [], clusterReady: false }).length, 2);
  // The cluster lane waits for the cluster.
  assert.deepEqual(toStart({ pending: [get('cluster-faults.test.ts')], running: [], clusterReady: false }), []);
});

test('toStart while the unit tests run: only an ALONE file that may run beside them, one at a time; no cluster file, no other file', () => {
  const p = byName(plan(files, times));
  const get = (f: string): Planned => p.get(f) ?? assert.fail(f);
  const all = plan(files, times);
  assert.deepEqual(toStart({ pending: all, running: [], clusterReady: true, unitRunning: true }).map((f) => f.file), ['envelope-faults.test.ts']);
  assert.deepEqual(toStart({ pending: all.filter((f) => f.file !== 'envelope-faults.test.ts'), running: [get('envelope-faults.test.ts')], clusterReady: true, unitRunning: true }), []);
  // A file that asserts timing waits for the unit tests, and so does every plain file.
  const timing: Planned = { file: 'worker-stop.test.ts', lane: 'node', seconds: 30, cpu: 0.5, alone: ALONE['worker-stop.test.ts']! };
  assert.equal(timing.alone?.besideUnit, undefined);
  assert.deepEqual(toStart({ pending: [timing, get('a-wait.test.ts')], running: [], clusterReady: true, unitRunning: true }), []);
  assert.deepEqual(toStart({ pending: [timing, get('a-wait.test.ts')], running: [], clusterReady: true, unitRunning: false }).map((f) => f.file), ['worker-stop.test.ts']);
  // Every ALONE file either asserts timing or may run beside the unit tests, and the timing ones may not.
  for (const [file, alone] of Object.entries(ALONE)) assert.equal(alone.besideUnit === true, !/^asserts /.test(alone.why), file);
});

test('/proc/stat: busy and total jiffies (idle and iowait are not busy), and the share between two samples', () => {
  const a = parseCpuLine('cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4');
  assert.deepEqual(a, { busy: 150, total: 1000 });
  const b = parseCpuLine('cpu  250 0 100 1550 100 0 0 0 0 0');
  assert.equal(busyShare(a, b), 200 / 1000);
  assert.equal(busyShare(a, a), 0);
  assert.throws(() => parseCpuLine('intr 1 2 3'), /cpu line/);
});

test('the times scheduled by: the last run over the committed measurement, except a CPU share measured beside another file', () => {
  const measured = { f: { seconds: 10, cpu: 0.2, alone: true }, g: { seconds: 5, cpu: 0.1, alone: true } };
  const last = { f: { seconds: 12, cpu: 0.9, alone: false }, g: { seconds: 6, cpu: 0.3, alone: true }, h: { seconds: 1, cpu: 0.5, alone: false } };
  assert.deepEqual(schedulingTimes(measured, last), {
    f: { seconds: 12, cpu: 0.2, alone: true },
    g: { seconds: 6, cpu: 0.3, alone: true },
    h: { seconds: 1, cpu: 0.5, alone: false },
  });
  const table = timesTable({ short: { seconds: 1, cpu: 0.5, alone: true }, long: { seconds: 30.25, cpu: 0.1, alone: false } }).split('\n');
  assert.match(table[1] ?? '', /^ {2}long +30\.3 s {2}cpu +10 % {2}\(beside another file\)$/);
  assert.match(table[2] ?? '', /^ {2}short +1\.0 s {2}cpu +50 %$/);
});
