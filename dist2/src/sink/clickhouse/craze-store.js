import { incarnationKey } from '../../rows/rows.js';
import { CRAZE_COLUMNS } from './columns.js';
import { insertTsv } from './tsv.js';
import { ONE_SERVER } from './replicas.js';
import { inListChunks, partitionProgress, queryRows } from './sql.js';
export class CrazeStore {
    ch;
    sql;
    /** `sql`: how a state read reaches the rows (on a cluster, every replica: replicas.ts). */
    constructor(ch, sql = ONE_SERVER) {
        this.ch = ch;
        this.sql = sql;
    }
    progress(topic, partition, since = 0) {
        return partitionProgress(this.ch, 'craze_progress', topic, partition, since, this.sql);
    }
    /** Heads of every incarnation of the given sessions, keyed by incarnationKey(). */
    async heads(sessionIds) {
        const heads = new Map();
        for (const chunk of inListChunks(sessionIds)) {
            const rows = await queryRows(this.ch, 'craze_heads', { sessions: chunk }, this.sql);
            for (const r of rows)
                heads.set(incarnationKey(r.session_id, r.incarnation), { seq: Number(r.seq), accountState: r.account_state });
        }
        return heads;
    }
    /** The subset of (session, incarnation, seq) already stored, as `${incarnationKey()}\0${seq}`. */
    async seen(keys) {
        const found = new Set();
        for (const chunk of inListChunks(keys)) {
            const rows = await queryRows(this.ch, 'craze_seen', { keys: chunk }, this.sql);
            for (const r of rows)
                found.add(`${incarnationKey(r.session_id, r.incarnation)}\u0000${Number(r.seq)}`);
        }
        return found;
    }
    /** Parses and checks rows as insert() does, storing nothing: craze_events_probe is a Null-engine twin (migration 0007). */
    probe(rows) {
        return insertTsv(this.ch, 'craze_events_probe', rows, CRAZE_COLUMNS);
    }
    insert(rows, queryId) {
        return insertTsv(this.ch, 'craze_events', rows, CRAZE_COLUMNS, queryId);
    }
    /** craze_events has no derived table. */
    derive() {
        return Promise.resolve();
    }
    /** craze_events has no derived table. */
    rederive() {
        return Promise.resolve();
    }
    /** craze_events has no derived table. */
    derivedLost() {
        return Promise.resolve(false);
    }
}
//# sourceMappingURL=craze-store.js.map