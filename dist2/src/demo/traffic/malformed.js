/** Records the decoder must reject, one fault each. */
import { linkHash } from './envelope.js';
/** Every kind of record `decodeEnvelope` must reject (each one alone; the rest of the record is valid). */
export function malformedRecords() {
    const loopId = 'demo-malformed';
    const timeText = '2026-11-30T10:00:00.5Z';
    const payload = Buffer.from('{"iteration":1}');
    const hash = linkHash(Buffer.alloc(32), loopId, 1, timeText, 'IterationStarted', payload);
    const good = {
        LoopID: loopId,
        Seq: 1,
        Time: timeText,
        Kind: 'IterationStarted',
        Payload: payload.toString('base64'),
        Hash: [...hash],
    };
    const json = (over) => Buffer.from(JSON.stringify({ ...good, ...over }), 'utf8');
    const without = (field) => {
        const copy = { ...good };
        delete copy[field];
        return Buffer.from(JSON.stringify(copy), 'utf8');
    };
    const b64 = (text) => Buffer.from(text, 'utf8').toString('base64');
    // A > 10 MB JSON object as a ModelCalled payload.
    const huge = `{"action_id":"act-huge","response":{"text":"${'x'.repeat(10 * 1024 * 1024 + 64)}"}}`;
    const seqText = (digits) => Buffer.from(JSON.stringify(good).replace('"Seq":1', `"Seq":${digits}`), 'utf8');
    const invalidUtf8 = Buffer.concat([
        Buffer.from('{"LoopID":"demo-', 'utf8'),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from(JSON.stringify(good).slice('{"LoopID":"demo-'.length), 'utf8'),
    ]);
    return [
        { name: 'not JSON', key: loopId, value: Buffer.from('{"LoopID":"demo-malformed","Seq":1,', 'utf8') },
        { name: 'JSON array', key: loopId, value: Buffer.from(JSON.stringify([good]), 'utf8') },
        { name: 'JSON string', key: loopId, value: Buffer.from('"LoopID"', 'utf8') },
        { name: 'wrong types: LoopID a number', key: loopId, value: json({ LoopID: 42 }) },
        { name: 'wrong types: Hash an object', key: loopId, value: json({ Hash: { '0': 1 } }) },
        { name: 'missing Hash', key: loopId, value: without('Hash') },
        { name: 'bad base64 Payload', key: loopId, value: json({ Payload: 'eyJpdGVyYXRpb24iOjF9$$' }) },
        { name: 'hash of 31 bytes', key: loopId, value: json({ Hash: [...hash.subarray(0, 31)] }) },
        { name: 'hash byte 256', key: loopId, value: json({ Hash: [256, ...hash.subarray(1)] }) },
        { name: 'hash as 63 hex characters', key: loopId, value: json({ Hash: hash.toString('hex').slice(1) }) },
        { name: 'Seq 0', key: loopId, value: json({ Seq: 0 }) },
        { name: 'Seq -1', key: loopId, value: json({ Seq: -1 }) },
        { name: 'Seq 1.5', key: loopId, value: json({ Seq: 1.5 }) },
        { name: 'Seq 9007199254740993', key: loopId, value: seqText('9007199254740993') },
        { name: 'Seq "1"', key: loopId, value: json({ Seq: '1' }) },
        { name: 'empty LoopID', key: '', value: json({ LoopID: '' }) },
        { name: 'empty Kind', key: loopId, value: json({ Kind: '' }) },
        { name: 'Time not RFC 3339', key: loopId, value: json({ Time: '30/11/2026 10:00:00' }) },
        { name: 'Time with an impossible date', key: loopId, value: json({ Time: '2026-02-30T10:00:00Z' }) },
        { name: 'payload over 10 MB', key: loopId, value: json({ Kind: 'ModelCalled', Payload: b64(huge) }) },
        { name: 'invalid UTF-8 in the record', key: loopId, value: invalidUtf8 },
        { name: 'payload not UTF-8', key: loopId, value: json({ Payload: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]).toString('base64') }) },
        { name: 'payload not JSON', key: loopId, value: json({ Payload: b64('iteration=1') }) },
        { name: 'empty value', key: null, value: Buffer.alloc(0) },
        { name: 'payload of the wrong type for its kind', key: loopId, value: json({ Payload: b64('{"iteration":"three"}') }) },
        { name: 'payload not an object for its kind', key: loopId, value: json({ Kind: 'ModelCalled', Payload: b64('[1,2,3]') }) },
        { name: 'cost not a number', key: loopId, value: json({ Kind: 'BudgetCharged', Payload: b64('{"action_type":"model","usd":"0.01"}') }) },
    ];
}
//# sourceMappingURL=malformed.js.map