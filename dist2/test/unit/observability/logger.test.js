/**
 * The logger (src/observability/logger.ts): pino's JSON lines for a log
 * shipper, the same events laid out as text for a terminal.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger, logFormat, textLine } from '../../../src/observability/logger.js';
function capture(format, level = 'info', base = {}) {
    const lines = [];
    return { lines, log: createLogger(level, base, { format, write: (l) => lines.push(l) }) };
}
test('json: one object per line, level by name, time in ISO 8601 UTC, msg, the child bindings then the fields', () => {
    const { lines, log } = capture('json', 'info', { component: 'ingest' });
    log.child({ partition: 3 }).warn('the batch waits and is retried', { attempt: 2, error: new Error('socket hang up'), offset: 2n ** 64n });
    assert.equal(lines.length, 1);
    const o = JSON.parse(lines[0]);
    assert.deepEqual(Object.keys(o), ['level', 'time', 'component', 'partition', 'attempt', 'error', 'offset', 'msg']);
    assert.equal(o['level'], 'warn');
    assert.match(String(o['time']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(o['msg'], 'the batch waits and is retried');
    assert.equal(o['error'], 'socket hang up', 'an Error as its message');
    assert.equal(o['offset'], '18446744073709551616', 'a bigint as its exact digits');
});
test('json: a message with a newline or quotes stays one line', () => {
    const { lines, log } = capture('json');
    log.error('two\nlines "quoted"', { detail: 'a\nb' });
    assert.equal(lines.length, 1);
    assert.equal(JSON.parse(lines[0]).msg, 'two\nlines "quoted"');
});
test('text: time, level padded to 5, message, key=value with spaces quoted', () => {
    const { lines, log } = capture('text', 'info', { component: 'kafkajs' });
    log.info('joined consumer group', { memberId: 'agentledger-1', assignment: { t: [0, 1] }, note: 'two words' });
    assert.match(lines[0], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO {2}joined consumer group component=kafkajs memberId=agentledger-1 assignment=\{"t":\[0,1\]\} note="two words"$/);
});
test('levels below the configured one write nothing, in either format', () => {
    for (const format of ['text', 'json']) {
        const { lines, log } = capture(format);
        log.debug('not shown', { a: 1 });
        log.child({ c: 1 }).debug('nor this');
        assert.deepEqual(lines, []);
    }
    const { lines, log } = capture('text', 'debug');
    log.debug('shown');
    assert.match(lines[0], / DEBUG shown$/);
});
test('textLine lays out exactly the JSON line the json format writes', () => {
    const json = capture('json');
    const text = capture('text');
    json.log.warn('same event', { a: 'x y', b: 2 });
    text.log.warn('same event', { a: 'x y', b: 2 });
    assert.equal(textLine(json.lines[0]).slice(24), text.lines[0].slice(24), 'the same line after the time');
});
test('auto is text on a terminal, json otherwise', () => {
    assert.equal(logFormat('auto', true), 'text');
    assert.equal(logFormat('auto', false), 'json');
    assert.equal(logFormat('json', true), 'json');
    assert.equal(logFormat('text', false), 'text');
});
//# sourceMappingURL=logger.test.js.map