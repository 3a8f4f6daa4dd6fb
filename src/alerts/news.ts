/**
 * The loops waiting for an alert evaluation (issue 11, "Evaluation"): `ingest`
 * adds each flush's loops with news to a Redis set and asks for an
 * evaluation job (deduplicated: one waiting, one running at most); the job
 * takes what gathered. A job that dies after taking its loops loses nothing
 * for good: the next sweep looks at every loop with news since the last one.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { ALERT_EVALUATE_JOB, EVALUATE_JOB_OPTIONS } from '../jobs/queues.js';

const newsKey = (prefix: string): string => `${prefix}:alerts:news`;
const ratesKey = (prefix: string): string => `${prefix}:alerts:news:rates`;
/** Members per SADD: a big flush is several commands, not one huge one. */
const SADD_CHUNK = 10_000;

/** Adds loops (and whether sub-agent outcomes came) to the news, then asks for an evaluation. */
export async function addNews(redis: Redis, queue: Pick<Queue, 'add'>, prefix: string, loops: readonly string[], rates: boolean): Promise<void> {
  const tx = redis.multi();
  for (let i = 0; i < loops.length; i += SADD_CHUNK) tx.sadd(newsKey(prefix), ...loops.slice(i, i + SADD_CHUNK));
  if (rates) tx.set(ratesKey(prefix), '1');
  await tx.exec();
  await askEvaluation(queue);
}

export interface News {
  readonly loops: string[];
  readonly rates: boolean;
  /** Loops are left for the next evaluation. */
  readonly more: boolean;
}

/** Takes at most `max` loops of the news, and the rates flag. */
export async function takeNews(redis: Redis, prefix: string, max: number): Promise<News> {
  const [[, loops], [, rates], [, left]] = (await redis.multi().spop(newsKey(prefix), max).getdel(ratesKey(prefix)).scard(newsKey(prefix)).exec()) as [
    [unknown, string[]],
    [unknown, string | null],
    [unknown, number],
  ];
  return { loops, rates: rates !== null, more: left > 0 };
}

/** The loops waiting now, and the rates flag (what the tests check). */
export async function peekNews(redis: Redis, prefix: string): Promise<{ loops: string[]; rates: boolean }> {
  return { loops: await redis.smembers(newsKey(prefix)), rates: (await redis.exists(ratesKey(prefix))) === 1 };
}

/** Asks for an evaluation: one waiting at most, the dedup drops the rest (a running one keeps the last as its next). */
export async function askEvaluation(queue: Pick<Queue, 'add'>): Promise<void> {
  await queue.add(ALERT_EVALUATE_JOB, {}, EVALUATE_JOB_OPTIONS);
}
