/**
 * The one place a Redis connection for BullMQ is made. BullMQ's blocking
 * commands need `maxRetriesPerRequest: null`; without it a worker throws
 * instead of waiting for Redis to come back after a restart.
 */
import { Redis } from 'ioredis';

export function createRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false });
}
