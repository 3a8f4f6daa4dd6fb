/**
 * The demo's craze journals, moved in time (src/demo/craze-journals.ts, used
 * by `craze push --shift-to`): with demo.sh's own --shift-to, every session of
 * the sample journals lands inside the page's default range (the last 7 days),
 * the newest event at the target; the spacing of every time and every
 * fraction digit are kept; the UUIDv7 session and incarnation ids carry the
 * moved time; and the journal parser reads the moved lines as it read the
 * originals.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startTimeOf } from '../../../src/cli/produce.js';
import { newestTimeMs, shiftJournalLine, shiftToMs } from '../../../src/demo/craze-journals.js';
import { JournalParser } from '../../../src/sources/craze-journal.js';

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const demo = readFileSync(join(REPO, 'infra/demo.sh'), 'utf8');
const JOURNALS = join(REPO, 'test/fixtures/craze/journal');
const files = readdirSync(JOURNALS, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl')).sort().map((f) => join(JOURNALS, f));
const linesOf = (file: string): string[] => readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
const TIMES = /"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?Z"/g;
const times = (line: string): { ms: number; fraction: string }[] => [...line.matchAll(TIMES)].map((m) => ({ ms: Date.parse(`${m[1]}Z`), fraction: m[2] ?? '' }));
const DAY = 86_400_000;

/** Each file's session id and events, as `craze push` parses them. */
function parse(lines: readonly string[]): { sessionId: string | undefined; incarnation: string | undefined; seqs: number[]; unreadable: string[] } {
  const unreadable: string[] = [];
  const parser = new JournalParser(0, (reason) => unreadable.push(reason));
  const seqs = lines.flatMap((l) => parser.line(l)).map((e) => e.seq);
  return { sessionId: parser.sessionId, incarnation: parser.meta?.incarnation, seqs, unreadable };
}

test('with demo.sh\'s --shift-to, every journal lands in the last 7 days, the newest at the target', () => {
  const shiftTo = /craze push --shift-to (\S+) /.exec(demo)?.[1];
  assert.ok(shiftTo, 'demo.sh moves the journals');
  const now = new Date('2026-12-07T11:20:00Z');
  const target = Date.parse(startTimeOf(shiftTo, now, 'shift-to'));
  const all = files.flatMap(linesOf);
  const newest = Math.max(...all.map((l) => newestTimeMs(l) ?? -Infinity));
  assert.ok(newest < Date.parse('2025-04-01T00:00:00Z'), 'the fixtures are old: without the shift the page shows none');
  const shift = shiftToMs(newest, target);
  const moved = all.map((l) => shiftJournalLine(l, shift));
  const movedTimes = moved.flatMap(times).map((t) => t.ms);
  assert.ok(movedTimes.length > 300);
  assert.ok(Math.min(...movedTimes) > now.getTime() - 7 * DAY, 'the oldest inside the default 7 days');
  const movedNewest = Math.max(...moved.map((l) => newestTimeMs(l) ?? -Infinity));
  assert.ok(movedNewest <= target && movedNewest > target - 1000, 'the newest at the target, to the second');
});

test('times keep their spacing and fraction digits; UUIDv7 ids carry the moved time; the parser reads the same events', () => {
  const shift = 600 * DAY + 12_345_000;
  for (const file of files) {
    const lines = linesOf(file);
    const moved = lines.map((l) => shiftJournalLine(l, shift));
    const before = lines.flatMap(times);
    const after = moved.flatMap(times);
    assert.equal(after.length, before.length, file);
    after.forEach((t, i) => {
      assert.equal(t.ms - before[i]!.ms, shift, `${file}: time ${i}`);
      assert.equal(t.fraction, before[i]!.fraction, `${file}: fraction ${i}`);
    });
    const a = parse(lines);
    const b = parse(moved);
    assert.deepEqual(b.seqs, a.seqs, file);
    assert.deepEqual(b.unreadable, a.unreadable, file);
    for (const [was, is] of [[a.sessionId, b.sessionId], [a.incarnation, b.incarnation]] as const) {
      assert.ok(was && is && was !== is, `${file}: ${was} -> ${is}`);
      const ms = (id: string): number => parseInt(id.replace('-', '').slice(0, 12), 16);
      assert.equal(ms(is) - ms(was), shift, `${file}: the id's time moved`);
      assert.equal(is.slice(13), was.slice(13), `${file}: the id's random bits kept`);
    }
  }
});

test('no shift changes nothing; a shift is whole seconds', () => {
  const line = linesOf(files[0]!)[0]!;
  assert.equal(shiftJournalLine(line, 0), line);
  assert.throws(() => shiftJournalLine(line, 1500), RangeError);
  assert.equal(shiftToMs(Date.parse('2025-03-08T09:11:47.900Z'), Date.parse('2026-12-07T11:05:00Z')) % 1000, 0);
  assert.equal(newestTimeMs('{"no":"time"}'), undefined);
});
