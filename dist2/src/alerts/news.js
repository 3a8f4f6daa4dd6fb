import { ALERT_EVALUATE_JOB, EVALUATE_JOB_OPTIONS } from '../jobs/queues.js';
const newsKey = (prefix) => `${prefix}:alerts:news`;
const ratesKey = (prefix) => `${prefix}:alerts:news:rates`;
/** Members per SADD: a big flush is several commands, not one huge one. */
const SADD_CHUNK = 10_000;
/** Adds loops (and whether sub-agent outcomes came) to the news, then asks for an evaluation. */
export async function addNews(redis, queue, prefix, loops, rates) {
    const tx = redis.multi();
    for (let i = 0; i < loops.length; i += SADD_CHUNK)
        tx.sadd(newsKey(prefix), ...loops.slice(i, i + SADD_CHUNK));
    if (rates)
        tx.set(ratesKey(prefix), '1');
    await tx.exec();
    await askEvaluation(queue);
}
/** Takes at most `max` loops of the news, and the rates flag. */
export async function takeNews(redis, prefix, max) {
    const [[, loops], [, rates], [, left]] = (await redis.multi().spop(newsKey(prefix), max).getdel(ratesKey(prefix)).scard(newsKey(prefix)).exec());
    return { loops, rates: rates !== null, more: left > 0 };
}
/** The loops waiting now, and the rates flag (what the tests check). */
export async function peekNews(redis, prefix) {
    return { loops: await redis.smembers(newsKey(prefix)), rates: (await redis.exists(ratesKey(prefix))) === 1 };
}
/** Asks for an evaluation: one waiting at most, the dedup drops the rest (a running one keeps the last as its next). */
export async function askEvaluation(queue) {
    await queue.add(ALERT_EVALUATE_JOB, {}, EVALUATE_JOB_OPTIONS);
}
//# sourceMappingURL=news.js.map