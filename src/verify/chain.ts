/**
 * Verifies one envelope against its loop's verified head: a pure function of
 * (head, envelope, the stored versions of the same seq). The state lives
 * at the edge (memory for `agentledger verify`, ClickHouse for the consumer).
 *
 * Every link is checked; checking only the ends of a chain proves nothing.
 */
import type { Envelope } from '../decode/envelope.js';
import { compareInstants, type Instant } from '../decode/time.js';
import { linkHash, ZERO_HASH, type SeqEncoding } from './hash.js';

export const VERDICTS = ['ok', 'duplicate', 'fork', 'mismatch', 'gap', 'regression', 'time_regression', 'malformed'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** True for a verdict that is evidence of a problem: every verdict but ok and duplicate. */
export const isViolation = (v: Verdict): boolean => v !== 'ok' && v !== 'duplicate';

/** The last envelope that moved a loop's chain forward. */
export interface ChainHead {
  readonly seq: number;
  /** The hash the envelope carried. */
  readonly hash: Buffer;
  /** The hash agentledger recomputed for it (undefined after a gap: no predecessor). */
  readonly computedHash: Buffer | undefined;
  readonly timeText: string;
  readonly time: Instant;
  /** The head itself failed to verify: the next link may have been built on its honest hash. */
  readonly mismatched: boolean;
}

/** A stored envelope of the same loop and seq, for telling a redelivery from a fork. */
export type StoredVersion = Pick<Envelope, 'hash' | 'timeText' | 'kind' | 'payload'>;

export interface Verification {
  readonly verdict: Exclude<Verdict, 'malformed'>;
  readonly detail: string;
  /**
   * The recomputed hash; undefined where none was computed: after a gap (no
   * predecessor) and for an envelope at or below the head (duplicate, fork, regression).
   */
  readonly computedHash: Buffer | undefined;
  /** The loop's head after this envelope (the same object when it did not move). */
  readonly head: ChainHead | undefined;
}

export type LinkInput = Pick<Envelope, 'loopId' | 'seq' | 'timeText' | 'time' | 'kind' | 'payload' | 'hash'>;

function sameVersion(a: StoredVersion, e: LinkInput): boolean {
  return a.hash.equals(e.hash) && a.timeText === e.timeText && a.kind === e.kind && a.payload.equals(e.payload);
}

const hex = (b: Buffer | undefined): string => (b ? b.toString('hex') : '');

/**
 * `versions` are every stored version of (loop, env.seq) that is not a
 * redelivery, first stored first (the chain's own, then forks): a copy of any
 * of them is a duplicate, so a fork redelivered is not a second fork; a new
 * version is a fork, shown against the first.
 */
export function verifyLink(
  head: ChainHead | undefined,
  env: LinkInput,
  versions: readonly StoredVersion[],
  seqEncoding: SeqEncoding,
): Verification {
  const headSeq = head?.seq ?? 0;

  if (env.seq <= headSeq) {
    // Below or at the head: a redelivery, a second version, or a late arrival.
    const first = versions[0];
    if (first === undefined) {
      return { verdict: 'regression', detail: `seq ${env.seq} arrived after seq ${headSeq} and was never seen before`, computedHash: undefined, head };
    }
    if (versions.some((v) => sameVersion(v, env))) return { verdict: 'duplicate', detail: '', computedHash: undefined, head };
    return {
      verdict: 'fork',
      detail: `seq ${env.seq} already stored with hash ${hex(first.hash)}; this version carries ${hex(env.hash)}`,
      computedHash: undefined,
      head,
    };
  }

  if (env.seq > headSeq + 1) {
    const next: ChainHead = { seq: env.seq, hash: env.hash, computedHash: undefined, timeText: env.timeText, time: env.time, mismatched: false };
    return { verdict: 'gap', detail: `expected seq ${headSeq + 1}, got ${env.seq}`, computedHash: undefined, head: next };
  }

  // The next link: recompute it from the head's carried hash.
  const prev = head?.hash ?? ZERO_HASH;
  let computed = linkHash(prev, env, seqEncoding);
  let verified = computed.equals(env.hash);
  if (!verified && head?.mismatched && head.computedHash) {
    // The head was tampered with: if its payload changed, its carried hash is
    // the honest one (tried above); if its hash changed, the honest one is what
    // we recomputed for it. Either way one tampered envelope is one mismatch.
    const alternative = linkHash(head.computedHash, env, seqEncoding);
    if (alternative.equals(env.hash)) {
      computed = alternative;
      verified = true;
    }
  }
  const next: ChainHead = { seq: env.seq, hash: env.hash, computedHash: computed, timeText: env.timeText, time: env.time, mismatched: !verified };
  if (!verified) {
    return { verdict: 'mismatch', detail: mismatchDetail(env, prev, computed, seqEncoding), computedHash: computed, head: next };
  }
  if (head && compareInstants(env.time, head.time) < 0) {
    return {
      verdict: 'time_regression',
      detail: `time ${env.timeText} is earlier than seq ${head.seq}'s ${head.timeText}`,
      computedHash: computed,
      head: next,
    };
  }
  return { verdict: 'ok', detail: '', computedHash: computed, head: next };
}

export const SEQ_ENCODING_SETTING = 'AGENTLEDGER_SEQ_ENCODING';

function mismatchDetail(env: LinkInput, prev: Buffer, computed: Buffer, seqEncoding: SeqEncoding): string {
  let detail = `carried hash ${hex(env.hash)} != recomputed ${hex(computed)}`;
  if (env.seq === 1) {
    const other: SeqEncoding = seqEncoding === 'binary' ? 'decimal' : 'binary';
    if (linkHash(prev, env, other).equals(env.hash)) {
      detail += `; it verifies with Seq hashed as ${other === 'decimal' ? 'decimal text' : '8 bytes big-endian'}: set ${SEQ_ENCODING_SETTING}=${other}`;
    }
  }
  return detail;
}
