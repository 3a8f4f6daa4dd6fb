/** `agentledger ingest`: batches, in-memory caches, the stall watchdog, envelope decoding. */
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { flag, msOrOff, positiveInt, service, setting } from './setting.js';

/**
 * src/store/insert-format.ts's InsertFormat (config imports nothing of the
 * other folders: the stores take this value, so one not in InsertFormat does
 * not compile where src/cli/ingest.ts passes it; a unit test checks each of
 * InsertFormat is taken here).
 */
const INSERT_FORMATS = ['RowBinary', 'TabSeparated'] as const;

export const ingest = service({
  title: 'Ingest',
  vars: {
    AGENTLEDGER_BATCH_MAX_ROWS: setting(positiveInt(1_000_000).default(5000), 'Rows per ClickHouse insert before a flush. At most 1000000.'),
    AGENTLEDGER_BATCH_MAX_WAIT_MS: setting(positiveInt(600_000).default(1000), 'Longest a row waits in a batch before a flush, in ms. At most 600000.'),
    AGENTLEDGER_BATCH_MAX_BYTES: setting(
      positiveInt(128 * 1024 * 1024).default(16 * 1024 * 1024),
      `Bytes of rows (estimated from their text) per ClickHouse insert before a
       flush; default 16 MiB. Kept well under the ~256 MiB at which current
       ClickHouse splits one insert into several parts, which would make it land
       in pieces. At most 134217728 (128 MiB).`,
    ),
    AGENTLEDGER_HEAD_CACHE_ENTRIES: setting(
      positiveInt(10_000_000).default(20_000),
      `Loop heads \`ingest\` keeps in memory, least recently used evicted first
       (about 400 B of heap each, 8 MB at the default): size it to the loops that
       send envelopes within a few minutes of each other. Only heads whose rows and
       \`loop_heads\` row are durable are cached, so an evicted loop's head is read
       back from \`loop_heads\` when its next envelope comes; heads still pending in
       a buffer are never evicted (they are not in this budget). bench/memory.ts:
       100,000 made ingest's peak RSS over 200,000 loops 1.37x that over 5,000;
       20,000 1.19x (docs/ingestion.md "Memory" under "Envelope ingestion").`,
    ),
    AGENTLEDGER_CRAZE_CACHE_ENTRIES: setting(
      positiveInt(10_000_000).default(10_000),
      `craze sessions \`ingest\` keeps the accounting state of in memory (every
       incarnation of a session together; least recently used evicted first). Only
       a session whose rows are all durable is evicted, and read back from
       craze_events (its incarnations' head rows) when its next event comes; a
       session with rows still in a buffer is kept beyond the budget.`,
    ),
    AGENTLEDGER_BATCH_OVERLAP: setting(
      flag.default(true),
      `Whether \`ingest\` decodes and verifies the next batches while the previous
       flush's insert is in flight (at most one flush in flight; offsets are still
       committed only after their rows are durable); \`false\` awaits every flush.`,
    ),
    AGENTLEDGER_INGEST_STALL_EXIT_MS: setting(
      msOrOff(86_400_000).default(300_000),
      `The stall watchdog of \`ingest\`: when no rows were made durable for this long,
       in ms, while records wait in its partitions (or Kafka does not answer the
       check), it says why and exits 1 for its supervisor to restart it. Before
       that, after two session timeouts with no batch in hand, it rejoins the
       group once with a fresh client, within the process. \`0\` turns it off;
       else from 1000 to 86400000.`,
    ),
    AGENTLEDGER_JUDGE_THREADS: setting(
      z.union([z.literal('auto'), positiveInt(64)]).default('auto'),
      `Worker threads that judge records (decode, verify, account, encode rows) in
       \`ingest\`. Each thread owns the loops (craze sessions) whose Kafka key
       hashes to it, so a loop's records are judged in order by one thread,
       against its own chain state; the main thread keeps the Kafka client, the
       flush and the commits. \`1\` judges in the main thread, with no worker
       (as before threads). \`auto\`: the cores available less two (left to the
       main thread and to a database or broker on the same machine), from 1 to 4:
       on 2 cores judging threads only add work (docs/benchmarks.md). At most 64.`,
    ),
    AGENTLEDGER_INSERT_FORMAT: setting(
      z.enum(INSERT_FORMATS).default('RowBinary'),
      `What \`ingest\` sends ClickHouse its rows in (envelopes, craze_events,
       loop_heads, and the probes that find a refused row): \`RowBinary\` (each
       column type's own bytes, built by agentledger: a value that does not fit
       its column is refused before anything is sent, and set aside as the server's
       refusals are) or \`TabSeparated\` (text the server parses by column type).
       Both store the same bytes. RowBinary costs ClickHouse 18.16 the same CPU
       per row and 25.8 about 9 % less (docs/benchmarks.md "Insert formats").
       Worker threads (\`AGENTLEDGER_JUDGE_THREADS\` above 1) encode the rows
       they judge in it.`,
    ),
    AGENTLEDGER_SEQ_ENCODING: setting(
      z.enum(['binary', 'decimal']).default('binary'),
      'How the loop runtime hashed Seq: `binary` (8 bytes big-endian) or `decimal` (ASCII digits), for producers that hashed it as text.',
    ),
    AGENTLEDGER_MAX_PAYLOAD_BYTES: setting(
      positiveInt(256 * 1024 * 1024).default(4 * 1024 * 1024),
      'Largest envelope payload accepted, in bytes; larger records are dead-lettered. Default 4 MiB; at most 268435456.',
    ),
  },
  config: (e) => ({
    batch: { maxRows: e.AGENTLEDGER_BATCH_MAX_ROWS, maxWaitMs: e.AGENTLEDGER_BATCH_MAX_WAIT_MS, maxBytes: e.AGENTLEDGER_BATCH_MAX_BYTES, overlap: e.AGENTLEDGER_BATCH_OVERLAP },
    /** AGENTLEDGER_INGEST_STALL_EXIT_MS (0: off). */
    stallExitMs: e.AGENTLEDGER_INGEST_STALL_EXIT_MS,
    /** AGENTLEDGER_JUDGE_THREADS (1: no worker thread). */
    judgeThreads: e.AGENTLEDGER_JUDGE_THREADS === 'auto' ? Math.max(1, Math.min(4, availableParallelism() - 2)) : e.AGENTLEDGER_JUDGE_THREADS,
    /** AGENTLEDGER_INSERT_FORMAT: the inserts' and probes' format (src/store/insert-format.ts). */
    insertFormat: e.AGENTLEDGER_INSERT_FORMAT,
    envelopes: { seqEncoding: e.AGENTLEDGER_SEQ_ENCODING, maxPayloadBytes: e.AGENTLEDGER_MAX_PAYLOAD_BYTES },
    /** In-memory caches of durable per-loop and per-session state (entries). */
    caches: { headEntries: e.AGENTLEDGER_HEAD_CACHE_ENTRIES, crazeSessions: e.AGENTLEDGER_CRAZE_CACHE_ENTRIES },
  }),
});
