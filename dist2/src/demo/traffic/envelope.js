/** One link of a loop's chain: its hash (computed here, independently of src/verify) and its Envelope JSON. */
import { createHash } from 'node:crypto';
import { goString } from './go-json.js';
export function linkHash(prev, loopId, seq, timeText, kind, payload) {
    const seqBytes = Buffer.alloc(8);
    seqBytes.writeBigUInt64BE(BigInt(seq));
    return createHash('sha256').update(prev).update(loopId, 'utf8').update(seqBytes).update(timeText, 'utf8').update(kind, 'utf8').update(payload).digest();
}
/** One Kafka record value: the Envelope as Go's json.Marshal writes it. */
export function envelopeJson(loopId, seq, timeText, kind, payload, hash) {
    return `{"LoopID":${goString(loopId)},"Seq":${seq},"Time":"${timeText}","Kind":${goString(kind)},"Payload":"${payload.toString('base64')}","Hash":[${hash.join(',')}]}`;
}
//# sourceMappingURL=envelope.js.map