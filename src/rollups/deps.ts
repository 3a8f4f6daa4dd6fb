/**
 * What every rollup step is given (rollups.ts's sweep and rebuild, the loop
 * summaries, the chain flags): the clients, the settings, the stop signal and
 * the test hooks. Its own file, at the bottom of src/rollups/, so the steps
 * share it without importing the entry points that run them.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import type { StateSql } from '../clickhouse/replicas.js';

export interface RollupDeps {
  readonly ch: ClickHouseClient;
  readonly redis: Redis;
  /** Key prefix in Redis (AGENTLEDGER_QUEUE_PREFIX). */
  readonly prefix: string;
  /** Loops in a step above which it reads the whole table (AGENTLEDGER_ROLLUP_SCAN_LOOPS). */
  readonly scanLoops: number;
  readonly log: Logger;
  /**
   * Aborted when the work must stop (a worker told to stop): a recompute
   * stops at its next step boundary, its committed hours kept, and throws;
   * the next sweep redoes the rest.
   */
  readonly signal?: AbortSignal;
  /** Points where tests hold a recompute (to make two overlap); none in production. */
  readonly hooks?: RollupHooks;
  /**
   * How the reads of other workers' bookkeeping (the claims of a version,
   * the watermarks) are sent: on a cluster to every replica
   * (src/clickhouse/replicas.ts), so a claim another worker's insert
   * had answered is seen whichever replica took it. Default: as written.
   */
  readonly state?: StateSql;
}

export interface RollupHooks {
  /** The version is taken from the counter, not yet claimed. */
  readonly taken?: (version: bigint) => Promise<void>;
  /** A step's rows are written, its hours not yet committed. */
  readonly beforeCommit?: (version: bigint, hours: readonly number[]) => Promise<void>;
  /** A step's hours are committed (or left to a higher version). */
  readonly afterCommit?: (version: bigint, hours: readonly number[]) => Promise<void>;
}
