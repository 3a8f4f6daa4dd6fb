/**
 * The craze journal reader without Kafka: which lines become records, which
 * are counted and which wait. The fixtures are craze's own files
 * (test/fixtures/craze/journal, GROUND_TRUTH.md); the hand-written lines
 * below are the cases the fixtures do not hold.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { completeLines, crazeRecordValue, JournalParser } from '../../../src/sources/craze-journal.js';
const JOURNAL = fileURLToPath(new URL('../../../../test/fixtures/craze/journal/', import.meta.url));
/** Session A's resume (A2): a load replaying history as seq 1-12, and a torn last line. */
const A2 = `${JOURNAL}--home-dev-src-shop--/20250304T140711Z_0195617b-6298-72b3-84d5-e6f708192a3b.jsonl`;
/** Session B's first incarnation (B1): a gap line and an omitted event. */
const B1 = `${JOURNAL}--home-dev-src-shop--/20250305T101230Z_019565ca-e2b0-73c4-95e6-f708192a3b4c.jsonl`;
const HEADER = '{"ts":"2025-03-04T14:07:11Z","type":"header","format":1,"incarnation":"inc-1","crazeVersion":"0.9.2","provider":"native","cwd":"/home/dev/src/shop","pid":1}';
const SESSION_DIAG = '{"ts":"2025-03-04T14:07:11Z","type":"diag","kind":"craze_session","fields":{"crazeSessionId":"sess-1"}}';
const event = (seq, body = `{"type":"text","text":"line ${seq}"}`) => `{"ts":"2025-03-04T14:07:12Z","type":"event","seq":${seq},"at":"2025-03-04T14:07:12Z","eventType":"text","event":${body}}`;
const seqs = (events) => events.map((e) => e.seq);
function readAll(path, parser = new JournalParser()) {
    const { lines, rest } = completeLines(readFileSync(path, 'utf8'));
    return { parser, events: lines.flatMap((l) => parser.line(l)), rest };
}
test('the header gives the metadata; only the craze_session diag line gives the session id', () => {
    const p = new JournalParser();
    assert.deepEqual(p.line(HEADER), []);
    assert.deepEqual(p.meta, { incarnation: 'inc-1', cwd: '/home/dev/src/shop', provider: 'native', crazeVersion: '0.9.2' });
    assert.equal(p.ready, false);
    // The provider's session id is not craze's.
    assert.deepEqual(p.line('{"type":"session","providerSessionId":"ns-a3f09c2e71b4","crazeSessionId":"not-this"}'), []);
    // Another diag kind, and a craze_session line without an id, name no session.
    assert.deepEqual(p.line('{"type":"diag","kind":"closing","fields":{"crazeSessionId":"not-this-either"}}'), []);
    assert.deepEqual(p.line('{"type":"diag","kind":"craze_session","fields":{"crazeSessionId":""}}'), []);
    assert.deepEqual(p.line('{"type":"diag","kind":"craze_session","fields":{}}'), []);
    assert.equal(p.sessionId, undefined);
    assert.equal(p.ready, false);
    assert.deepEqual(p.line(SESSION_DIAG), []);
    assert.equal(p.sessionId, 'sess-1');
    assert.equal(p.ready, true);
    // Prompt notes and blank lines are not records.
    assert.deepEqual(p.line('{"type":"prompt","attempt":"p-1","text":"add tax","kind":"prompt"}'), []);
    assert.deepEqual(p.line('   '), []);
    assert.deepEqual(p.line(''), []);
    assert.equal(p.unreadable, 0);
});
test('a header without an incarnation never makes the file ready', () => {
    const p = new JournalParser();
    p.line('{"type":"header","cwd":"/x","provider":"native","crazeVersion":"0.9.2"}');
    p.line(SESSION_DIAG);
    assert.deepEqual(p.meta, { incarnation: '', cwd: '/x', provider: 'native', crazeVersion: '0.9.2' });
    assert.deepEqual(p.line(event(1)), []);
    assert.equal(p.ready, false);
    assert.equal(p.waiting, 1);
});
test('events wait for the header and the session, then leave in file order', () => {
    const p = new JournalParser();
    assert.deepEqual(p.line(event(1)), []);
    assert.deepEqual(p.line(HEADER), []);
    assert.deepEqual(p.line(event(2)), []);
    assert.equal(p.waiting, 2);
    assert.deepEqual(p.line(SESSION_DIAG), [
        { seq: 1, eventText: '{"type":"text","text":"line 1"}' },
        { seq: 2, eventText: '{"type":"text","text":"line 2"}' },
    ]);
    assert.equal(p.waiting, 0);
    assert.deepEqual(p.line(event(3)), [{ seq: 3, eventText: '{"type":"text","text":"line 3"}' }]);
});
test('an event keeps the producer text of its event object, byte for byte', () => {
    const p = new JournalParser();
    p.line(HEADER);
    p.line(SESSION_DIAG);
    const body = '{ "type": "meta",  "usage": {"costPicoUsd": 77325000000123456, "x": 1.50}, "t": "\\u003c" }';
    assert.deepEqual(p.line(event(7, body)), [{ seq: 7, eventText: body }]);
});
test('an event line that cannot be an event is counted unreadable and skipped', () => {
    const p = new JournalParser();
    p.line(HEADER);
    p.line(SESSION_DIAG);
    for (const seq of ['0', '-1', '1.5', '"2"', 'null']) {
        assert.deepEqual(p.line(`{"type":"event","seq":${seq},"event":{"type":"text"}}`), [], `seq ${seq}`);
    }
    assert.deepEqual(p.line('{"type":"event","seq":3}'), [], 'no event member');
    assert.deepEqual(p.line('{"type":"event","seq":4,"event":"text"}'), [], 'event not an object');
    assert.equal(p.unreadable, 7);
    assert.deepEqual(seqs(p.line(event(5))), [5]);
});
test('an omitted event is counted, not sent, and not unreadable', () => {
    const p = new JournalParser();
    p.line(HEADER);
    p.line(SESSION_DIAG);
    assert.deepEqual(p.line('{"type":"event","seq":55,"eventType":"tool","omitted":{"reason":"oversized","bytes":9437184}}'), []);
    assert.equal(p.omitted, 1);
    assert.equal(p.unreadable, 0);
    assert.equal(p.waiting, 0);
});
test('session B1 from its file: a gap line recorded, the omitted seq 55 skipped, every other event sent', () => {
    const { parser, events, rest } = readAll(B1);
    assert.equal(rest, '');
    assert.equal(parser.sessionId, '0195658f-1d04-7a6b-8c3e-5d7f9b1a2c34');
    assert.deepEqual(parser.meta, { incarnation: '019565ca-e2b0-73c4-95e6-f708192a3b4c', cwd: '/home/dev/src/shop', provider: 'native', crazeVersion: '0.9.2' });
    assert.deepEqual(parser.gaps, [{ fromSeq: 49, toSeq: 52, droppedEvents: 4 }]);
    assert.equal(parser.omitted, 1);
    assert.equal(parser.unreadable, 0);
    const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    // 49-52 were dropped by craze (the gap), 55 omitted.
    assert.deepEqual(seqs(events), [...range(1, 48), 53, 54, ...range(56, 67)]);
});
test('a gap line with missing numbers reads them as 0', () => {
    const p = new JournalParser();
    p.line('{"type":"gap","fromSeq":3}');
    assert.deepEqual(p.gaps, [{ fromSeq: 3, toSeq: 0, droppedEvents: 0 }]);
});
test('a torn last line is left for later and completes once the rest of it arrives', () => {
    const text = readFileSync(A2, 'utf8');
    const { parser, events, rest } = readAll(A2);
    // craze was killed while writing seq 34: the bytes after the last newline.
    assert.equal(rest, text.slice(text.lastIndexOf('\n') + 1));
    assert.ok(rest.startsWith('{"ts":"2025-03-04T14:07:55.881481482Z","type":"event","seq":34,'));
    assert.equal(parser.unreadable, 0, 'the torn line was never fed');
    assert.deepEqual(seqs(events), Array.from({ length: 33 }, (_, i) => i + 1));
    // The same bytes, once the writer finished the line.
    const done = completeLines(rest + 'se":"ended"}}}\n');
    assert.deepEqual(done, { lines: [rest + 'se":"ended"}}}'], rest: '' });
    assert.deepEqual(parser.line(done.lines[0]), [{ seq: 34, eventText: '{"type":"turn","turn":{"id":"turn-3","phase":"ended"}}' }]);
});
test('completeLines splits at the last newline', () => {
    assert.deepEqual(completeLines(''), { lines: [], rest: '' });
    assert.deepEqual(completeLines('{"a":'), { lines: [], rest: '{"a":' });
    assert.deepEqual(completeLines('a\n'), { lines: ['a'], rest: '' });
    assert.deepEqual(completeLines('a\n\nb\n{"c"'), { lines: ['a', '', 'b'], rest: '{"c"' });
});
test('a corrupted line in the middle is counted unreadable and the lines after it still read', () => {
    const p = new JournalParser();
    p.line(HEADER);
    p.line(SESSION_DIAG);
    assert.deepEqual(seqs(p.line(event(1))), [1]);
    assert.deepEqual(p.line('{"ts":"2025-03-04T14:07:12Z","type":"event","seq":2,"ev\u0000\u0000\u0000'), []);
    assert.deepEqual(p.line('garbage'), []);
    assert.equal(p.unreadable, 2);
    assert.deepEqual(seqs(p.line(event(3))), [3]);
});
test('replayed history is sent as craze wrote it: the reader does not judge it', () => {
    const { parser, events } = readAll(A2);
    assert.equal(parser.sessionId, '0195604e-8a31-7c2e-9b1d-3f5e7a9c0b12');
    assert.equal(parser.meta?.incarnation, '0195617b-6298-72b3-84d5-e6f708192a3b');
    // The load is seq 1-12: a replay start, ten events carrying replayed:true, a replay end.
    const replayed = events.filter((e) => e.eventText.includes('"replayed":true'));
    assert.deepEqual(seqs(replayed), [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    assert.equal(events[1].eventText, '{"type":"user","text":"add a cart total to the checkout page","replayed":true,"at":"2025-03-04T14:07:13.938271605Z"}');
});
test('a reader restarted on a file skips the events it already sent', () => {
    const { parser, events } = readAll(A2, new JournalParser(12));
    assert.deepEqual(seqs(events), Array.from({ length: 21 }, (_, i) => i + 13));
    assert.equal(parser.unreadable, 0);
    assert.equal(parser.waiting, 0);
});
test('the record value carries the event verbatim with its session, incarnation and journal', () => {
    const meta = { incarnation: 'inc-1', cwd: '/home/dev/src/shop', provider: 'native', crazeVersion: '0.9.2' };
    const value = crazeRecordValue('sess-1', meta, { seq: 4, eventText: '{"type":"text", "n":1.50}' }, '/j/a.jsonl');
    assert.equal(value, '{"sessionId":"sess-1","incarnation":"inc-1","seq":4,"event":{"type":"text", "n":1.50},"journal":{"cwd":"/home/dev/src/shop","provider":"native","crazeVersion":"0.9.2","file":"/j/a.jsonl"}}');
});
test('each unreadable line is told with its reason; JSON that is not an object is unreadable, not a crash', () => {
    const reasons = [];
    const p = new JournalParser(0, (reason) => reasons.push(reason));
    p.line(HEADER);
    p.line(SESSION_DIAG);
    for (const line of ['null', '42', '"text"', '[1,2]', '{"type":"event","seq":0,"event":{}}', '{"type":"event","seq":3,"event":[1]}', '{"ts":"2025-03', '\u0000\u0001\u0002']) {
        assert.deepEqual(p.line(line), [], line);
    }
    assert.deepEqual(reasons, [
        'not a JSON object',
        'not a JSON object',
        'not a JSON object',
        'not a JSON object',
        'event line without a whole-number seq >= 1',
        'event line (seq 3) without an event object',
        'not JSON',
        'not JSON',
    ]);
    assert.equal(p.unreadable, reasons.length);
    // Unknown line types, gaps and omitted events are not unreadable.
    p.line('{"type":"future-kind","x":1}');
    p.line('{"type":"gap","fromSeq":4,"toSeq":5,"droppedEvents":2}');
    p.line('{"type":"event","seq":6,"omitted":{"reason":"oversized"}}');
    assert.equal(reasons.length, 8);
    assert.deepEqual(seqs(p.line(event(7))), [7]);
});
test('a reader restarted on a file reports an unreadable event line again, even below the seq it skips through', () => {
    const reasons = [];
    const p = new JournalParser(10, (reason) => reasons.push(reason));
    p.line(HEADER);
    p.line(SESSION_DIAG);
    assert.deepEqual(p.line(event(2)), [], 'already sent');
    assert.deepEqual(p.line('{"type":"event","seq":3,"event":"text"}'), []);
    assert.deepEqual(reasons, ['event line (seq 3) without an event object']);
});
//# sourceMappingURL=craze-journal.test.js.map