/**
 * The alert settings (issue 11): their defaults are the rules' own, every
 * variable lands in its field, a wrong value stops the CLI with one line
 * naming the variable and why, and neither the webhook's secret nor the
 * token in its URL is ever shown.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULT_ALERT_RULE_CONFIG, type AlertRuleConfig } from '../../../src/alerts/rules.js';
import type { Webhook } from '../../../src/alerts/webhook.js';
import { ConfigError, parseConfig, redactConfig } from '../../../src/config/index.js';

const BIN = fileURLToPath(new URL('../../support/cli-entry.js', import.meta.url));

/** The one problem line parseConfig reports for `env`. */
function problem(env: Record<string, string>): string {
  try {
    parseConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    assert.equal(err.problems.length, 1, err.problems.join('\n'));
    assert.ok(!err.message.includes('\n'));
    return err.message;
  }
  return assert.fail(`accepted ${JSON.stringify(env)}`);
}

test('defaults: the rules\' own thresholds, a sweep every 30 s, a reminder every hour, evaluations on ingest, no budgets, no webhook', () => {
  assert.deepEqual(parseConfig({}).alerts, {
    sweepMs: 30_000,
    chunkLoops: 2000,
    renotifyMs: 3_600_000,
    evaluateOnIngest: true,
    evaluateGapMs: 5000,
    budgetsFile: undefined,
    rules: DEFAULT_ALERT_RULE_CONFIG,
    webhook: undefined,
    alertmanager: undefined,
  });
});

test('every variable lands in its own field', () => {
  const c = parseConfig({
    AGENTLEDGER_ALERT_SWEEP_MS: '1001',
    AGENTLEDGER_ALERT_RENOTIFY_MS: '1002',
    AGENTLEDGER_ALERT_WINDOW_MS: '1003',
    AGENTLEDGER_ALERT_CONVERGENCE_MIN_WARNINGS: '4',
    AGENTLEDGER_ALERT_CONVERGENCE_COUNT: '6',
    AGENTLEDGER_ALERT_STALLED_AFTER_MS: '1004',
    AGENTLEDGER_ALERT_MAX_AGE_MS: '1005',
    AGENTLEDGER_ALERT_HUMAN_WAIT_MS: '1006',
    AGENTLEDGER_ALERT_SUBAGENT_FAILURE_RATE: '0.3',
    AGENTLEDGER_ALERT_SUBAGENT_MIN_OUTCOMES: '7',
    AGENTLEDGER_ALERT_GAP_GRACE_MS: '1007',
    AGENTLEDGER_ALERT_WEBHOOK_URL: 'https://hooks.example.com/services/T1/B2/xyz',
    AGENTLEDGER_ALERT_WEBHOOK_SECRET: 's3',
    AGENTLEDGER_ALERT_WEBHOOK_TIMEOUT_MS: '1008',
    AGENTLEDGER_ALERT_EVALUATE_ON_INGEST: 'false',
    AGENTLEDGER_ALERT_EVALUATE_GAP_MS: '1009',
    AGENTLEDGER_ALERT_BUDGETS_FILE: '/etc/agentledger/budgets.json',
    AGENTLEDGER_ALERT_CHUNK_LOOPS: '1010',
    AGENTLEDGER_ALERTMANAGER_URL: 'http://am-1:9093, http://am-2:9093/',
    AGENTLEDGER_ALERTMANAGER_TIMEOUT_MS: '1011',
  });
  const rules: AlertRuleConfig = {
    windowMs: 1003,
    convergenceMinWarnings: 4,
    convergenceCount: 6,
    stalledAfterMs: 1004,
    maxAgeMs: 1005,
    humanWaitMs: 1006,
    subagentFailureRate: 0.3,
    subagentMinOutcomes: 7,
    gapGraceMs: 1007,
  };
  const webhook: Webhook = { url: 'https://hooks.example.com/services/T1/B2/xyz', secret: 's3', timeoutMs: 1008 };
  assert.deepEqual(c.alerts, { sweepMs: 1001, chunkLoops: 1010, renotifyMs: 1002, evaluateOnIngest: false, evaluateGapMs: 1009, budgetsFile: '/etc/agentledger/budgets.json', rules, webhook, alertmanager: { urls: ['http://am-1:9093', 'http://am-2:9093/'], timeoutMs: 1011 } });
});

