/**
 * The test runner's readings: a spec reporter's totals, its failing tests'
 * digest repeated under the summary, and the lines of
 * ClickHouse's error log that say the server itself broke (those fail the
 * run; a graceful stop, a refused query or a reset connection do not).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CLUSTER_FAULT, failureDigest, serverFaults, specCounts } from '../../support/run-suite.js';

test('specCounts reads the totals a spec reporter prints last', () => {
  const output = ['✔ a (1ms)', 'ℹ tests 7', 'ℹ suites 0', 'ℹ pass 5', 'ℹ fail 1', 'ℹ cancelled 0', 'ℹ skipped 0', 'ℹ todo 1', 'ℹ duration_ms 12'].join('\n');
  assert.deepEqual(specCounts(output), { tests: 7, pass: 5, fail: 1, skipped: 0, todo: 1 });
  assert.deepEqual(specCounts('no summary at all'), { tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0 });
});

test('serverFaults keeps a signal and a C++ exception escaping the server, not a query error, a reset connection or a graceful stop', () => {
  const log = [
    '2026.12.01 10:41:30.884696 [ 22 ] {} <Error> HTTPHandler: Code: 164, e.displayText() = DB::Exception: Cannot insert into table in readonly mode',
    '2026.12.01 10:41:34.261659 [ 2 ] {} <Error> BaseDaemon: (from thread 22) Received signal Segmentation fault (11).',
    '2026.12.01 10:41:52.502349 [ 23 ] {} <Error> ServerErrorHandler: Poco::Exception. Code: 1000, e.code() = 104, e.displayText() = Connection reset by peer',
    '2026.12.01 10:42:00.000000 [ 1 ] {} <Information> Application: Received termination signal (Terminated)',
    '2026.12.01 11:02:29.934000 [ 9 ] {q} <Error> executeQuery: std::exception. Code: 1001, type: std::bad_weak_ptr, e.what() = bad_weak_ptr',
    '2026.12.01 11:03:00.000000 [ 9 ] {q} <Error> executeQuery: Code: 10010, e.displayText() = not a fault',
  ].join('\n');
  const faults = serverFaults(log);
  assert.equal(faults.length, 2);
  assert.match(faults[0] ?? '', /Segmentation fault/);
  assert.match(faults[1] ?? '', /bad_weak_ptr/);
  assert.deepEqual(serverFaults(log.split('\n')[0] ?? ''), []);
});

test("CLUSTER_FAULT keeps 18.16's DDL worker stopping for good and a signal, not its retries while ZooKeeper is away", () => {
  const log = [
    "2026.12.05 13:53:12.901934 [ 16 ] {56a9} <Error> void DB::DDLWorker::run(): Code: 999, e.displayText() = Coordination::Exception: All connection tries failed while connecting to ZooKeeper. Addresses: 127.0.0.1:2191",
    '2026.12.05 13:54:01.000000 [ 16 ] {} <Error> DDLWorker: Unexpected ZooKeeper error: Code: 999, e.displayText() = Coordination::Exception: Node exists, path: /clickhouse/agentledger/task_queue/ddl/query-0000000715/shards/a,b/executed',
    '0. /usr/bin/clickhouse-server(StackTrace::StackTrace()+0x16) [0x5a0e8b6]',
    '. Terminating.',
    "2026.12.05 13:55:00.000000 [ 16 ] {} <Error> DDLWorker: Terminating. Cannot initialize DDL queue.: Code: 999, e.displayText() = Coordination::Exception: Connection loss",
    '2026.12.05 13:55:01.000000 [ 16 ] {} <Information> DDLWorker: An error occured while checking and cleaning task query-0000018789 from queue: Code: 999',
    '2026.12.05 13:56:00.000000 [ 2 ] {} <Error> BaseDaemon: (from thread 22) Received signal Segmentation fault (11).',
  ].join('\n');
  const faults = serverFaults(log, 5, CLUSTER_FAULT);
  assert.equal(faults.length, 3);
  assert.match(faults[0] ?? '', /Unexpected ZooKeeper error: .*Node exists/);
  assert.match(faults[1] ?? '', /Terminating\. Cannot initialize/);
  assert.match(faults[2] ?? '', /Segmentation fault/);
});

test("failureDigest repeats the failing tests' block without stack frames, each line and the whole cut short", () => {
  const output = [
    '✖ x (1.4ms)',
    '  AssertionError [ERR_ASSERTION]: early copy',
    'ℹ fail 1',
    '',
    '✖ failing tests:',
    '',
    'test at dist/test/integration/a.test.js:1:63',
    '✖ the tree read equals the full read (1.4ms)',
    '  AssertionError [ERR_ASSERTION]: after the sweep: {"root":"x"}',
    '      at TestContext.<anonymous> (file:///a.test.js:1:84)',
    '      at Test.run (node:internal/test_runner/test:796:25)',
    `  actual: '${'y'.repeat(500)}'`,
  ].join('\n');
  const digest = failureDigest(output, 2000, 80);
  assert.deepEqual(digest.split('\n'), [
    'test at dist/test/integration/a.test.js:1:63',
    '✖ the tree read equals the full read (1.4ms)',
    '  AssertionError [ERR_ASSERTION]: after the sweep: {"root":"x"}',
    `  actual: '${'y'.repeat(80 - 11)}…`,
  ]);
  assert.ok(!digest.includes('early copy'), 'only the last block, the one after the summary');
  assert.equal(failureDigest(output, 100, 80), 'test at dist/test/integration/a.test.js:1:63\n✖ the tree read equals the full read (1.4ms)\n    …');
  assert.equal(failureDigest('✔ all passed\nℹ fail 0'), '');
});
