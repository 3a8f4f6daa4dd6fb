/** The loops merged into one topic order by emit time; per-loop order is kept. */
import { loopRecords } from './loop-records.js';
const before = (a, b) => (a.key !== b.key ? a.key < b.key : a.plan.index < b.plan.index);
class Heap {
    items = [];
    get size() {
        return this.items.length;
    }
    push(s) {
        const h = this.items;
        h.push(s);
        let i = h.length - 1;
        while (i > 0) {
            const parent = (i - 1) >> 1;
            if (!before(h[i], h[parent]))
                break;
            [h[i], h[parent]] = [h[parent], h[i]];
            i = parent;
        }
    }
    pop() {
        const h = this.items;
        const top = h[0];
        const last = h.pop();
        if (h.length > 0 && last) {
            h[0] = last;
            let i = 0;
            for (;;) {
                const l = 2 * i + 1;
                const r = l + 1;
                let m = i;
                if (l < h.length && before(h[l], h[m]))
                    m = l;
                if (r < h.length && before(h[r], h[m]))
                    m = r;
                if (m === i)
                    break;
                [h[i], h[m]] = [h[m], h[i]];
                i = m;
            }
        }
        return top;
    }
}
/**
 * Merges the loops by the time their records reach the topic. A loop's
 * records are generated when it starts and dropped when it ends, so memory
 * holds only the loops running at once.
 */
export function* interleave(plan, seed, payloadBytes) {
    const heap = new Heap();
    for (const p of plan)
        heap.push({ plan: p, key: p.startNs, records: undefined, next: 0 });
    for (let slot = heap.pop(); slot; slot = heap.pop()) {
        if (!slot.records) {
            slot.records = loopRecords(slot.plan, seed, payloadBytes);
            if (slot.records.length === 0)
                continue;
            slot.key = slot.records[0].emitNs;
            heap.push(slot);
            continue;
        }
        yield { key: slot.plan.loopId, value: slot.records[slot.next].value };
        slot.next++;
        if (slot.next < slot.records.length) {
            slot.key = slot.records[slot.next].emitNs;
            heap.push(slot);
        }
    }
}
//# sourceMappingURL=interleave.js.map