/**
 * One loop's chain of envelopes, built link by link as the runtime hashes
 * it, keyed by LoopID: [RFC 3339 time, kind, payload JSON] per link, seq from 1,
 * the first link chained to 32 zero bytes.
 */
import { envelopeJson, linkHash } from '../../src/demo/traffic/envelope.js';
export function chain(loopId, links) {
    let prev = Buffer.alloc(32);
    return links.map(([time, kind, payload], i) => {
        const body = Buffer.from(payload);
        const hash = linkHash(prev, loopId, i + 1, time, kind, body);
        prev = hash;
        return { key: loopId, value: Buffer.from(envelopeJson(loopId, i + 1, time, kind, body, hash)) };
    });
}
//# sourceMappingURL=envelope-chain.js.map