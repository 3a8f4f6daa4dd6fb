/**
 * What an alert sweep or evaluation is given (sweep.ts), and with it each of
 * its steps (state-store.ts, transitions.ts, cursor.ts): its own file, so the
 * steps share it without importing the sweep that runs them.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import type { Budgets } from './budgets.js';
import type { RuleId } from './condition.js';
import type { AlertRuleConfig } from './rules.js';
import type { Notification } from './state.js';

export interface AlertSweepDeps {
  readonly ch: ClickHouseClient;
  readonly redis: Redis;
  /** Key prefix in Redis (AGENTLEDGER_QUEUE_PREFIX). */
  readonly prefix: string;
  readonly deliveries: Queue;
  readonly rules: AlertRuleConfig;
  readonly renotifyMs: number;
  /** The `spend_budget` budgets (budgets.ts); undefined: none. */
  readonly budgets?: Budgets;
  /** How far back a sweep looks again for rows stored late (AGENTLEDGER_ROLLUP_LATE_MS). */
  readonly lateMs: number;
  readonly log: Logger;
  /** Told each notification recorded and queued (metrics). */
  readonly onNotified?: (rule: RuleId, notification: Notification) => void;
  /**
   * Aborted when the work must stop (a worker told to stop): a sweep or an
   * evaluation stops before its next chunk of loops, its progress kept for
   * the next job (AlertSweepResult.stopped).
   */
  readonly signal?: AbortSignal;
  /** Loops per chunk (default ALERT_CHUNK_LOOPS; tests make it small). */
  readonly chunkLoops?: number;
}
