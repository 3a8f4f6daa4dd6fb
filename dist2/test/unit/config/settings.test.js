/**
 * The settings' declarations (src/config/): each variable declared once, with
 * a description; secrets marked, and hidden wherever settings are shown;
 * docs/configuration.md's table is what the declarations generate.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ConfigError, envSchema, parseConfig, redactConfig, services, settings } from '../../../src/config/index.js';
import { shownValue } from '../../../src/config/redact.js';
import { DOC_PATH, withSettingsTable } from '../../../src/config/settings-table.js';
test('docs/configuration.md lists every setting as the declarations generate it', () => {
    const doc = readFileSync(DOC_PATH, 'utf8');
    assert.ok(doc === withSettingsTable(doc), 'docs/configuration.md: the settings table differs from the declarations in src/config/; run the generator: npm run docs:settings');
});
test('every variable is declared by exactly one service, with a description', () => {
    const declared = services.flatMap((s) => Object.keys(s.vars));
    assert.equal(new Set(declared).size, declared.length, 'a variable declared by two services');
    assert.deepEqual(declared.sort(), Object.keys(envSchema.shape).sort());
    for (const [key, s] of Object.entries(settings)) {
        assert.match(key, /^AGENTLEDGER_[A-Z0-9_]+$/);
        assert.ok(s.doc.length > 10, `${key} has no description`);
    }
});
test('a password, secret or token is declared secret(), a URL shown with care', () => {
    for (const [key, s] of Object.entries(settings)) {
        if (/PASSWORD|SECRET|TOKEN/.test(key))
            assert.equal(s.show, 'secret', `${key} must be declared with secret()`);
        if (key.endsWith('_URL'))
            assert.ok(s.show === 'url' || s.show === 'origin', `${key} must be shown as a url or origin`);
    }
});
const PLANTED = 'Planted-s3cret-0123456789';
/** Every secret set to the planted value, with what each needs beside it. */
function plantedEnv() {
    const env = {
        AGENTLEDGER_KAFKA_SASL_MECHANISM: 'scram-sha-512',
        AGENTLEDGER_KAFKA_SASL_USERNAME: 'u',
        AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER: 'ddl',
        AGENTLEDGER_ALERT_WEBHOOK_URL: `https://hooks.example.com/${PLANTED}`,
        AGENTLEDGER_CLICKHOUSE_URL: `http://u:${PLANTED}@127.0.0.1:8123`,
    };
    for (const [key, s] of Object.entries(settings))
        if (s.show === 'secret')
            env[key] = PLANTED;
    return env;
}
test('redactConfig hides every value declared secret, wherever the mapping put it', () => {
    const env = plantedEnv();
    const config = parseConfig(env);
    assert.ok(JSON.stringify(config).includes(PLANTED));
    const shown = JSON.stringify(redactConfig(config));
    assert.ok(!shown.includes(PLANTED) && !shown.includes(encodeURIComponent(PLANTED)), shown);
    // Also when the main user stands in for the migrator (its password copied into clickhouse.migrator).
    const single = { ...env, AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER: '', AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD: '', AGENTLEDGER_CLICKHOUSE_USER: 'all' };
    assert.ok(!JSON.stringify(redactConfig(parseConfig(single))).includes(PLANTED));
});
test('an error line never shows a value declared secret', () => {
    for (const [key, s] of Object.entries(settings)) {
        if (s.show === 'secret')
            assert.equal(shownValue(s, PLANTED), '(hidden)', key);
    }
    assert.throws(() => parseConfig({ AGENTLEDGER_SERVE_TOKEN: 'Planted-short' }), (err) => err instanceof ConfigError && err.message === 'invalid setting AGENTLEDGER_SERVE_TOKEN=(hidden): expected at least 16 characters');
});
test('redactConfig shows what is unset or empty as such', () => {
    const shown = redactConfig(parseConfig({ AGENTLEDGER_CLICKHOUSE_PASSWORD: '', AGENTLEDGER_CLICKHOUSE_USER: 'u' }));
    assert.equal(shown.clickhouse.password, '(set)', 'an empty variable takes its default');
    assert.equal(shown.serve.token, '(unset)');
    assert.equal(shown.kafka.sasl, undefined);
    assert.equal(shown.alerts.webhook, undefined);
});
//# sourceMappingURL=settings.test.js.map