test('a webhook without a secret is unsigned; the failure rate takes 0, 1 and plain decimals', () => {
  assert.deepEqual(parseConfig({ AGENTLEDGER_ALERT_WEBHOOK_URL: 'http://127.0.0.1:9000/hook' }).alerts.webhook, {
    url: 'http://127.0.0.1:9000/hook',
    secret: undefined,
    timeoutMs: 10_000,
  });
  for (const [text, rate] of [['0', 0], ['1', 1], ['1.0', 1], ['.5', 0.5], ['0.125', 0.125]] as const) {
    assert.equal(parseConfig({ AGENTLEDGER_ALERT_SUBAGENT_FAILURE_RATE: text }).alerts.rules.subagentFailureRate, rate, text);
  }
});

const wrong: [string, string, RegExp][] = [
  ['AGENTLEDGER_ALERT_SWEEP_MS', '0', />= 1/],
  ['AGENTLEDGER_ALERT_SWEEP_MS', 'often', /whole number/],
  ['AGENTLEDGER_ALERT_RENOTIFY_MS', '0', />= 1/],
  ['AGENTLEDGER_ALERT_RENOTIFY_MS', '1.5', /whole number/],
  ['AGENTLEDGER_ALERT_WINDOW_MS', '-1', />= 1/],
  ['AGENTLEDGER_ALERT_WINDOW_MS', '99999999999999', /<= 2678400000/],
  ['AGENTLEDGER_ALERT_CONVERGENCE_MIN_WARNINGS', '0', />= 1/],
  ['AGENTLEDGER_ALERT_CONVERGENCE_COUNT', 'five', /whole number/],
  ['AGENTLEDGER_ALERT_STALLED_AFTER_MS', '0', />= 1/],
  ['AGENTLEDGER_ALERT_MAX_AGE_MS', '0', />= 1/],
  ['AGENTLEDGER_ALERT_HUMAN_WAIT_MS', '2.5', /whole number/],
  ['AGENTLEDGER_ALERT_SUBAGENT_FAILURE_RATE', '1.5', /decimal number from 0 to 1/],
  ['AGENTLEDGER_ALERT_SUBAGENT_FAILURE_RATE', '-0.1', /decimal number from 0 to 1/],
  ['AGENTLEDGER_ALERT_SUBAGENT_FAILURE_RATE', '1e-1', /decimal number from 0 to 1/],
  ['AGENTLEDGER_ALERT_SUBAGENT_FAILURE_RATE', '0x0', /decimal number from 0 to 1/],
  ['AGENTLEDGER_ALERT_SUBAGENT_FAILURE_RATE', '25%', /decimal number from 0 to 1/],
  ['AGENTLEDGER_ALERT_SUBAGENT_MIN_OUTCOMES', '0', />= 1/],
  ['AGENTLEDGER_ALERT_GAP_GRACE_MS', 'soon', /whole number/],
  ['AGENTLEDGER_ALERT_WEBHOOK_URL', 'ftp://hooks.example.com/', /http\(s\) URL/],
  ['AGENTLEDGER_ALERT_WEBHOOK_TIMEOUT_MS', '0', />= 1/],
  ['AGENTLEDGER_ALERT_WEBHOOK_TIMEOUT_MS', '600001', /<= 600000/],
  ['AGENTLEDGER_ALERT_EVALUATE_ON_INGEST', 'yes', /true or false/],
  ['AGENTLEDGER_ALERT_EVALUATE_GAP_MS', '0', />= 1/],
  ['AGENTLEDGER_ALERTMANAGER_URL', 'am-1:9093', /one or more http\(s\) URLs, comma-separated/],
  ['AGENTLEDGER_ALERTMANAGER_URL', 'http://am-1:9093,ftp://am-2', /one or more http\(s\) URLs, comma-separated/],
  ['AGENTLEDGER_ALERTMANAGER_URL', ',', /one or more http\(s\) URLs, comma-separated/],
  ['AGENTLEDGER_ALERTMANAGER_TIMEOUT_MS', '0', />= 1/],
];

for (const [key, value, expected] of wrong) {
  test(`${key}=${value}: one line naming the setting, the value and what is expected`, () => {
    const line = problem({ [key]: value });
    assert.ok(line.startsWith(`invalid setting ${key}=${JSON.stringify(value)}: `), line);
    assert.match(line, expected);
  });
}

test('a rejected webhook URL is shown by its origin only: no password, no token in its path', () => {
  const line = problem({ AGENTLEDGER_ALERT_WEBHOOK_URL: 'ftp://hook:pa55word@hooks.example.com/services/T0KEN' });
  assert.equal(line, 'invalid setting AGENTLEDGER_ALERT_WEBHOOK_URL="ftp://hooks.example.com/***": expected an http(s) URL such as https://hooks.example.com/agentledger');
  assert.equal(problem({ AGENTLEDGER_ALERT_WEBHOOK_URL: 'hooks.example.com/services/T0KEN' }), 'invalid setting AGENTLEDGER_ALERT_WEBHOOK_URL="(hidden)": expected an http(s) URL such as https://hooks.example.com/agentledger');
  // Service URLs keep their path, but lose their password too.
  assert.equal(problem({ AGENTLEDGER_REDIS_URL: 'http://u:pa55word@x:1' }), 'invalid setting AGENTLEDGER_REDIS_URL="http://u:***@x:1/": expected a redis:// URL such as redis://127.0.0.1:6379');
});

