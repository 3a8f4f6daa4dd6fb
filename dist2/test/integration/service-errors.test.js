/**
 * A service that is away, or is not what the settings say, stops a command
 * with one line naming the service, the setting and what to check: no stack
 * trace, no minute of retries (issue 9, findings 6 and 7). Every run here has
 * a safety-net timeout far above what a failing command needs; none is timed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { closedPort, runToEnd } from '../support/cli-run.js';
import { testContext } from '../support/context.js';
let ctx;
let notClickHouse;
let notClickHouseUrl = '';
before(async () => {
    ctx = await testContext('service_errors');
    // An HTTP server that is not ClickHouse, with a terminal escape in its answer.
    notClickHouse = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<html>\u001b[31mNot Found</html>'));
    await new Promise((r) => notClickHouse.listen(0, '127.0.0.1', r));
    notClickHouseUrl = `http://127.0.0.1:${notClickHouse.address().port}`;
});
after(async () => {
    notClickHouse.close();
    await ctx.cleanup();
});
const STACK_LINE = /^\s+at /m;
/** The stderr of a failed command: exactly one line, no stack trace. */
function oneErrorLine(r, what) {
    assert.equal(r.code, 1, `${what}: exit code\n${r.stderr}`);
    assert.doesNotMatch(r.stdout + r.stderr, STACK_LINE, `${what}: a stack trace`);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1, `${what}: one line on stderr, got:\n${r.stderr}`);
    return lines[0] ?? '';
}
test('Kafka unreachable: ingest, craze push, produce and doctor each say so in one line', { timeout: 120_000 }, async () => {
    const port = await closedPort();
    const env = { ...ctx.env, AGENTLEDGER_KAFKA_BROKERS: `127.0.0.1:${port}`, AGENTLEDGER_LOG_LEVEL: 'info' };
    const expected = new RegExp(`Kafka at 127\\.0\\.0\\.1:${port} did not answer \\(Connection error: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\): check .*AGENTLEDGER_KAFKA_BROKERS`);
    const empty = mkdtempSync(join(tmpdir(), 'agentledger-empty-'));
    // ingest with its metrics server listening: a failed start must still end the process.
    const metricsPort = String(await closedPort());
    const [ingest, push, produce, doctor] = await Promise.all([
        runToEnd(['ingest', '--no-migrate'], { ...env, AGENTLEDGER_METRICS_PORT: metricsPort }),
        runToEnd(['craze', 'push', empty], env),
        runToEnd(['produce-demo', '--loops', '1', '--envelopes', '1'], env),
        runToEnd(['doctor'], env),
    ]);
    assert.match(oneErrorLine(ingest, 'ingest'), expected);
    assert.match(oneErrorLine(push, 'craze push'), expected);
    assert.match(oneErrorLine(produce, 'produce-demo'), expected);
    assert.equal(doctor.code, 1, doctor.stderr);
    assert.equal(doctor.stderr, '', 'doctor reports in its table, not in log lines');
    assert.match(doctor.stdout, new RegExp(`^FAIL kafka +${expected.source}`, 'm'));
    assert.match(doctor.stdout, /^(ok|FAIL) +clickhouse .*\n(ok|FAIL) +redis /m, 'the other checks still run');
});
test('ClickHouse: something else at the URL, nothing at the URL, a wrong password', { timeout: 120_000 }, async () => {
    const port = await closedPort();
    const [other, away, wrong, doctorOther, reportWrong] = await Promise.all([
        runToEnd(['migrate'], { ...ctx.env, AGENTLEDGER_CLICKHOUSE_URL: notClickHouseUrl }),
        runToEnd(['migrate'], { ...ctx.env, AGENTLEDGER_CLICKHOUSE_URL: `http://127.0.0.1:${port}` }),
        runToEnd(['migrate'], { ...ctx.env, AGENTLEDGER_CLICKHOUSE_PASSWORD: 'not-the-password' }),
        runToEnd(['doctor'], { ...ctx.env, AGENTLEDGER_CLICKHOUSE_URL: notClickHouseUrl }),
        runToEnd(['report'], { ...ctx.env, AGENTLEDGER_CLICKHOUSE_PASSWORD: 'not-the-password' }),
    ]);
    const notCh = /AGENTLEDGER_CLICKHOUSE_URL http:\/\/127\.0\.0\.1:\d+ is not ClickHouse: GET \/ping answered HTTP 404 \\*"<html>\\*\\u001b\[31mNot Found<\/html>\\*" \(ClickHouse answers \\*"Ok\.\\*"\): check the URL and port/;
    const line = oneErrorLine(other, 'migrate, not ClickHouse');
    assert.match(line, notCh);
    assert.ok(!line.includes('\u001b'), 'the answer is escaped');
    assert.match(oneErrorLine(away, 'migrate, nothing listening'), new RegExp(`ClickHouse at http://127\\.0\\.0\\.1:${port}/? did not answer \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\): check that it runs and AGENTLEDGER_CLICKHOUSE_URL`));
    const login = new RegExp(`ClickHouse at \\S+ refused user \\\\?"${ctx.env['AGENTLEDGER_CLICKHOUSE_USER']}\\\\?": authentication failed \\(code (192|193|516)\\): check AGENTLEDGER_CLICKHOUSE_USER and AGENTLEDGER_CLICKHOUSE_PASSWORD`);
    assert.match(oneErrorLine(wrong, 'migrate, wrong password'), login);
    assert.match(oneErrorLine(reportWrong, 'report, wrong password'), login);
    assert.equal(doctorOther.code, 1);
    assert.match(doctorOther.stdout, new RegExp(`^FAIL clickhouse +${notCh.source}`, 'm'));
});
test('Redis away: doctor says so in one line, no ioredis stack', { timeout: 60_000 }, async () => {
    const port = await closedPort();
    const r = await runToEnd(['doctor'], { ...ctx.env, AGENTLEDGER_REDIS_URL: `redis://:pw@127.0.0.1:${port}` });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, '', 'no "Unhandled error event"');
    assert.doesNotMatch(r.stdout, STACK_LINE);
    assert.match(r.stdout, new RegExp(`^FAIL redis +Redis at redis://:\\*\\*\\*@127\\.0\\.0\\.1:${port} did not answer \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\): check that it runs and AGENTLEDGER_REDIS_URL$`, 'm'));
});
test('--limit beyond the safe integers is a usage error, exit 2, before any query', { timeout: 60_000 }, async () => {
    for (const command of ['report', 'sessions']) {
        const r = await runToEnd([command, '--limit', '99999999999999999999'], ctx.env);
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stderr, `agentledger ${command}: --limit expects a whole number from 0 to 9007199254740991, got "99999999999999999999"\n`);
    }
});
//# sourceMappingURL=service-errors.test.js.map