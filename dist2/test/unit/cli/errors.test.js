/** Option and service errors of the CLI: one line each, naming what to fix. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseOptions, UsageError, wholeNumberOption } from '../../../src/cli/command.js';
import { redisFailure } from '../../../src/jobs/redis.js';
test('whole-number options: digits only, within the safe integers', () => {
    assert.equal(wholeNumberOption('limit', '0', 0), 0);
    assert.equal(wholeNumberOption('limit', '9007199254740991', 0), Number.MAX_SAFE_INTEGER);
    for (const bad of ['99999999999999999999', '9007199254740992', '-1', '1.5', '1e3', '', ' 1', '0x10']) {
        assert.throws(() => wholeNumberOption('limit', bad, 0), (err) => err instanceof UsageError && err.message === `--limit expects a whole number from 0 to 9007199254740991, got ${JSON.stringify(bad)}`, bad);
    }
    assert.throws(() => wholeNumberOption('n', '0', 1), /from 1 to/);
});
test('a parseArgs complaint is one line', () => {
    assert.throws(() => parseOptions(['--limit', '-1'], { limit: { type: 'string' } }), (err) => err instanceof UsageError && !err.message.includes('\n') && /--limit/.test(err.message));
});
test('Redis failures name the URL without its password and what to check', () => {
    const url = 'redis://ingest:S3cret@127.0.0.1:6379';
    assert.equal(redisFailure(url, Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' })), 'Redis at redis://ingest:***@127.0.0.1:6379 did not answer (connect ECONNREFUSED 127.0.0.1:6379): check that it runs and AGENTLEDGER_REDIS_URL');
    for (const message of ['WRONGPASS invalid username-password pair or user is disabled.', 'NOAUTH Authentication required.', 'ERR AUTH <password> called without any password configured for the default user.']) {
        assert.match(redisFailure(url, new Error(message)), /^Redis at redis:\/\/ingest:\*\*\*@127\.0\.0\.1:6379 refused the login \(.*\): check the user and password in AGENTLEDGER_REDIS_URL$/);
    }
});
//# sourceMappingURL=errors.test.js.map