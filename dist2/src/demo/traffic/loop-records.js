/** One loop's records: times, padded payloads, the honest chain, then its planted problem, in the order they reach the topic. */
import { envelopeJson, linkHash } from './envelope.js';
import { loopEvents, padText } from './events.js';
import { canonical } from './go-json.js';
import { mixSeed, mulberry32 } from './prng.js';
import { formatRfc3339Nano, NS_PER_S } from './time.js';
/**
 * Another version of a payload that still decodes: its last digit changed,
 * or, with no digit (Resumed's `{}`), a space after the opening brace.
 */
function tamper(payload) {
    const text = payload.toString('utf8');
    for (let i = text.length - 1; i >= 0; i--) {
        const c = text.charCodeAt(i);
        if (c >= 48 && c <= 57)
            return Buffer.from(text.slice(0, i) + String.fromCharCode(48 + ((c - 48 + 1) % 10)) + text.slice(i + 1), 'utf8');
    }
    return Buffer.from(`{ ${text.slice(1)}`, 'utf8');
}
const HASH_TEXT_ESTIMATE = 32 * 3.5 + 2;
/** One loop's records in its topic order, with its planted problem. */
export function loopRecords(p, seed, payloadBytes) {
    const rng = mulberry32(mixSeed(seed, p.index));
    const events = loopEvents(rng, p.loopId, p.n);
    const planted = p.planted;
    // Times: monotonic, with now and then equal times and whole milliseconds or seconds.
    const times = [];
    let t = p.startNs;
    for (const e of events) {
        t += BigInt(e.dtNs);
        const r = rng();
        if (r < 0.03)
            t = ((t + NS_PER_S - 1n) / NS_PER_S) * NS_PER_S;
        else if (r < 0.08)
            t = ((t + 999999n) / 1000000n) * 1000000n;
        times.push(t);
    }
    if (planted?.kind === 'timeRegression')
        times[planted.seq - 1] = times[planted.seq - 2] - planted.backNs;
    const timeTexts = times.map(formatRfc3339Nano);
    // Padding: spread what the records lack over the paddable events' text.
    const bare = events.map((e) => Buffer.from(canonical(e.body('')), 'utf8'));
    const paddable = events.filter((e) => e.paddable).length;
    let padPerEvent = 0;
    if (paddable > 0) {
        let size = 0;
        for (let i = 0; i < events.length; i++) {
            size += 60 + p.loopId.length + timeTexts[i].length + events[i].kind.length + Math.ceil(bare[i].length / 3) * 4 + HASH_TEXT_ESTIMATE;
        }
        padPerEvent = Math.max(0, Math.floor(((payloadBytes * events.length - size) * 3) / 4 / paddable));
    }
    const payloads = events.map((e, i) => (e.paddable && padPerEvent > 0 ? Buffer.from(canonical(e.body(padText(rng, padPerEvent))), 'utf8') : bare[i]));
    // The honest chain.
    const values = [];
    const hashes = [];
    let prev = Buffer.alloc(32);
    for (let i = 0; i < events.length; i++) {
        const seq = i + 1;
        const hash = linkHash(prev, p.loopId, seq, timeTexts[i], events[i].kind, payloads[i]);
        values.push(Buffer.from(envelopeJson(p.loopId, seq, timeTexts[i], events[i].kind, payloads[i], hash), 'utf8'));
        hashes.push(hash);
        prev = hash;
    }
    let order = values.map((value, i) => ({ time: times[i], value }));
    if (planted) {
        const k = planted.seq;
        const i = k - 1;
        const e = events[i];
        switch (planted.kind) {
            case 'mismatch':
                order[i] = { time: times[i], value: Buffer.from(envelopeJson(p.loopId, k, timeTexts[i], e.kind, tamper(payloads[i]), hashes[i]), 'utf8') };
                break;
            case 'gap':
                order.splice(i, 1);
                break;
            case 'fork': {
                const other = tamper(payloads[i]);
                const hash = linkHash(i === 0 ? Buffer.alloc(32) : hashes[i - 1], p.loopId, k, timeTexts[i], e.kind, other);
                const at = Math.min(order.length, i + 1 + planted.later);
                order.splice(at, 0, { time: times[i], value: Buffer.from(envelopeJson(p.loopId, k, timeTexts[i], e.kind, other, hash), 'utf8') });
                break;
            }
            case 'reorder':
                [order[i], order[i + 1]] = [order[i + 1], order[i]];
                break;
            case 'duplicate': {
                const at = Math.min(order.length, i + 1 + planted.later);
                order.splice(at, 0, { time: times[i], value: Buffer.from(values[i]) });
                break;
            }
            case 'timeRegression':
                break;
        }
    }
    // A record reaches the topic no earlier than the ones before it.
    let emit = 0n;
    order = order.map((r) => {
        if (r.time > emit)
            emit = r.time;
        return { time: emit, value: r.value };
    });
    return order.map((r) => ({ emitNs: r.time, value: r.value }));
}
//# sourceMappingURL=loop-records.js.map