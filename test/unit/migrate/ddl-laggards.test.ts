/**
 * Reading an ON CLUSTER timeout (src/migrate/ddl-laggards.ts): the
 * task it names, the servers a task's node lists, their readable form.
 * Naming the servers that have not finished a real task on the cluster is
 * test/integration/cluster-migrate.test.ts's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clickhouseErrorCode, ddlTimeoutTask } from '../../../src/clickhouse/errors.js';
import { DdlTimeoutError, readableHost, taskHosts } from '../../../src/migrate/ddl-laggards.js';

// What 18.16 answered in CI (TIMEOUT_EXCEEDED over HTTP), shortened after the part read.
const TIMEOUT_18_16 =
  'Code: 159, e.displayText() = DB::Exception: Watching task /clickhouse/agentledger/task_queue/ddl/query-0000000715 is executing longer than distributed_ddl_task_timeout (=180) seconds. There are 1 unfinished hosts (0 of them are currently active), they are going to execute the query in background';

test('the task of an ON CLUSTER timeout, in either error format; nothing for other failures', () => {
  assert.equal(ddlTimeoutTask(new Error(TIMEOUT_18_16)), '/clickhouse/agentledger/task_queue/ddl/query-0000000715');
  // Current servers: "Code: 159. DB::Exception: …", the code parsed by @clickhouse/client.
  const current = Object.assign(new Error('Watching task /clickhouse/task_queue/ddl/query-0001006701 is executing longer than distributed_ddl_task_timeout (=180) seconds.'), { code: '159' });
  assert.equal(ddlTimeoutTask(current), '/clickhouse/task_queue/ddl/query-0001006701');
  // The same code for another timeout (a query over max_execution_time) names no task.
  assert.equal(ddlTimeoutTask(new Error('Code: 159, e.displayText() = DB::Exception: Timeout exceeded: elapsed 5.0 seconds, maximum: 5')), undefined);
  // Another code with a task-like text is not a DDL timeout.
  assert.equal(ddlTimeoutTask(new Error(TIMEOUT_18_16.replace('Code: 159', 'Code: 160'))), undefined);
  assert.equal(ddlTimeoutTask('not an error'), undefined);
});

test("a task node's servers as ClickHouse writes them, and readable", () => {
  const node = "version: 1\nquery: CREATE DATABASE IF NOT EXISTS d ON CLUSTER agentledger\nhosts: ['127%2E0%2E0%2E1:19000','127%2E0%2E0%2E1:19001','ch%2Dhost%2E2:9000']\ninitiator: host%2E1:19000\n";
  assert.deepEqual(taskHosts(node), ['127%2E0%2E0%2E1:19000', '127%2E0%2E0%2E1:19001', 'ch%2Dhost%2E2:9000']);
  assert.deepEqual(taskHosts(node).map(readableHost), ['127.0.0.1:19000', '127.0.0.1:19001', 'ch-host.2:9000']);
  assert.deepEqual(taskHosts('version: 1\nquery: x\nhosts: []\n'), []);
  assert.deepEqual(taskHosts('version: 1\n'), []);
  // A name that is not percent-encoding is kept as it is.
  assert.equal(readableHost('bad%zzhost:9000'), 'bad%zzhost:9000');
});

test('the error names the servers first, and keeps ClickHouse text and code', () => {
  const err = new DdlTimeoutError(['127.0.0.1:19003'], new Error(TIMEOUT_18_16));
  assert.match(err.message, /^an ON CLUSTER statement was not run by 127\.0\.0\.1:19003 within distributed_ddl_task_timeout: /);
  assert.ok(err.message.endsWith(TIMEOUT_18_16));
  assert.equal(clickhouseErrorCode(err), 159);
  assert.equal(ddlTimeoutTask(err), '/clickhouse/agentledger/task_queue/ddl/query-0000000715');
});
