/**
 * A lease in Redis: one holder at a time of a named piece of work (a rollup
 * sweep), across every worker and every `agentledger rollups sweep`. BullMQ's
 * global concurrency alone does not give that: a job whose lock expired (its
 * worker frozen, or killed and its job found stalled) is handed to another
 * worker while the first may still be running it. A lease is taken with a
 * random token, renewed while held, and every renewal is a compare-and-set on
 * the token: a holder that was away longer than the lease finds it gone (or
 * someone else's) at its next renewal and must drop its work.
 */
import { randomUUID } from 'node:crypto';
/** Extends the lease only if it is still this token's. */
const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;
/** Deletes the lease only if it is still this token's. */
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`;
/** Thrown at a work boundary once the lease is lost: someone else may hold it now. */
export class LeaseLost extends Error {
    name = 'LeaseLost';
    retriable = true;
}
export class Lease {
    redis;
    key;
    token;
    ttlMs;
    lost = false;
    timer;
    constructor(redis, key, token, ttlMs) {
        this.redis = redis;
        this.key = key;
        this.token = token;
        this.ttlMs = ttlMs;
    }
    /** Takes the lease if nobody holds it; undefined if someone does. Renewed every third of `ttlMs` until released. */
    static async acquire(redis, key, ttlMs) {
        const token = randomUUID();
        if ((await redis.set(key, token, 'PX', ttlMs, 'NX')) !== 'OK')
            return undefined;
        const lease = new Lease(redis, key, token, ttlMs);
        lease.timer = setInterval(() => void lease.renew().catch(() => undefined), Math.max(1, Math.floor(ttlMs / 3)));
        lease.timer.unref();
        return lease;
    }
    /** Renews the lease now; false (and lost for good) when it is no longer this holder's. */
    async renew() {
        if (this.lost)
            return false;
        const ok = (await this.redis.eval(RENEW, 1, this.key, this.token, String(this.ttlMs))) === 1;
        if (!ok)
            this.lost = true;
        return ok;
    }
    /**
     * A work boundary: throws LeaseLost unless the lease is still held (checked
     * in Redis now, not from the last timer's answer, and renewed).
     */
    async check() {
        if (!(await this.renew()))
            throw new LeaseLost(`the lease ${this.key} was lost (held longer than ${this.ttlMs} ms without renewal, or taken over)`);
    }
    /** Stops renewing and gives the lease up if still held. */
    async release() {
        clearInterval(this.timer);
        if (!this.lost)
            await this.redis.eval(RELEASE, 1, this.key, this.token);
        this.lost = true;
    }
}
//# sourceMappingURL=lease.js.map