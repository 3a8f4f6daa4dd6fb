/**
 * The optional TLS/SASL settings: each is validated at boot, wrong
 * combinations are refused with one line naming the setting, and `config`
 * shows none of the secrets.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, parseConfig, redactConfig } from '../../../src/config/index.js';
const dir = mkdtempSync(join(tmpdir(), 'agentledger-tls-'));
const pem = (name) => {
    const path = join(dir, name);
    writeFileSync(path, `-----BEGIN ${name}-----\n`);
    return path;
};
const ca = pem('ca.pem');
const cert = pem('cert.pem');
const key = pem('key.pem');
function problems(env) {
    try {
        parseConfig(env);
    }
    catch (err) {
        if (err instanceof ConfigError)
            return err.problems;
        throw err;
    }
    assert.fail(`accepted ${JSON.stringify(env)}`);
}
test('no TLS or SASL unless asked for', () => {
    const c = parseConfig({});
    assert.equal(c.kafka.ssl, undefined);
    assert.equal(c.kafka.sasl, undefined);
    assert.equal(c.clickhouse.caFile, undefined);
});
test('Kafka TLS with a CA and a client certificate, SASL/SCRAM, a ClickHouse CA', () => {
    const c = parseConfig({
        AGENTLEDGER_KAFKA_SSL: 'true',
        AGENTLEDGER_KAFKA_SSL_CA_FILE: ca,
        AGENTLEDGER_KAFKA_SSL_CERT_FILE: cert,
        AGENTLEDGER_KAFKA_SSL_KEY_FILE: key,
        AGENTLEDGER_KAFKA_SASL_MECHANISM: 'scram-sha-512',
        AGENTLEDGER_KAFKA_SASL_USERNAME: 'ingest',
        AGENTLEDGER_KAFKA_SASL_PASSWORD: 'pw',
        AGENTLEDGER_CLICKHOUSE_URL: 'https://ch.example:8443',
        AGENTLEDGER_CLICKHOUSE_CA_FILE: ca,
    });
    assert.deepEqual(c.kafka.ssl, { caFile: ca, certFile: cert, keyFile: key });
    assert.deepEqual(c.kafka.sasl, { mechanism: 'scram-sha-512', username: 'ingest', password: 'pw' });
    assert.equal(c.clickhouse.caFile, ca);
    assert.deepEqual(parseConfig({ AGENTLEDGER_KAFKA_SSL: 'true' }).kafka.ssl, { caFile: undefined, certFile: undefined, keyFile: undefined });
    assert.equal(parseConfig({ AGENTLEDGER_KAFKA_SSL: 'false' }).kafka.ssl, undefined);
});
test('wrong values and combinations: one line each, naming the setting', () => {
    const cases = [
        [{ AGENTLEDGER_KAFKA_SSL: 'yes' }, /^invalid setting AGENTLEDGER_KAFKA_SSL="yes": expected true or false$/],
        [{ AGENTLEDGER_KAFKA_SSL: 'true', AGENTLEDGER_KAFKA_SSL_CA_FILE: join(dir, 'missing.pem') }, /^invalid setting AGENTLEDGER_KAFKA_SSL_CA_FILE=".*missing\.pem": expected a readable file$/],
        [{ AGENTLEDGER_KAFKA_SSL: 'true', AGENTLEDGER_KAFKA_SSL_CA_FILE: dir }, /^invalid setting AGENTLEDGER_KAFKA_SSL_CA_FILE=.*expected a readable file$/],
        [{ AGENTLEDGER_KAFKA_SSL_CA_FILE: ca }, /^invalid setting AGENTLEDGER_KAFKA_SSL_CA_FILE: only used over TLS; set AGENTLEDGER_KAFKA_SSL=true/],
        [{ AGENTLEDGER_KAFKA_SSL: 'true', AGENTLEDGER_KAFKA_SSL_CERT_FILE: cert }, /^missing setting AGENTLEDGER_KAFKA_SSL_KEY_FILE: /],
        [{ AGENTLEDGER_KAFKA_SSL: 'true', AGENTLEDGER_KAFKA_SSL_KEY_FILE: key }, /^missing setting AGENTLEDGER_KAFKA_SSL_CERT_FILE: /],
        [{ AGENTLEDGER_KAFKA_SASL_MECHANISM: 'gssapi', AGENTLEDGER_KAFKA_SASL_USERNAME: 'u', AGENTLEDGER_KAFKA_SASL_PASSWORD: 'p' }, /^invalid setting AGENTLEDGER_KAFKA_SASL_MECHANISM="gssapi": expected plain, scram-sha-256 or scram-sha-512$/],
        [{ AGENTLEDGER_KAFKA_SASL_MECHANISM: 'plain', AGENTLEDGER_KAFKA_SASL_USERNAME: 'u' }, /^missing setting AGENTLEDGER_KAFKA_SASL_PASSWORD: AGENTLEDGER_KAFKA_SASL_MECHANISM=plain needs it$/],
        [{ AGENTLEDGER_KAFKA_SASL_PASSWORD: 'p' }, /^invalid setting AGENTLEDGER_KAFKA_SASL_PASSWORD: only used with SASL; set AGENTLEDGER_KAFKA_SASL_MECHANISM/],
        [{ AGENTLEDGER_CLICKHOUSE_CA_FILE: ca }, /^invalid setting AGENTLEDGER_CLICKHOUSE_CA_FILE: only used over HTTPS/],
    ];
    for (const [env, expected] of cases) {
        const found = problems(env);
        assert.equal(found.length, 1, `${JSON.stringify(env)}: ${found.join(' | ')}`);
        assert.match(found[0] ?? '', expected);
        assert.ok(!(found[0] ?? '').includes('\n'));
    }
});
test('a SASL password is hidden in an error and in `config`', () => {
    const secret = 'Sasl-S3cret-planted';
    const found = problems({ AGENTLEDGER_KAFKA_SASL_MECHANISM: 'plain', AGENTLEDGER_KAFKA_SASL_PASSWORD: secret, AGENTLEDGER_BATCH_MAX_ROWS: 'x' });
    assert.ok(found.some((p) => p.includes('AGENTLEDGER_BATCH_MAX_ROWS')));
    assert.ok(!found.join('\n').includes(secret));
    const c = parseConfig({ AGENTLEDGER_KAFKA_SASL_MECHANISM: 'plain', AGENTLEDGER_KAFKA_SASL_USERNAME: 'u', AGENTLEDGER_KAFKA_SASL_PASSWORD: secret });
    const shown = JSON.stringify(redactConfig(c));
    assert.ok(!shown.includes(secret), shown);
    assert.deepEqual(redactConfig(c).kafka.sasl, { mechanism: 'plain', username: 'u', password: '(set)' });
    assert.equal(c.kafka.sasl?.password, secret, 'redaction does not touch the config in use');
});
//# sourceMappingURL=tls.test.js.map