/**
 * No secret is ever printed (issue 9, "Secrets never printed"): a distinctive
 * secret is planted in every password-like setting (each *_PASSWORD variable,
 * the passwords in the ClickHouse and Redis URLs, the alert webhook's secret,
 * the password and token in its URL, serve's token), then every command runs
 * at debug level against the real stack and against endpoints where nothing
 * listens, so that both normal output and every error path are printed. Not
 * one byte of stdout or stderr may hold the secret, in plain text, URL-encoded
 * or in a Basic-auth header.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { envSchema } from '../../src/config/index.js';
import { closedPort, runToEnd } from '../support/cli-run.js';
import { testContext } from '../support/context.js';
// Alphanumeric core (found in any encoding that keeps letters) plus characters a URL must encode.
const CORE = `Pl4nted${randomBytes(6).toString('hex')}`;
const SECRET = `${CORE}/+@ %:x`;
const USER = 'planted_user';
let ctx;
const dir = mkdtempSync(join(tmpdir(), 'agentledger-secrets-'));
const emptyDir = mkdtempSync(join(dir, 'journals-'));
const verifyFile = join(dir, 'few.jsonl');
before(async () => {
    ctx = await testContext('secrets');
    const fixture = fileURLToPath(new URL('../../../test/fixtures/envelopes/honest.jsonl', import.meta.url));
    writeFileSync(verifyFile, readFileSync(fixture, 'utf8').split('\n').slice(0, 3).join('\n') + '\n');
});
after(async () => {
    await ctx.cleanup();
});
/** A URL with `user:SECRET` as its user-info. */
function withPassword(url, user) {
    const u = new URL(url);
    u.username = user;
    u.password = encodeURIComponent(SECRET);
    return u.toString();
}
/**
 * `env` with the secret in every *_PASSWORD setting the schema knows (and the
 * user or mechanism each needs), in the Redis URL, and in the alert webhook's
 * secret and URL (as its password and, as Slack's carry their token, in its
 * path; nothing listens on its port); with `clickhouse`, in
 * the ClickHouse settings and URL too (a wrong password there stops most
 * commands early, so one run leaves ClickHouse's right).
 */
