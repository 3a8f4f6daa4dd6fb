/** The page endpoints' query strings (src/serve/params.ts): refused in one line (400) or parsed into whole buckets. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seriesQuery, takeParams, utcMidnight, wholeNumber } from '../../../src/serve/params.js';
import { RequestError } from '../../../src/serve/server.js';
const NOW = Date.UTC(2026, 11, 2, 0, 47, 13);
const q = (s) => new URLSearchParams(s);
const s = (iso) => Date.parse(iso) / 1000;
function refused(fn, pattern) {
    assert.throws(fn, (e) => e instanceof RequestError && e.status === 400 && pattern.test(e.message) && !e.message.includes('\n'), String(pattern));
}
test('series: defaults are day by model over 30 days, whole UTC days through the one holding now', () => {
    const got = seriesQuery(q(''), NOW);
    assert.equal(got.step, 'day');
    assert.equal(got.by, 'model');
    assert.equal(got.since, s('2026-11-02T00:00:00Z'));
    assert.equal(got.until, s('2026-12-03T00:00:00Z'));
    assert.deepEqual([got.source, got.model, got.name], ['', '', '']);
});
test('series: since and until as the CLI parses them, rounded out to whole buckets', () => {
    const hours = seriesQuery(q('step=hour&since=90m&by=name&source=craze&model=m&name=n'), NOW);
    assert.equal(hours.since, s('2026-12-01T23:00:00Z'));
    assert.equal(hours.until, s('2026-12-02T01:00:00Z'));
    assert.deepEqual([hours.by, hours.source, hours.model, hours.name], ['name', 'craze', 'm', 'n']);
    const days = seriesQuery(q('since=2026-11-20&until=2026-11-22T00:00:00Z'), NOW);
    assert.equal(days.since, s('2026-11-20T00:00:00Z'));
    assert.equal(days.until, s('2026-11-22T00:00:00Z'), 'an until on a bucket boundary is exclusive');
    assert.equal(seriesQuery(q('source=all'), NOW).source, '');
});
test('series: a bad or unknown parameter is a 400 with one line', () => {
    refused(() => seriesQuery(q('step=week'), NOW), /^step="week": expected one of hour, day$/);
    refused(() => seriesQuery(q('by=root'), NOW), /^by="root"/);
    refused(() => seriesQuery(q('since=yesterday'), NOW), /^since="yesterday": expected RFC 3339/);
    refused(() => seriesQuery(q('until=7d&since=1d'), NOW), /until must be later than since/);
    refused(() => seriesQuery(q('step=hour&since=100d'), NOW), /more than 2208 buckets/);
    refused(() => seriesQuery(q('source=both'), NOW), /^source="both"/);
    refused(() => seriesQuery(q('limit=3'), NOW), /^"limit" is not a parameter here/);
    refused(() => seriesQuery(q('by=model&by=source'), NOW), /^by given twice$/);
    refused(() => seriesQuery(q(`model=${'x'.repeat(501)}`), NOW), /longer than 500/);
});
test('limits are whole numbers in range', () => {
    const p = takeParams(q('limit=5'), ['limit']);
    assert.equal(wholeNumber(p, 'limit', 50, 1, 1000), 5);
    assert.equal(wholeNumber(takeParams(q(''), ['limit']), 'limit', 50, 1, 1000), 50);
    for (const bad of ['0', '1001', '-1', '1.5', '1e3', '99999999999'])
        refused(() => wholeNumber(takeParams(q(`limit=${bad}`), ['limit']), 'limit', 50, 1, 1000), /^limit=/);
    refused(() => takeParams(q('x=1'), []), /takes no parameters/);
});
test('utcMidnight', () => {
    assert.equal(utcMidnight(s('2026-12-02T00:47:13Z')), s('2026-12-02T00:00:00Z'));
    assert.equal(utcMidnight(s('2026-12-02T00:00:00Z')), s('2026-12-02T00:00:00Z'));
});
//# sourceMappingURL=params.test.js.map