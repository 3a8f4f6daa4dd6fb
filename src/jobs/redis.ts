/**
 * The one place a Redis connection for BullMQ is made. BullMQ's blocking
 * commands need `maxRetriesPerRequest: null`; without it a worker throws
 * instead of waiting for Redis to come back after a restart.
 */
import { Redis } from 'ioredis';
import { redactUrl } from '../config/index.js';
import { failureMessage } from '../errors/errors.js';

export function createRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false });
}

/**
 * A connection for adding jobs from a process whose own work must not wait
 * on Redis (`ingest`): while Redis is away a command fails at once instead
 * of queueing, and one that gets no answer fails after 5 s. Errors are left
 * to the caller's failed adds (no listener would print each with its stack).
 */
export function createProducerRedis(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: 5000 });
  redis.on('error', () => undefined);
  return redis;
}

/**
 * A Redis failure in one line. ioredis reports a refused login in the
 * server's words (NOAUTH, WRONGPASS, "AUTH … without any password
 * configured"); anything else means nothing usable answered.
 */
export function redisFailure(url: string, err: unknown): string {
  const message = failureMessage(err);
  if (/NOAUTH|WRONGPASS|invalid (username-)?password|without any password/i.test(message)) {
    return `Redis at ${redactUrl(url)} refused the login (${message}): check the user and password in AGENTLEDGER_REDIS_URL`;
  }
  return `Redis at ${redactUrl(url)} did not answer (${message || 'connection closed'}): check that it runs and AGENTLEDGER_REDIS_URL`;
}

/**
 * One try at Redis, no reconnects, within seconds: what `doctor` reports and
 * what a command checks before it hands Redis to BullMQ (whose clients wait
 * for Redis forever). Throws the one-line redisFailure().
 */
export async function probeRedis(url: string): Promise<{ version: string; appendonly: string }> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000, retryStrategy: () => null });
  // Without a listener ioredis prints each error event with its stack; the
  // first one says why (the rejected connect only says "closed").
  let cause: unknown;
  redis.on('error', (err: unknown) => (cause ??= err));
  try {
    await redis.connect();
    const info = await redis.info('server');
    const aof = ((await redis.config('GET', 'appendonly')) as string[])[1];
    return { version: /redis_version:(\S+)/.exec(info)?.[1] ?? '?', appendonly: aof ?? '?' };
  } catch (err) {
    throw new Error(redisFailure(url, cause ?? err));
  } finally {
    redis.disconnect();
  }
}
