/**
 * `report` and `sessions` print stored ids and details with their control
 * characters escaped: an id planted with an ESC sequence, CR, LF and NUL
 * cannot drive the terminal or break a row; --json carries it exactly.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { migrate } from '../../src/migrate/migrate.js';
import { testContext, type TestContext } from '../support/context.js';
import { runCli } from '../support/processes.js';

const HOSTILE = 'id\u001b]0;pwned\u0007\u001b[2J\r\nrow\u0000\u009b\u2028\\end';
const ESCAPED = 'id\\x1b]0;pwned\\x07\\x1b[2J\\r\\nrow\\x00\\x9b\\u2028\\\\end';
/** Any character a terminal acts on, other than the newlines that end rows. */
const RAW = /[^\P{Cc}\n]|[\u2028\u2029]/u;

let ctx: TestContext;
before(async () => {
  ctx = await testContext('terminal_output');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, createLogger('warn'));
  const ch = createClickHouse(ctx.config.clickhouse);
  try {
    const at = '2025-03-01 00:00:00';
    const kafka = { kafka_topic: 'terminal', kafka_partition: 0, kafka_offset: 1, ingested_at: at };
    await ch.insert({
      table: 'envelopes',
      format: 'JSONEachRow',
      values: [{ loop_id: HOSTILE, seq: 3, time: at, time_text: '2025-03-01T00:00:00Z', kind: 'ToolCalled', verdict: 'mismatch', detail: `carried ${HOSTILE}`, ...kafka }],
    });
    await ch.insert({ table: 'craze_events', format: 'JSONEachRow', values: [{ session_id: HOSTILE, incarnation: 'i1', seq: 1, at, verdict: 'ok', ...kafka }] });
  } finally {
    await ch.close();
  }
});
after(() => ctx?.cleanup());

async function cli(...args: string[]): Promise<string> {
  const run = runCli(args, ctx.env);
  let stdout = '';
  run.child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  assert.equal(await run.exited, 0, run.stderr());
  return stdout;
}

test('report: the violation row shows the id and detail escaped, on one line', async () => {
  const out = await cli('report');
  assert.doesNotMatch(out, RAW);
  const rows = out.split('\n').filter((l) => l.includes('mismatch') && l.startsWith('  '));
  assert.deepEqual(rows, [`  mismatch        ${ESCAPED} seq 3: carried ${ESCAPED}`]);
  const json = JSON.parse(await cli('report', '--json')) as { violations: { loopId: string; detail: string }[] };
  assert.deepEqual(
    json.violations.map((v) => [v.loopId, v.detail]),
    [[HOSTILE, `carried ${HOSTILE}`]],
  );
});

test('sessions: the session id escaped, one row per session', async () => {
  const out = await cli('sessions');
  assert.doesNotMatch(out, RAW);
  const lines = out.trimEnd().split('\n');
  assert.equal(lines.length, 2, 'the header and one row');
  assert.ok(lines[1]!.startsWith(`${ESCAPED} `), lines[1]);
  const json = JSON.parse(await cli('sessions', '--json')) as { sessionId: string }[];
  assert.deepEqual(
    json.map((s) => s.sessionId),
    [HOSTILE],
  );
});
