import { verifyLink } from './chain.js';
export class MemoryChains {
    seqEncoding;
    headByLoop = new Map();
    /** Per loop and seq, every version that was not a redelivery, first seen first. */
    versionsByLoop = new Map();
    constructor(seqEncoding) {
        this.seqEncoding = seqEncoding;
    }
    get loopCount() {
        return this.versionsByLoop.size;
    }
    /** ChainPort: the heads of the given loops that have one. */
    heads(loopIds) {
        const found = new Map();
        for (const loopId of loopIds) {
            const head = this.headByLoop.get(loopId);
            if (head)
                found.set(loopId, head);
        }
        return Promise.resolve(found);
    }
    /** ChainPort: every version of each (loop, seq), first seen first. */
    versions(keys) {
        const found = [];
        for (const [loopId, seq] of keys) {
            for (const v of this.versionsByLoop.get(loopId)?.get(seq) ?? [])
                found.push({ ...v, loopId, seq });
        }
        return Promise.resolve(found);
    }
    verify(env) {
        let bySeq = this.versionsByLoop.get(env.loopId);
        if (!bySeq)
            this.versionsByLoop.set(env.loopId, (bySeq = new Map()));
        const versions = bySeq.get(env.seq);
        const result = verifyLink(this.headByLoop.get(env.loopId), env, versions ?? [], this.seqEncoding);
        if (result.head)
            this.headByLoop.set(env.loopId, result.head);
        // Every version but a redelivery is kept: a fork redelivered is a duplicate of it.
        if (result.verdict !== 'duplicate') {
            // A copy of the four fields only: every version stays for the whole run,
            // and the envelope would keep its parsed payload alive with it.
            const version = { hash: env.hash, timeText: env.timeText, kind: env.kind, payload: env.payload };
            if (versions)
                versions.push(version);
            else
                bySeq.set(env.seq, [version]);
        }
        return result;
    }
}
//# sourceMappingURL=memory-chains.js.map