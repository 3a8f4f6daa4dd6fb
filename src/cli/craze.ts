import { mkdir, open, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Producer } from 'kafkajs';
import { completeLines, crazeRecordValue, JournalParser } from '../sources/craze-journal.js';
import { createKafka, createReliableProducer, ensureTopics, TOPIC_CONFIG } from '../sources/kafka.js';
import type { Command, CommandContext } from './command.js';
import { parseOptions, UsageError } from './command.js';

/** Per journal file: how far it has been sent, so a restarted follower resends nothing. */
interface FileState {
  /** Bytes of complete lines consumed and sent. */
  offset: number;
  /** Highest seq sent (guards a re-read from the start of the file). */
  lastSeq: number;
}
type PushState = Record<string, FileState>;

const HELP = `Usage: agentledger craze push PATH... [--follow] [--state FILE] [--interval-ms MS]

Reads craze journal files (or folders of them, recursively: *.jsonl) and
produces one record per event to AGENTLEDGER_CRAZE_TOPIC, keyed by the craze
session id: {"sessionId", "incarnation", "seq", "event", "journal"}. The
session id comes from the file's craze_session diag line, the incarnation,
cwd, provider and craze version from its header. Events journaled without a
body (omitted) are skipped, gap lines are counted and reported (the consumer
records the missing seqs), and a torn last line is left for later.

Pushing the same files twice is harmless: the consumer drops events it has
already stored. With --follow it keeps tailing the files as craze appends to
them (new files included) and remembers in --state how far each file was sent,
so a restarted follower resends nothing. SIGINT/SIGTERM stop it after the
records in flight are acknowledged.

Options:
  --follow          keep tailing; stop with SIGINT or SIGTERM
  --state FILE      where --follow keeps its progress
                    (default ./.agentledger/craze-push-state.json)
  --interval-ms MS  how often --follow looks for new lines (default 250)`;

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
}

/**
 * Sends what a file has beyond its state: complete lines only, the torn rest
 * left for the next call (or, at the end of a one-shot push, dropped). The
 * state moves only after the broker acknowledged the records.
 */
async function pushFile(
  path: string,
  st: FileState,
  producer: Producer,
  topic: string,
  totals: Totals,
  final: boolean,
  parsers: Map<string, JournalParser>,
): Promise<void> {
  const size = (await stat(path)).size;
  if (size <= st.offset) return;
  // A follower that already knows the file's header and session reads only
  // the new bytes; otherwise it reads from the start to learn them, and the
  // parser skips the events already sent (seq <= lastSeq).
  let parser = parsers.get(path);
  let from = 0;
  if (parser?.ready && st.offset > 0) {
    from = st.offset;
  } else {
    parser = new JournalParser(st.lastSeq);
    parsers.set(path, parser);
  }
  const handle = await open(path, 'r');
  let buf: Buffer;
  try {
    buf = Buffer.alloc(size - from);
    await handle.read(buf, 0, buf.length, from);
  } finally {
    await handle.close();
  }
  const lastNewline = buf.lastIndexOf(0x0a);
  const { lines, rest } = completeLines(buf.toString('utf8', 0, lastNewline + 1) + (final ? buf.toString('utf8', lastNewline + 1) : ''));
  const omittedBefore = parser.omitted;
  const gapsBefore = parser.gaps.length;
  const events = lines.flatMap((l) => parser.line(l));
  if (final && rest !== '') {
    // A last line with no newline: complete JSON is kept, a torn one dropped.
    try {
      JSON.parse(rest);
      events.push(...parser.line(rest));
    } catch {
      /* torn: craze was killed mid-write */
    }
  }
  if (!parser.ready) {
    parsers.delete(path);
    if (final && parser.waiting > 0) {
      throw new Error(`${path}: ${parser.waiting} event(s) but no header incarnation or craze_session diag line to attribute them`);
    }
    return;
  }
  const sessionId = parser.sessionId!;
  const meta = parser.meta!;
  for (let i = 0; i < events.length; i += 1000) {
    const chunk = events.slice(i, i + 1000);
    await producer.send({
      topic,
      acks: -1,
      messages: chunk.map((e) => ({ key: sessionId, value: crazeRecordValue(sessionId, meta, e, path) })),
    });
    st.lastSeq = Math.max(st.lastSeq, ...chunk.map((e) => e.seq));
  }
  st.offset = from + lastNewline + 1;
  totals.events += events.length;
  totals.omitted += parser.omitted - omittedBefore;
  totals.gaps += parser.gaps.length - gapsBefore;
}

async function push(args: string[], { config, log, out }: CommandContext): Promise<number> {
  const { values, positionals } = parseOptions(
    args,
    { follow: { type: 'boolean' }, state: { type: 'string' }, 'interval-ms': { type: 'string' } },
    true,
  );
  if (positionals.length === 0) throw new UsageError('name at least one journal file or folder');
  const interval = Number(values['interval-ms'] ?? 250);
  if (!Number.isInteger(interval) || interval < 10) throw new UsageError('--interval-ms takes a whole number >= 10');
  const stateFile = values.follow ? resolve(values.state ?? '.agentledger/craze-push-state.json') : values.state && resolve(values.state);
  const state = await loadState(stateFile);
  const topic = config.kafka.topics.craze;
  const kafka = createKafka(config.kafka, log);
  await ensureTopics(kafka, [{ topic, configEntries: TOPIC_CONFIG }]);
  const producer = createReliableProducer(kafka);
  await producer.connect();
  const totals: Totals = { events: 0, omitted: 0, gaps: 0, files: 0 };
  const parsers = new Map<string, JournalParser>();
  try {
    if (!values.follow) {
      for (const file of await journalFiles(positionals)) {
        const st = state[file] ?? { offset: 0, lastSeq: 0 };
        await pushFile(file, st, producer, topic, totals, true, parsers);
        state[file] = st;
        totals.files++;
      }
      await saveState(stateFile, state);
      out(`pushed ${totals.events} event(s) from ${totals.files} journal file(s) to ${topic}; ${totals.omitted} omitted event(s) skipped, ${totals.gaps} gap line(s)`);
      return 0;
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
        const before = totals.events;
        await pushFile(file, st, producer, topic, totals, false, parsers);
        state[file] = st;
        if (totals.events > before) {
          await saveState(stateFile, state);
          log.info('pushed', { file, events: totals.events - before, lastSeq: st.lastSeq });
        }
      }
      await new Promise((r) => setTimeout(r, interval));
    }
    out(`pushed ${totals.events} event(s); state in ${stateFile}`);
    return 0;
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
