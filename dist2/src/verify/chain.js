import { compareInstants } from '../decode/time.js';
import { linkHash, ZERO_HASH } from './hash.js';
export const VERDICTS = ['ok', 'duplicate', 'fork', 'mismatch', 'gap', 'regression', 'time_regression', 'malformed'];
/** True for a verdict that is evidence of a problem: every verdict but ok and duplicate. */
export const isViolation = (v) => v !== 'ok' && v !== 'duplicate';
function sameVersion(a, e) {
    return a.hash.equals(e.hash) && a.timeText === e.timeText && a.kind === e.kind && a.payload.equals(e.payload);
}
const hex = (b) => (b ? b.toString('hex') : '');
/**
 * `versions` are every stored version of (loop, env.seq) that is not a
 * redelivery, first stored first (the chain's own, then forks): a copy of any
 * of them is a duplicate, so a fork redelivered is not a second fork; a new
 * version is a fork, shown against the first.
 */
export function verifyLink(head, env, versions, seqEncoding) {
    const headSeq = head?.seq ?? 0;
    if (env.seq <= headSeq) {
        // Below or at the head: a redelivery, a second version, or a late arrival.
        const first = versions[0];
        if (first === undefined) {
            return { verdict: 'regression', detail: `seq ${env.seq} arrived after seq ${headSeq} and was never seen before`, computedHash: undefined, head };
        }
        if (versions.some((v) => sameVersion(v, env)))
            return { verdict: 'duplicate', detail: '', computedHash: undefined, head };
        return {
            verdict: 'fork',
            detail: `seq ${env.seq} already stored with hash ${hex(first.hash)}; this version carries ${hex(env.hash)}`,
            computedHash: undefined,
            head,
        };
    }
    if (env.seq > headSeq + 1) {
        const next = { seq: env.seq, hash: env.hash, computedHash: undefined, timeText: env.timeText, time: env.time, mismatched: false };
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
    const next = { seq: env.seq, hash: env.hash, computedHash: computed, timeText: env.timeText, time: env.time, mismatched: !verified };
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
function mismatchDetail(env, prev, computed, seqEncoding) {
    let detail = `carried hash ${hex(env.hash)} != recomputed ${hex(computed)}`;
    if (env.seq === 1) {
        const other = seqEncoding === 'binary' ? 'decimal' : 'binary';
        if (linkHash(prev, env, other).equals(env.hash)) {
            detail += `; it verifies with Seq hashed as ${other === 'decimal' ? 'decimal text' : '8 bytes big-endian'}: set ${SEQ_ENCODING_SETTING}=${other}`;
        }
    }
    return detail;
}
//# sourceMappingURL=chain.js.map