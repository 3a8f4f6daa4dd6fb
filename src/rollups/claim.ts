/**
 * A rollup recompute's version (migration 0018): taken from one Redis counter
 * shared by every worker, then claimed in ClickHouse before anything is
 * written under it, and checked at every step boundary, so a recompute that
 * was overtaken (its version handed out twice, its sweep lease lost) or told
 * to stop drops its work before it commits anything more.
 */
import { randomUUID } from 'node:crypto';
import type { Lease } from '../jobs/lease.js';
import { failureMessage } from '../errors/errors.js';
import { queryRows } from './queries.js';
import type { RollupDeps } from './deps.js';
import { exec } from './statements.js';

/**
 * A recompute that found itself overtaken: its version claimed by another
 * recompute too, or its sweep lease lost. It has dropped its work (nothing
 * more written or committed under its version); the next sweep redoes it.
 */
export class RollupOvertaken extends Error {
  override readonly name = 'RollupOvertaken';
  readonly retriable = true;
}

/** A recompute stopped at a step boundary because its signal was aborted. */
export class RollupStopped extends Error {
  override readonly name = 'RollupStopped';
  readonly retriable = true;
}

const rows = queryRows;

/**
 * The next rollup version: one Redis counter shared by every worker, raised
 * first to the highest version ClickHouse holds (a Redis that lost its data
 * must not hand out versions readers would ignore). Taken before a recompute
 * reads anything, so a higher version always read later data.
 */
const NEXT_VERSION = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return redis.call('INCR', KEYS[1])`;

async function nextVersion(deps: RollupDeps, floor: bigint): Promise<bigint> {
  const v = await deps.redis.eval(NEXT_VERSION, 1, `${deps.prefix}:rollups:version`, floor.toString());
  return BigInt(v as number);
}

/**
 * A recompute's hold on its version, and on the sweep lease if it has one:
 * check() at every step boundary, before anything is committed.
 */
export interface Claim {
  readonly version: bigint;
  check(): Promise<void>;
}

/**
 * Takes a version and claims it in ClickHouse (0018) before anything is
 * written under it: the counter can hand a number out twice (a Redis that
 * lost its last writes counts on from what ClickHouse holds, and a
 * recompute in flight has committed nothing yet), the claim table cannot
 * let two recomputes both go on with one: the later claimant sees the
 * earlier one's row when it reads the claimants back, and gives up.
 */
export async function claimVersion(deps: RollupDeps, floor: bigint, lease: Lease | undefined): Promise<Claim> {
  const { ch } = deps;
  const version = await nextVersion(deps, floor);
  await deps.hooks?.taken?.(version);
  const claimant = randomUUID();
  await exec(ch, 'rollup_claim', { version, claimant });
  const check = async (): Promise<void> => {
    if (deps.signal?.aborted) throw new RollupStopped(`rollup recompute of version ${version} stopped: the worker is stopping`);
    await lease?.check().catch((err: unknown) => {
      throw new RollupOvertaken(`rollup recompute of version ${version} dropped: ${failureMessage(err)}`);
    });
    const others = (await rows<{ claimant: string }>(ch, 'rollup_claimants', { version }, deps.state)).filter((r) => r.claimant !== claimant);
    if (others.length > 0) throw new RollupOvertaken(`rollup version ${version} is claimed by another recompute too (the Redis counter handed it out twice): this one dropped its work`);
  };
  await check();
  return { version, check };
}
