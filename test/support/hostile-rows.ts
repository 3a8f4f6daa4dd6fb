/**
 * Rows of envelopes and craze_events that carry strings which have broken a
 * writer somewhere (every character the TabSeparated path escapes, 4-byte
 * UTF-8, lone surrogates, lengths at the LEB128 boundaries) in every String
 * column, and integers and times at the ends of their types: what
 * test/integration/rowbinary.test.ts inserts through both formats, and what
 * test/fixtures/rowbinary/ holds for the chdb check (test/modern/check_sql.py).
 */
import { NO_SLOTS } from '../../src/rows/envelope-facts.js';
import type { CrazeRow, EnvelopeRow } from '../../src/rows/rows.js';

const C0 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('') + '\x7f';

/** Strings that have broken a writer somewhere, and lengths at the LEB128 boundaries. */
export const HOSTILE: readonly string[] = [
  '',
  '\0',
  'NUL\0inside',
  '\t',
  'tab\tinside',
  '\n',
  '\r\n',
  '\\',
  'ends with a backslash\\',
  '\\t is not a tab',
  C0,
  "'); DROP TABLE envelopes; --",
  'é ü 漢字',
  '🙂 four-byte 𝄞',
  'lone \ud800 high',
  'lone \udc00 low',
  '\udfff',
  `${'q'.repeat(15)}🙂`,
  'a'.repeat(127),
  'a'.repeat(128),
  'é'.repeat(64),
  'x'.repeat(16383),
  'x'.repeat(16384),
  `${'€'.repeat(5462)}\t\n\\`,
  `{"payload":"${'p'.repeat(70_000)}"}`,
];


/** Envelope rows carrying the hostile strings in every String column, and integers and times at their ends. */
export function envelopeRows(topic: string, strings: readonly string[] = HOSTILE): EnvelopeRow[] {
  const at = (i: number): string => strings[i % strings.length]!;
  const ends = ['0', '9223372036854775807', '-9223372036854775808', '-1', '9007199254740993'];
  const times = ['1970-01-01 00:00:00', '2105-12-31 23:59:59', '2026-11-30 10:00:00', '2038-01-19 03:14:08'];
  return strings.map((s, i) => ({
    loop_id: `loop-${i}-${s.slice(0, 40)}`,
    seq: i === 0 ? Number.MAX_SAFE_INTEGER : i,
    time: times[i % times.length]!,
    time_text: at(i + 1),
    kind: at(i + 2),
    kind_class: at(i + 3),
    hash: at(i + 4),
    computed_hash: at(i + 5),
    payload: s,
    verdict: i % 2 === 0 ? 'ok' : 'gap',
    detail: at(i + 6),
    evidence: at(i + 7),
    ...NO_SLOTS,
    s1: at(i + 8),
    s6: at(i + 9),
    n1: ends[i % ends.length]!,
    n2: ends[(i + 1) % ends.length]!,
    n3: ends[(i + 2) % ends.length]!,
    n4: String(-i),
    kafka_topic: topic,
    kafka_partition: i === 1 ? 4294967295 : i,
    kafka_offset: i === 2 ? '18446744073709551615' : String(1000 + i),
    ingested_at: times[(i + 1) % times.length]!,
  }));
}

export function crazeRows(topic: string, strings: readonly string[] = HOSTILE): CrazeRow[] {
  const at = (i: number): string => strings[i % strings.length]!;
  return strings.map((s, i) => ({
    session_id: `session-${i}-${s.slice(0, 40)}`,
    incarnation: at(i + 1),
    seq: i + 1,
    event_type: at(i + 2),
    at: i % 2 === 0 ? '2105-12-31 23:59:59' : '1970-01-01 00:00:00',
    at_text: at(i + 3),
    agent: at(i + 4),
    replayed: (i % 2) as 0 | 1,
    event: s,
    verdict: 'ok',
    detail: at(i + 5),
    cwd: at(i + 6),
    provider: at(i + 7),
    craze_version: at(i + 8),
    model: at(i + 9),
    report: 1,
    cost_pico: i % 2 === 0 ? '9223372036854775807' : '-9223372036854775808',
    input_tokens: String(i),
    output_tokens: '0',
    reasoning_tokens: '-1',
    cache_read_tokens: '4294967296',
    cache_creation_tokens: '9007199254740993',
    unpriced: 0,
    turn_id: at(i + 10),
    turn_outcome: at(i + 11),
    turn_synthetic: 1,
    err_class: at(i + 12),
    subagent_id: at(i + 13),
    subagent_attempt: at(i + 14),
    subagent_change: at(i + 15),
    subagent_status: at(i + 16),
    tool_name: at(i + 17),
    tool_kind: at(i + 18),
    tool_status: at(i + 19),
    tool_exit_code: -i,
    ask_kind: at(i + 20),
    ask_outcome: at(i + 21),
    ask_by: at(i + 22),
    compaction_phase: at(i + 23),
    compaction_reason: at(i + 24),
    tokens_before: Number.MAX_SAFE_INTEGER,
    tokens_after: Number.MIN_SAFE_INTEGER,
    error_class: s,
    error_code: 0,
    account_state: at(i + 1),
    kafka_topic: topic,
    kafka_partition: i,
    kafka_offset: String(i),
    ingested_at: '2026-12-07 12:00:00',
  }));
}

/** The strings short enough for a fixture kept in the repository (the LEB128 two-byte boundary included). */
export const FIXTURE_STRINGS: readonly string[] = HOSTILE.filter((s) => s.length <= 300);

/** Rows in the order the read-backs ask for (one offset is UInt64's largest). */
export const byOffset = <Row extends { kafka_offset: string }>(rows: Row[]): Row[] => rows.sort((a, b) => (BigInt(a.kafka_offset) < BigInt(b.kafka_offset) ? -1 : 1));