function planted(env, clickhouse) {
    const keys = Object.keys(envSchema.shape);
    const out = { ...env, AGENTLEDGER_LOG_LEVEL: 'debug', AGENTLEDGER_KAFKA_SASL_MECHANISM: 'scram-sha-512' };
    for (const key of keys.filter((k) => k.endsWith('_PASSWORD'))) {
        if (!clickhouse && key.includes('CLICKHOUSE'))
            continue;
        out[key] = SECRET;
        for (const user of [key.replace(/_PASSWORD$/, '_USER'), key.replace(/_PASSWORD$/, '_USERNAME')]) {
            if (keys.includes(user) && out[user] === undefined)
                out[user] = USER;
        }
    }
    out['AGENTLEDGER_REDIS_URL'] = withPassword(env['AGENTLEDGER_REDIS_URL'] ?? 'redis://127.0.0.1:6379', 'agentledger');
    out['AGENTLEDGER_ALERT_WEBHOOK_URL'] = withPassword(`http://127.0.0.1:9/services/${encodeURIComponent(SECRET)}`, 'hook');
    out['AGENTLEDGER_ALERT_WEBHOOK_SECRET'] = SECRET;
    out['AGENTLEDGER_SERVE_TOKEN'] = SECRET;
    if (clickhouse)
        out['AGENTLEDGER_CLICKHOUSE_URL'] = withPassword(env['AGENTLEDGER_CLICKHOUSE_URL'] ?? 'http://127.0.0.1:8123', env['AGENTLEDGER_CLICKHOUSE_USER'] ?? USER);
    return out;
}
const RUNS = [
    ['--help'],
    ['config'],
    ['config', '--json'],
    ['doctor'],
    ['doctor', '--json'],
    ['migrate'],
    ['sessions'],
    ['sessions', '--json'],
    ['report'],
    ['report', '--json'],
    ['loops'],
    ['loops', '--json'],
    ['spend'],
    ['spend', '--json', '--by', 'root'],
    ['verify', verifyFile],
    ['craze', 'push', emptyDir],
    ['ingest', '--idle-exit-ms', '500'],
    ['ingest', '--no-migrate', '--idle-exit-ms', '500'],
    ['produce-demo', '--loops', '1', '--envelopes', '1'],
    ['rollups', 'sweep'],
    ['alerts'],
    ['alerts', '--json', '--state', 'all'],
    ['worker', '--stop-after-ms', '1500'],
    ['serve', '--port', '0', '--stop-after-ms', '1500'],
];
/** Every form of the secret that must never be printed. */
function leaks(text, env) {
    const users = new Set([USER, 'agentledger', 'default', env['AGENTLEDGER_CLICKHOUSE_USER'] ?? '']);
    const forms = [CORE, encodeURIComponent(SECRET), ...[...users].map((u) => Buffer.from(`${u}:${SECRET}`).toString('base64'))];
    return forms.filter((f) => text.includes(f));
}
async function runAll(env) {
    const results = await Promise.all(RUNS.map((args) => runToEnd(args, env, { cwd: dir, timeoutMs: 90_000 })));
    const byRun = new Map();
    RUNS.forEach((args, i) => byRun.set(args.join(' '), results[i]));
    for (const [run, r] of byRun) {
        const found = leaks(r.stdout + r.stderr, env);
        assert.deepEqual(found, [], `\`agentledger ${run}\` printed the secret:\n${r.stdout}\n${r.stderr}`);
        assert.notEqual(r.code, 'killed', `\`agentledger ${run}\` hung:\n${r.stderr.slice(-2000)}`);
    }
    return byRun;
}
const get = (m, run) => m.get(run) ?? assert.fail(`no run ${run}`);
test('every command of the CLI is run here', async () => {
    const help = await runToEnd(['--help'], {}, { cwd: dir });
    const names = [...help.stdout.matchAll(/^ {2}(\S+) {2,}/gm)].map((m) => m[1]);
    assert.ok(names.length >= 9, help.stdout);
    for (const name of names)
        assert.ok(RUNS.some((args) => args[0] === name), `command ${name} is not run by this test`);
});
test('real stack, every secret planted: logins fail, nothing is printed', { timeout: 180_000 }, async () => {
    const env = planted(ctx.env, true);
    const runs = await runAll(env);
    // The secret was in use: config saw it (and hid it), ClickHouse refused it.
    const shown = JSON.parse(get(runs, 'config --json').stdout);
    assert.equal(shown.kafka.sasl.password, '(set)');
    assert.deepEqual([shown.alerts.webhook.url, shown.alerts.webhook.secret], ['http://127.0.0.1:9/***', '(set)']);
    assert.match(shown.clickhouse.url, /:\*\*\*@/);
    assert.match(shown.redis.url, /:\*\*\*@/);
    assert.equal(get(runs, 'migrate').code, 1);
    assert.match(get(runs, 'migrate').stderr, /authentication failed/);
});
test('real stack with the right ClickHouse login, secrets in Kafka SASL and Redis: the commands get further, nothing is printed', { timeout: 180_000 }, async () => {
    const runs = await runAll(planted(ctx.env, false));
    assert.equal(get(runs, 'migrate').code, 0, get(runs, 'migrate').stderr);
    assert.equal(get(runs, 'verify ' + verifyFile).code, 0, get(runs, 'verify ' + verifyFile).stderr);
    assert.match(get(runs, 'doctor').stdout, /^FAIL kafka +Kafka at \S+ refused the SASL login/m);
    assert.match(get(runs, 'produce-demo --loops 1 --envelopes 1').stderr, /SASL/);
});
test('nothing listening anywhere, every secret planted: every error path, nothing is printed', { timeout: 180_000 }, async () => {
    const [kafka, clickhouse, redis] = [await closedPort(), await closedPort(), await closedPort()];
    const env = planted({ ...ctx.env, AGENTLEDGER_KAFKA_BROKERS: `127.0.0.1:${kafka}`, AGENTLEDGER_CLICKHOUSE_URL: `http://127.0.0.1:${clickhouse}`, AGENTLEDGER_REDIS_URL: `redis://127.0.0.1:${redis}` }, true);
    const runs = await runAll(env);
    const doctor = get(runs, 'doctor');
    assert.equal(doctor.code, 1);
    assert.equal(doctor.stdout.match(/^FAIL /gm)?.length, 3, doctor.stdout);
    for (const run of ['migrate', 'sessions', 'report', 'loops', 'spend', 'alerts', 'craze push ' + emptyDir, 'ingest --no-migrate --idle-exit-ms 500']) {
        assert.equal(get(runs, run).code, 1, `${run}: ${get(runs, run).stderr}`);
    }
});
//# sourceMappingURL=secrets.test.js.map