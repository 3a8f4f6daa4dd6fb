/**
 * The recompute of whole rollup hours (migrations 0013, 0015) and of the
 * loops' reconciliation ledgers under a claimed version: each step's rows
 * written from deduplicated rows, then its hours committed, so a recompute
 * killed between steps keeps what it committed and leaves no half hour.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { inListChunks } from '../clickhouse/sql.js';
import { queryRows } from './queries.js';
import { RollupStopped, type Claim } from './claim.js';
import type { RollupDeps } from './deps.js';
import { exec, execEveryLoop } from './statements.js';

/** The tables a recompute writes under its version (0013, 0015), committed together per hour. */
export const ROLLUP_TABLES = ['spend_rollup_hour', 'spend_rollup_model_hour', 'spend_rollup_root_hour', 'event_rollup_hour'] as const;

/** Hours per recompute step: each step's hours are committed when its rows are written. */
export const HOURS_PER_STEP = 24;
/** loop_ids appears three times in rollup_insert_runtime.sql; max_query_size is 262,144 bytes. */
const LOOP_LIST_BYTES = 60_000;

const rows = queryRows;

export const hoursOf = (list: readonly { h: number | string }[]): number[] => list.map((r) => Number(r.h));

/** The hours in which these loops made model calls. */
export async function hoursOfLoops(ch: ClickHouseClient, loops: readonly string[]): Promise<number[]> {
  const hours: number[] = [];
  for (const chunk of inListChunks(loops)) hours.push(...hoursOf(await rows<{ h: number }>(ch, 'rollup_loop_hours', { loop_ids: chunk })));
  return hours;
}

/**
 * Recomputes `hours` under `version`, `stepHours` at a time: each step writes
 * its hours' rows, then commits them. Runtime rows are read per chunk of the
 * step's loops (the primary key finds them) or, for a step with many loops
 * (a rebuild, a first sweep), in one read of the whole table.
 */
export async function recompute(deps: RollupDeps, hours: readonly number[], claim: Claim, stepHours: number, progress?: (done: number, total: number) => void): Promise<void> {
  const { ch, signal } = deps;
  const { version } = claim;
  const sorted = [...new Set(hours)].sort((a, b) => a - b);
  for (let i = 0; i < sorted.length; i += stepHours) {
    const step = sorted.slice(i, i + stepHours);
    // A stop is taken here, between steps: what is committed stays committed.
    if (deps.signal?.aborted) throw new RollupStopped(`rollup recompute of version ${version} stopped after ${i} of ${sorted.length} hours: the worker is stopping`);
    const loops = (await rows<{ loop_id: string }>(ch, 'rollup_hour_loops', { hours: step })).map((r) => r.loop_id);
    if (loops.length > deps.scanLoops) {
      await execEveryLoop(ch, 'rollup_insert_runtime', { hours: step, version }, signal);
      await execEveryLoop(ch, 'rollup_insert_events', { hours: step, version }, signal);
    } else {
      for (const chunk of inListChunks(loops, LOOP_LIST_BYTES)) {
        await exec(ch, 'rollup_insert_runtime', { loop_ids: chunk, hours: step, version }, signal);
        await exec(ch, 'rollup_insert_events', { loop_ids: chunk, hours: step, version }, signal);
      }
    }
    await exec(ch, 'rollup_insert_craze', { hours: step, version }, signal);
    // The coarser tables from the step's own rows, once all are written.
    await exec(ch, 'rollup_insert_model_hour', { hours: step, version }, signal);
    await exec(ch, 'rollup_insert_root_hour', { hours: step, version }, signal);
    await deps.hooks?.beforeCommit?.(version, step);
    // Overtaken (lease lost, version claimed twice) or told to stop: nothing committed.
    await claim.check();
    await exec(ch, 'rollup_commit', { hours: step, version });
    await deps.hooks?.afterCommit?.(version, step);
    progress?.(Math.min(i + stepHours, sorted.length), sorted.length);
  }
}

/**
 * Recomputes the reconciliation rows (loop_ledgers, loop_child_reports) of
 * these loops, or of every loop, under `version`: per chunk of loops (the
 * primary key finds them) or, for many, in one read of the whole table.
 */
export async function recomputeLedgers(deps: RollupDeps, loops: readonly string[] | 'all', version: bigint): Promise<void> {
  const { ch, signal } = deps;
  if (loops === 'all' || loops.length > deps.scanLoops) {
    await execEveryLoop(ch, 'rollup_insert_ledgers', { version }, signal);
    await execEveryLoop(ch, 'rollup_insert_child_reports', { version }, signal);
    return;
  }
  for (const chunk of inListChunks(loops, LOOP_LIST_BYTES)) {
    await exec(ch, 'rollup_insert_ledgers', { loop_ids: chunk, version }, signal);
    await exec(ch, 'rollup_insert_child_reports', { loop_ids: chunk, version }, signal);
  }
}