test('a webhook secret without a webhook URL is refused in one line that hides it', () => {
  assert.equal(problem({ AGENTLEDGER_ALERT_WEBHOOK_SECRET: 'hunter2' }), 'missing setting AGENTLEDGER_ALERT_WEBHOOK_URL: AGENTLEDGER_ALERT_WEBHOOK_SECRET is only used with it');
});

test('a max age not above the stall time is refused: no quiet loop could ever be reported stalled', () => {
  const line = problem({ AGENTLEDGER_ALERT_STALLED_AFTER_MS: '600000', AGENTLEDGER_ALERT_MAX_AGE_MS: '600000' });
  assert.equal(line, 'invalid setting AGENTLEDGER_ALERT_MAX_AGE_MS=600000: must be above AGENTLEDGER_ALERT_STALLED_AFTER_MS=600000, else no quiet loop is ever reported stalled');
  assert.equal(parseConfig({ AGENTLEDGER_ALERT_STALLED_AFTER_MS: '600000', AGENTLEDGER_ALERT_MAX_AGE_MS: '600001' }).alerts.rules.maxAgeMs, 600_001);
  assert.match(problem({ AGENTLEDGER_ALERT_STALLED_AFTER_MS: '86400000' }), /^invalid setting AGENTLEDGER_ALERT_MAX_AGE_MS=86400000: /);
});

test('redactConfig hides the webhook secret and everything of its URL but scheme, host and port', () => {
  const c = parseConfig({ AGENTLEDGER_ALERT_WEBHOOK_URL: 'https://hook:pa55word@hooks.example.com:8443/services/T0KEN?k=v', AGENTLEDGER_ALERT_WEBHOOK_SECRET: 'hunter2' });
  assert.deepEqual(redactConfig(c).alerts.webhook, { url: 'https://hooks.example.com:8443/***', secret: '(set)', timeoutMs: 10_000 });
  // Unchanged: the parsed settings still carry what the worker needs.
  assert.equal(c.alerts.webhook?.secret, 'hunter2');
  const bare = parseConfig({ AGENTLEDGER_ALERT_WEBHOOK_URL: 'http://127.0.0.1:9000' });
  assert.deepEqual(redactConfig(bare).alerts.webhook, { url: 'http://127.0.0.1:9000/', secret: '(unset)', timeoutMs: 10_000 });
  assert.deepEqual(redactConfig(parseConfig({})).alerts, parseConfig({}).alerts);
});

test('`config` prints neither the webhook secret nor the URL\'s password or token, in JSON or text', () => {
  const secret = 'S3cr3t-planted-webhook';
  const token = 'T0KEN-planted-in-path';
  const env = {
    PATH: process.env['PATH'] ?? '',
    AGENTLEDGER_ALERT_WEBHOOK_URL: `https://hook:${secret}@hooks.example.com/services/${token}`,
    AGENTLEDGER_ALERT_WEBHOOK_SECRET: secret,
  };
  for (const args of [['config', '--json'], ['config']]) {
    const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env, cwd: '/' });
    assert.equal(r.status, 0, r.stderr);
    for (const planted of [secret, token]) assert.ok(!r.stdout.includes(planted) && !r.stderr.includes(planted), r.stdout);
    const shown = JSON.parse(r.stdout) as { alerts: { webhook: unknown; rules: { subagentFailureRate: number } } };
    assert.deepEqual(shown.alerts.webhook, { url: 'https://hooks.example.com/***', secret: '(set)', timeoutMs: 10_000 });
    assert.equal(shown.alerts.rules.subagentFailureRate, 0.25);
  }
});

test('Alertmanager URLs are shown without their password, each of them', () => {
  const c = parseConfig({ AGENTLEDGER_ALERTMANAGER_URL: 'http://u:pa55@am-1:9093,http://am-2:9093' });
  assert.deepEqual(redactConfig(c).alerts.alertmanager?.urls, ['http://u:***@am-1:9093/', 'http://am-2:9093']);
  const line = problem({ AGENTLEDGER_ALERTMANAGER_URL: 'http://am-1:9093,ftp://u:pa55@am-2' });
  assert.ok(!line.includes('pa55'), line);
});
