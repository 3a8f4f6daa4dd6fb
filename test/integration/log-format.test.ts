/**
 * AGENTLEDGER_LOG_FORMAT against the real stack: with stderr piped (as under
 * a supervisor or a log shipper) `auto` writes JSON, every line of it;
 * `text` writes the terminal's lines. No secret in either. (kafkajs's lines
 * go through the same logger: test/unit/kafka/client.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runToEnd } from '../support/cli-run.js';
import { testContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
before(async () => {
  ctx = await testContext('log_format');
});
after(async () => {
  await ctx.cleanup();
});

const LEVELS = new Set(['debug', 'info', 'warn', 'error']);

test('auto with stderr piped: every line of migrate, produce-demo and ingest is one JSON object; text is the terminal layout', { timeout: 180_000 }, async () => {
  const json = { ...ctx.env, AGENTLEDGER_LOG_FORMAT: 'auto', AGENTLEDGER_LOG_LEVEL: 'debug' };
  const runs = [
    await runToEnd(['migrate'], json),
    await runToEnd(['produce-demo', '--loops', '5', '--envelopes', '6'], json),
    await runToEnd(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], json, { timeoutMs: 120_000 }),
  ];
  const lines = runs.flatMap((r) => {
    assert.equal(r.code, 0, r.stderr);
    return r.stderr.split('\n').filter((l) => l !== '');
  });
  assert.ok(lines.length > 10, `debug lines of three commands (${lines.length})`);
  const objects = lines.map((line) => {
    const o = JSON.parse(line) as Record<string, unknown>;
    assert.ok(LEVELS.has(String(o['level'])), line);
    assert.match(String(o['time']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, line);
    assert.equal(typeof o['msg'], 'string', line);
    return o;
  });
  assert.ok(objects.some((o) => o['msg'] === 'joined consumer group'), 'ingest said it joined');
  const secret = ctx.env['AGENTLEDGER_CLICKHOUSE_PASSWORD']!;
  assert.ok(secret.length > 0 && !lines.some((l) => l.includes(secret)), 'the ClickHouse password is in no line');

  const text = await runToEnd(['ingest', '--no-migrate', '--idle-exit-ms', '1000'], { ...ctx.env, AGENTLEDGER_LOG_FORMAT: 'text', AGENTLEDGER_LOG_LEVEL: 'info' }, { timeoutMs: 120_000 });
  assert.equal(text.code, 0, text.stderr);
  const textLines = text.stderr.split('\n').filter((l) => l !== '');
  assert.ok(textLines.length > 0);
  for (const line of textLines) assert.match(line, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO |WARN |ERROR) \S/, line);
});
