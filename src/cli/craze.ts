import { createReadStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { CheckedProducer } from '../kafka/checked-send.js';
import type { Compression } from '../kafka/codecs.js';
import { newestTimeMs, shiftJournalLine, shiftToMs } from '../demo/craze-journals.js';
import { crazeRecordValue, JournalParser, type JournalEvent } from '../sources/craze-journal.js';
import { createKafka, createReliableProducer, ensureTopics, TOPIC_CONFIG } from '../kafka/client.js';
import { MAX_LINE_BYTES, oversizedReason, readLines } from '../sources/lines.js';
import type { Command, CommandContext } from './command.js';
import { compressionOption, parseOptions, UsageError } from './command.js';
import { startTimeOf } from './produce.js';
import { printable } from './terminal.js';

/** Per journal file: how far it has been sent (written after the broker's acknowledgement), so a restarted follower resends nothing it recorded. */
interface FileState {
  /** Bytes of complete lines read, every event of them acknowledged by the broker. */
  offset: number;
  /** Highest seq sent (guards a re-read from the start of the file). */
  lastSeq: number;
}
type PushState = Record<string, FileState>;

/** How many unreadable lines are printed per file; the rest are counted. */
const PRINTED_PER_FILE = 20;

const HELP = `Usage: agentledger craze push PATH... [--follow] [--state FILE] [--interval-ms MS]
                                [--compression C] [--shift-to T]

Reads craze journal files (or folders of them, recursively: *.jsonl) and
produces one record per event to AGENTLEDGER_CRAZE_TOPIC, keyed by the craze
session id: {"sessionId", "incarnation", "seq", "event", "journal"}. The
session id comes from the file's craze_session diag line, the incarnation,
cwd, provider and craze version from its header. Events journaled without a
body (omitted) are skipped, gap lines are counted and reported (the consumer
records the missing seqs), and a torn last line is left for later.

Files are streamed line by line. A line that cannot be read (not JSON, an
event line without a seq or an event object, or longer than ${MAX_LINE_BYTES / (1024 * 1024)} MiB, the
largest record the topic accepts) is printed with its file and line number
(the first ${PRINTED_PER_FILE} per file; the rest are counted), skipped, and counted in the
summary; the events after it are still sent. It is reported whenever a run
reads it: each run reads every file from its start, except that a file --state
records as sent to its end is not read again.

Pushing the same files twice is harmless: the consumer drops events it has
already stored. With --follow it keeps tailing the files as craze appends to
them (new files included) and remembers in --state how far each file was sent,
so a restarted follower resends nothing it recorded (one killed between the
broker's acknowledgement and that record resends that last send's events,
which the consumer drops). SIGINT/SIGTERM stop it after the
records in flight are acknowledged.

Options:
  --follow          keep tailing; stop with SIGINT or SIGTERM
  --state FILE      where --follow keeps its progress
                    (default ./.agentledger/craze-push-state.json)
  --interval-ms MS  how often --follow looks for new lines (default 250)
  --compression C   compress the record batches with none (default), gzip,
                    snappy, lz4 or zstd; ingest reads all five
  --shift-to T      for demos: move every time in the journals by one shift of
                    whole seconds so that the newest is T (an RFC 3339 UTC time,
                    now or now-N[smhd]), and the UUIDv7 session and incarnation
                    ids with them (new sessions each time); not with --follow

Exit code: 0 every line was read, 1 a line was skipped unread (the other
events were still sent), 2 bad usage or settings.`;

async function journalFiles(paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  const walk = async (p: string): Promise<void> => {
    const s = await stat(p);
    if (s.isDirectory()) {
      for (const entry of (await readdir(p)).sort()) await walk(join(p, entry));
    } else if (p.endsWith('.jsonl')) {
      out.push(resolve(p));
    }
  };
  for (const p of paths) await walk(p);
  return out;
}

async function loadState(file: string | undefined): Promise<PushState> {
  if (!file) return {};
  try {
    return JSON.parse(await readFile(file, 'utf8')) as PushState;
  } catch {
    return {};
  }
}

async function saveState(file: string | undefined, state: PushState): Promise<void> {
  if (!file) return;
  await mkdir(dirname(file), { recursive: true });
  await writeFile(`${file}.tmp`, JSON.stringify(state));
  await rename(`${file}.tmp`, file);
}

interface Totals {
  events: number;
  omitted: number;
  gaps: number;
  files: number;
  unreadable: number;
}

/** Reports a journal line that was skipped unread: file, 1-based line number, why. */
type Unreadable = (file: string, line: number, reason: string) => void;

/** One journal file as this process reads it: the parser keeps its header, session and held events between reads. */
interface Tail {
  readonly parser: JournalParser;
  /** Bytes of complete lines parsed: the next read starts here. */
  readTo: number;
  /** Complete lines before readTo, so line numbers count from the file's start. */
  lines: number;
  /** The line being parsed, for the parser's unreadable reports. */
  current: number;
}

/**
 * Events per producer.send, and bytes of record values: one send to a
 * session's partition is one record batch, and the broker refuses a batch
 * above the topic's max.message.bytes (16 MiB), so a batch stays well under it.
 */
const SEND_MAX_EVENTS = 1000;
const SEND_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Sends what a file has beyond what this process has read of it: complete
 * lines only, the torn rest left for the next call (or, at the end of a
 * one-shot push, sent if it is complete JSON and dropped if not). The file is
 * streamed: at most one line (up to MAX_LINE_BYTES) and one send's events are
 * in memory. A line that cannot be read is reported and skipped; it does not
 * hold up the lines after it. The state moves only after the broker
 * acknowledged the records of every line before the new offset.
 */
async function pushFile(
  path: string,
  st: FileState,
  producer: CheckedProducer,
  to: { readonly topic: string; readonly compression: Compression; readonly shiftMs: number },
  totals: Totals,
  final: boolean,
  tails: Map<string, Tail>,
  unreadable: Unreadable,
): Promise<void> {
  const size = (await stat(path)).size;
  let tail = tails.get(path);
  // A fresh process re-reads a file from the start to learn its header and
  // session; the parser skips the events already sent (seq <= lastSeq). A file
  // sent whole before is not read again at all.
  if (size <= (tail?.readTo ?? st.offset)) return;
  if (tail === undefined) {
    const t: Tail = { parser: new JournalParser(st.lastSeq, (reason) => unreadable(path, t.current, reason)), readTo: 0, lines: 0, current: 0 };
    tail = t;
    tails.set(path, tail);
  }
  const { parser } = tail;
  const omittedBefore = parser.omitted;
  const gapsBefore = parser.gaps.length;
  let batch: { key: string; value: string }[] = [];
  let batchBytes = 0;
  let batchLastSeq = 0;
  /** End of the last complete line parsed, and how many complete lines that is. */
  let parsedTo = tail.readTo;
  let parsedLines = tail.lines;
  const send = async (): Promise<void> => {
    if (batch.length > 0) {
      await producer.send({ topic: to.topic, compression: to.compression, messages: batch });
      totals.events += batch.length;
      st.lastSeq = Math.max(st.lastSeq, batchLastSeq);
      batch = [];
      batchBytes = 0;
    }
    // Every event of the lines before parsedTo is now acknowledged (held
    // events exist only while the parser is not ready).
    if (parser.ready) st.offset = parsedTo;
  };
  for await (const item of readLines(createReadStream(path, { start: tail.readTo, end: size - 1 }), MAX_LINE_BYTES, tail.readTo)) {
    // Not final: the bytes after the last newline wait until craze finishes the line.
    if (!item.terminated && !final) break;
    tail.current = tail.lines + item.number;
    let events: JournalEvent[] = [];
    if (item.kind === 'oversized') {
      unreadable(path, tail.current, oversizedReason(item, MAX_LINE_BYTES));
    } else {
      const text = shiftJournalLine(item.bytes.toString('utf8'), to.shiftMs);
      // A last line with no newline at the end of a one-shot push: complete
      // JSON is kept, a torn one (craze was killed mid-write) dropped unreported.
      if (item.terminated || isJson(text)) events = parser.line(text);
    }
    if (item.terminated) {
      parsedTo = item.end;
      parsedLines = tail.lines + item.number;
    }
    if (events.length === 0) continue;
    for (const e of events) {
      const value = crazeRecordValue(parser.sessionId!, parser.meta!, e, path);
      batch.push({ key: parser.sessionId!, value });
      batchBytes += value.length;
      batchLastSeq = Math.max(batchLastSeq, e.seq);
    }
    if (batch.length >= SEND_MAX_EVENTS || batchBytes >= SEND_MAX_BYTES) await send();
  }
  await send();
  tail.readTo = parsedTo;
  tail.lines = parsedLines;
  totals.omitted += parser.omitted - omittedBefore;
  totals.gaps += parser.gaps.length - gapsBefore;
  if (final && !parser.ready && parser.waiting > 0) {
    throw new Error(`${path}: ${parser.waiting} event(s) but no header incarnation or craze_session diag line to attribute them`);
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Prints unreadable lines (escaped: a journal is producer data) and counts them per file. */
function unreadableReporter(totals: Totals, out: (line: string) => void): { report: Unreadable; summarise: () => void } {
  const perFile = new Map<string, number>();
  return {
    report(file, line, reason) {
      totals.unreadable++;
      const n = (perFile.get(file) ?? 0) + 1;
      perFile.set(file, n);
      if (n <= PRINTED_PER_FILE) out(`unreadable line skipped: ${printable(file)}:${line}: ${printable(reason)}`);
    },
    summarise() {
      for (const [file, n] of perFile) {
        if (n > PRINTED_PER_FILE) out(`  … and ${n - PRINTED_PER_FILE} more unreadable line(s) in ${printable(file)}`);
      }
    },
  };
}

/** --shift-to: the whole-second shift that moves the newest time of all the files to `targetMs` (0 when they hold none). */
async function shiftOf(files: readonly string[], targetMs: number): Promise<number> {
  let newest: number | undefined;
  for (const file of files) {
    for await (const item of readLines(createReadStream(file), MAX_LINE_BYTES)) {
      const t = item.kind === 'oversized' ? undefined : newestTimeMs(item.bytes.toString('utf8'));
      if (t !== undefined && (newest === undefined || t > newest)) newest = t;
    }
  }
  return newest === undefined ? 0 : shiftToMs(newest, targetMs);
}

async function push(args: string[], { config, log, out }: CommandContext): Promise<number> {
  const { values, positionals } = parseOptions(
    args,
    { follow: { type: 'boolean' }, state: { type: 'string' }, 'interval-ms': { type: 'string' }, compression: { type: 'string' }, 'shift-to': { type: 'string' } },
    true,
  );
  const compression = compressionOption(values.compression);
  if (positionals.length === 0) throw new UsageError('name at least one journal file or folder');
  const interval = Number(values['interval-ms'] ?? 250);
  if (!Number.isInteger(interval) || interval < 10) throw new UsageError('--interval-ms takes a whole number >= 10');
  if (values.follow && values['shift-to'] !== undefined) throw new UsageError('--shift-to moves whole journals: not with --follow');
  const shiftTo = values['shift-to'] === undefined ? undefined : Date.parse(startTimeOf(values['shift-to'], new Date(), 'shift-to'));
  const stateFile = values.follow ? resolve(values.state ?? '.agentledger/craze-push-state.json') : values.state && resolve(values.state);
  const state = await loadState(stateFile);
  const topic = config.kafka.topics.craze;
  const kafka = createKafka(config.kafka, log);
  await ensureTopics(kafka, [{ topic, configEntries: TOPIC_CONFIG }]);
  const producer = createReliableProducer(kafka);
  await producer.connect();
  const totals: Totals = { events: 0, omitted: 0, gaps: 0, files: 0, unreadable: 0 };
  const tails = new Map<string, Tail>();
  const unreadable = unreadableReporter(totals, out);
  // Exit 1 when a line was skipped unread: the push did its best, but
  // something in the journals is not on the topic.
  const exitCode = (): number => (totals.unreadable > 0 ? 1 : 0);
  try {
    if (!values.follow) {
      const files = await journalFiles(positionals);
      const shiftMs = shiftTo === undefined ? 0 : await shiftOf(files, shiftTo);
      for (const file of files) {
        const st = state[file] ?? { offset: 0, lastSeq: 0 };
        await pushFile(file, st, producer, { topic, compression, shiftMs }, totals, true, tails, unreadable.report);
        state[file] = st;
        totals.files++;
      }
      await saveState(stateFile, state);
      unreadable.summarise();
      out(
        `pushed ${totals.events} event(s) from ${totals.files} journal file(s) to ${topic}; ${totals.omitted} omitted event(s) skipped, ${totals.gaps} gap line(s), ${totals.unreadable} unreadable line(s) skipped`,
      );
      return exitCode();
    }
    let stop = false;
    const halt = (): void => {
      stop = true;
    };
    process.once('SIGINT', halt);
    process.once('SIGTERM', halt);
    log.info('following craze journals', { paths: positionals, state: stateFile, topic });
    while (!stop) {
      for (const file of await journalFiles(positionals)) {
        const st = state[file] ?? { offset: 0, lastSeq: 0 };
        const before = { events: totals.events, offset: st.offset };
        await pushFile(file, st, producer, { topic, compression, shiftMs: 0 }, totals, false, tails, unreadable.report);
        state[file] = st;
        if (st.offset !== before.offset) {
          await saveState(stateFile, state);
          log.info('pushed', { file, events: totals.events - before.events, lastSeq: st.lastSeq });
        }
      }
      await new Promise((r) => setTimeout(r, interval));
    }
    unreadable.summarise();
    out(`pushed ${totals.events} event(s), ${totals.unreadable} unreadable line(s) skipped; state in ${printable(stateFile ?? '')}`);
    return exitCode();
  } finally {
    await producer.disconnect();
  }
}

export const crazeCommand: Command = {
  name: 'craze',
  summary: 'craze journals: `craze push PATH… [--follow]` ships them to Kafka',
  help: HELP,
  run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub !== 'push') throw new UsageError(`unknown subcommand ${sub === undefined ? '(none)' : `"${sub}"`}; see agentledger craze --help`);
    return push(rest, ctx);
  },
};
