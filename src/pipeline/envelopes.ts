/**
 * One Kafka batch of envelope records -> rows for the envelopes table and
 * dead letters. Decoding and verification are the pure stages; this module
 * feeds them the chain state (cached heads, and the store for what the cache
 * lacks) and keeps the cache in step with the rows it returns.
 */
import { decodeEnvelope, type DecodeOptions, type Envelope } from '../decode/envelope.js';
import { parseRfc3339, toClickHouseDateTime } from '../decode/time.js';
import { verifyLink, type ChainHead, type StoredVersion, type Verdict } from '../verify/chain.js';
import type { SeqEncoding } from '../verify/hash.js';
import { versionKey, type EnvelopeRow, type StoredHead } from '../sink/clickhouse/rows.js';
import { kafkaColumns, malformedColumns } from './malformed.js';
import type { ChainPort, InsertPort, ProgressPort } from './ports.js';
import type { DeadLetter, SourceRecord, Stream, StreamBatch } from './stream.js';

export type BatchOutcome = StreamBatch<EnvelopeRow>;

/** What the envelope pipeline reads and writes. */
export type EnvelopeStorePort = ChainPort & ProgressPort & InsertPort<EnvelopeRow>;

/** A stored head as the verifier's: its Time parsed (a stored head was decoded, so it parses). */
function chainHead(stored: StoredHead): ChainHead | null {
  const time = parseRfc3339(stored.timeText);
  return time ? { ...stored, time } : null;
}

/**
 * Heads of the loops this process has seen, bounded. `null` caches "no
 * envelope stored yet". Cleared on every rebalance: another consumer may have
 * moved a loop's chain while this one did not own its partition.
 */
export class HeadCache {
  private readonly heads = new Map<string, ChainHead | null>();
  constructor(private readonly limit = 200_000) {}
  get(loopId: string): ChainHead | null | undefined {
    return this.heads.get(loopId);
  }
  set(loopId: string, head: ChainHead | null): void {
    this.heads.delete(loopId);
    this.heads.set(loopId, head);
    if (this.heads.size > this.limit) {
      const oldest = this.heads.keys().next().value;
      if (oldest !== undefined) this.heads.delete(oldest);
    }
  }
  clear(): void {
    this.heads.clear();
  }
}

export interface EnvelopeBatchOptions extends DecodeOptions {
  readonly seqEncoding: SeqEncoding;
}

export async function processEnvelopeBatch(
  records: readonly SourceRecord[],
  cache: HeadCache,
  store: ChainPort,
  options: EnvelopeBatchOptions,
  now: Date = new Date(),
): Promise<BatchOutcome> {
  const ingestedAt = toClickHouseDateTime({ seconds: Math.floor(now.getTime() / 1000), nanos: 0 });
  const decoded: (Envelope | string)[] = records.map((r) => {
    const d = decodeEnvelope(r.value, options);
    return d.ok ? d.value : d.reason;
  });

  // Heads of loops the cache does not know, in one query.
  const unknownLoops = new Set<string>();
  for (const d of decoded) if (typeof d !== 'string' && cache.get(d.loopId) === undefined) unknownLoops.add(d.loopId);
  if (unknownLoops.size > 0) {
    const loaded = await store.heads([...unknownLoops]);
    for (const loopId of unknownLoops) {
      const stored = loaded.get(loopId);
      cache.set(loopId, stored ? chainHead(stored) : null);
    }
  }

  // Envelopes at or below their loop's head need the stored version of that
  // seq (a redelivery or a fork); a head only ever moves to max(head, seq).
  const headSeq = new Map<string, number>();
  const batchSeqs = new Map<string, Set<number>>();
  /** Versions a later envelope of this batch compares against (a redelivery or fork within the batch). */
  const needed = new Set<string>();
  const lookups: [string, number][] = [];
  for (const d of decoded) {
    if (typeof d === 'string') continue;
    const seq = headSeq.get(d.loopId) ?? cache.get(d.loopId)?.seq ?? 0;
    let seqs = batchSeqs.get(d.loopId);
    if (!seqs) batchSeqs.set(d.loopId, (seqs = new Set()));
    if (d.seq <= seq) {
      if (seqs.has(d.seq)) needed.add(versionKey(d.loopId, d.seq));
      else lookups.push([d.loopId, d.seq]);
    }
    seqs.add(d.seq);
    headSeq.set(d.loopId, Math.max(seq, d.seq));
  }
  const versions: Map<string, StoredVersion> = lookups.length > 0 ? await store.versions(lookups) : new Map<string, StoredVersion>();

  const rows: EnvelopeRow[] = [];
  const deadLetters: DeadLetter[] = [];
  const verdicts = new Map<string, number>();
  const count = (v: Verdict): void => void verdicts.set(v, (verdicts.get(v) ?? 0) + 1);

  decoded.forEach((d, i) => {
    const record = records[i]!;
    if (typeof d === 'string') {
      count('malformed');
      deadLetters.push({ record, reason: d });
      const { key, evidence, ...columns } = malformedColumns(record, d, ingestedAt);
      rows.push({
        ...columns,
        loop_id: key,
        seq: 0,
        time: ingestedAt,
        time_text: '',
        kind: '',
        kind_class: '',
        hash: '',
        computed_hash: '',
        payload: evidence,
        evidence: '',
      });
      return;
    }
    const head = cache.get(d.loopId) ?? undefined;
    // Only an envelope at or below its head is compared with a stored version.
    const low = head !== undefined && d.seq <= head.seq;
    const key = low || needed.size > 0 ? versionKey(d.loopId, d.seq) : '';
    const stored = low ? versions.get(key) : undefined;
    const result = verifyLink(head, d, stored, options.seqEncoding);
    count(result.verdict);
    if (result.head) cache.set(d.loopId, result.head);
    // A redelivery is dropped: the first copy is stored already.
    if (result.verdict === 'duplicate') return;
    if (result.verdict !== 'fork' && !stored && needed.has(key)) {
      versions.set(key, { hash: d.hash, timeText: d.timeText, kind: d.kind, payload: d.payload });
    }
    rows.push({
      loop_id: d.loopId,
      seq: d.seq,
      time: toClickHouseDateTime(d.time),
      time_text: d.timeText,
      kind: d.kind,
      kind_class: d.kindClass ?? '',
      hash: d.hash.toString('hex'),
      computed_hash: result.computedHash?.toString('hex') ?? '',
      payload: d.payloadText,
      verdict: result.verdict,
      detail: result.detail,
      evidence:
        result.verdict === 'fork' && stored
          ? JSON.stringify({ stored: { hash: stored.hash.toString('hex'), time: stored.timeText, kind: stored.kind, payload: stored.payload.toString('utf8') } })
          : '',
      ...kafkaColumns(record, ingestedAt),
    });
  });
  return { rows, deadLetters, verdicts };
}

/** The loop runtime's envelopes topic as a Stream of the ingest loop. */
export class EnvelopeStream implements Stream<EnvelopeRow> {
  readonly name = 'envelopes';
  private readonly cache = new HeadCache();

  constructor(
    readonly topic: string,
    private readonly store: EnvelopeStorePort,
    private readonly options: EnvelopeBatchOptions,
  ) {}

  progress(partition: number): Promise<bigint> {
    return this.store.progress(this.topic, partition);
  }

  process(records: readonly SourceRecord[]): Promise<StreamBatch<EnvelopeRow>> {
    return processEnvelopeBatch(records, this.cache, this.store, this.options);
  }

  insert(rows: readonly EnvelopeRow[]): Promise<void> {
    return this.store.insert(rows);
  }

  reset(): void {
    this.cache.clear();
  }
}
