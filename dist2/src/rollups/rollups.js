/**
 * Hour rollups of counted spend and events (migrations 0013, 0015, docs/spend.md
 * "Rollups"): whole hours recomputed from deduplicated rows, each recompute
 * under a new version and committed per hour once its rows are written; and
 * each touched loop's reconciliation ledgers, under the same version. Two
 * entry points share every step:
 * - sweep(): the hours touched since the last finished sweep (new spend rows,
 *   a late ForkedFrom, a loop whose root or name changed), run by
 *   `agentledger worker` on a schedule and by `agentledger rollups sweep`;
 * - rebuild(): every hour of a range, by `agentledger rollups rebuild`.
 * Both are idempotent: run twice, killed at any step, run concurrently, the
 * committed rollups end equal to the live views (spend_by_hour).
 */
import { randomUUID } from 'node:crypto';
import { Lease } from '../jobs/lease.js';
import { foldLoopTree } from '../account/loop-tree.js';
import { mutationSql } from '../sink/clickhouse/cluster-ddl.js';
import { ONE_SERVER } from '../sink/clickhouse/replicas.js';
import { inListChunks, queryRows, querySql, renderSql } from '../sink/clickhouse/sql.js';
import { failureMessage } from '../observability/errors.js';
import { refreshLoopSummaries } from './loop-summaries.js';
import { refreshChainFlags } from './chain.js';
/**
 * A recompute that found itself overtaken: its version claimed by another
 * recompute too, or its sweep lease lost. It has dropped its work (nothing
 * more written or committed under its version); the next sweep redoes it.
 */
export class RollupOvertaken extends Error {
    name = 'RollupOvertaken';
    retriable = true;
}
/** A recompute stopped at a step boundary because its signal was aborted. */
export class RollupStopped extends Error {
    name = 'RollupStopped';
    retriable = true;
}
/** Runs the mutation `name` (a query file) as `admin`. */
export async function mutate(admin, name, params) {
    await admin.ch.command({ query: mutationSql(renderSql(querySql(name), params), admin.cluster) });
}
/**
 * The admin if it may drop obsolete versions (a mutation that matches
 * nothing is tried), else undefined, said once: the rollups stay exact
 * without it, they only keep their old versions.
 */
export async function compactor(ch, cluster, log) {
    const admin = { ch, cluster };
    try {
        await mutate(admin, 'rollup_compact_rows', { rollup_table: ROLLUP_TABLES[0], hours: [0], tops: [0] });
        return admin;
    }
    catch (err) {
        log.warn('old rollup versions are kept: the migrator user cannot drop them (set AGENTLEDGER_CLICKHOUSE_MIGRATOR_*)', {
            error: failureMessage(err),
        });
        return undefined;
    }
}
/** The tables a recompute writes under its version (0013, 0015), committed together per hour. */
export const ROLLUP_TABLES = ['spend_rollup_hour', 'spend_rollup_model_hour', 'spend_rollup_root_hour', 'event_rollup_hour'];
/** Hours per recompute step: each step's hours are committed when its rows are written. */
const HOURS_PER_STEP = 24;
/** loop_ids appears three times in rollup_insert_runtime.sql; max_query_size is 262,144 bytes. */
const LOOP_LIST_BYTES = 60_000;
const rows = queryRows;
async function exec(ch, name, params, signal) {
    await ch.command({ query: renderSql(querySql(name), params), ...(signal ? { abort_signal: signal } : {}) });
}
/**
 * A per-loop query (`loop_id IN {loop_ids:Array(String)}` in each of its
 * WHERE clauses) for every loop: those conditions dropped, so a step with
 * many loops reads the table once. The text is derived, not a second file:
 * 18.16 does not fold a constant `OR` before index analysis, so one text with
 * an "all loops" switch would lose the primary key for the per-loop read.
 */
export function everyLoopSql(name) {
    const text = querySql(name)
        .replace(/WHERE loop_id IN \{loop_ids:Array\(String\)\}\s+AND\s+/g, 'WHERE ')
        .replace(/\s+WHERE loop_id IN \{loop_ids:Array\(String\)\}(?=\s*\))/g, '');
    if (text.includes('{loop_ids:'))
        throw new Error(`${name}.sql: a loop_ids condition that everyLoopSql cannot drop`);
    return text;
}
async function execEveryLoop(ch, name, params, signal) {
    await ch.command({ query: renderSql(everyLoopSql(name), params), ...(signal ? { abort_signal: signal } : {}) });
}
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
async function nextVersion(deps, floor) {
    const v = await deps.redis.eval(NEXT_VERSION, 1, `${deps.prefix}:rollups:version`, floor.toString());
    return BigInt(v);
}
/**
 * Takes a version and claims it in ClickHouse (0018) before anything is
 * written under it: the counter can hand a number out twice (a Redis that
 * lost its last writes counts on from what ClickHouse holds, and a
 * recompute in flight has committed nothing yet), the claim table cannot
 * let two recomputes both go on with one: the later claimant sees the
 * earlier one's row when it reads the claimants back, and gives up.
 */
async function claimVersion(deps, floor, lease) {
    const { ch } = deps;
    const version = await nextVersion(deps, floor);
    await deps.hooks?.taken?.(version);
    const claimant = randomUUID();
    await exec(ch, 'rollup_claim', { version, claimant });
    const check = async () => {
        if (deps.signal?.aborted)
            throw new RollupStopped(`rollup recompute of version ${version} stopped: the worker is stopping`);
        await lease?.check().catch((err) => {
            throw new RollupOvertaken(`rollup recompute of version ${version} dropped: ${failureMessage(err)}`);
        });
        const others = (await rows(ch, 'rollup_claimants', { version }, deps.state)).filter((r) => r.claimant !== claimant);
        if (others.length > 0)
            throw new RollupOvertaken(`rollup version ${version} is claimed by another recompute too (the Redis counter handed it out twice): this one dropped its work`);
    };
    await check();
    return { version, check };
}
/** How long a sweep's lease lasts without renewal (renewed every third of it while the sweep runs). */
export const SWEEP_LEASE_MS = 10_000;
const sweepLeaseKey = (prefix) => `${prefix}:rollups:sweep-lease`;
/** Reads the watermarks: what a worker checks at start (the tables exist, the user may read them). */
export async function watermarks(ch, state = ONE_SERVER) {
    const [w] = await rows(ch, 'rollup_watermarks', {}, state);
    return { sweptThrough: Number(w?.swept_through ?? 0), sweptVersion: BigInt(w?.swept_version ?? 0), storedThrough: Number(w?.stored_through ?? 0), topVersion: BigInt(w?.top_version ?? 0) };
}
const hoursOf = (list) => list.map((r) => Number(r.h));
/** A loop's ancestors, its root first and its parent last (empty for a root), as the fold placed it. */
function ancestorsOf(loopId, places, spawnedBy) {
    const root = places.get(loopId)?.rootLoopId ?? loopId;
    const line = [];
    const seen = new Set([loopId]);
    let cur = loopId;
    while (cur !== root) {
        const parent = places.get(cur)?.parentLoopId ?? spawnedBy.get(cur) ?? '';
        // A cycle closes where the fold stopped it: the root is on it.
        if (parent === '' || seen.has(parent))
            break;
        seen.add(parent);
        line.push(parent);
        cur = parent;
    }
    return line.reverse();
}
/**
 * Folds the loop tree and writes to loop_roots, under `version`, the loops
 * whose place (parent, ancestors, root) or name differs from what it holds.
 * Returns the loops whose root or name changed: their rollup rows moved.
 */
async function refreshRoots(deps, version) {
    const { ch } = deps;
    const started = await rows(ch, 'loop_tree_links');
    const spawns = await rows(ch, 'loop_tree_spawns');
    const spawnedBy = new Map(spawns.map((s) => [s.child, s.spawned_by]));
    const names = new Map(started.map((s) => [s.loop_id, s.name]));
    const facts = started.map((s) => ({ loopId: s.loop_id, startedParent: s.started_parent, startedDepth: undefined, modelCostPico: 0n }));
    for (const child of spawnedBy.keys()) {
        if (!names.has(child))
            facts.push({ loopId: child, startedParent: '', startedDepth: undefined, modelCostPico: 0n });
    }
    const places = foldLoopTree(facts, spawnedBy);
    const held = new Map();
    for (const r of await rows(ch, 'loop_roots_current')) {
        held.set(r.loop_id, { root: r.root_loop_id, name: r.loop_name, parent: r.parent_loop_id, ancestors: JSON.stringify(r.ancestors) });
    }
    const changed = [];
    const moved = [];
    for (const [loopId, place] of places) {
        const name = names.get(loopId) ?? '';
        const ancestors = ancestorsOf(loopId, places, spawnedBy);
        // A loop loop_roots does not hold is read as a root of its own with no name.
        const before = held.get(loopId) ?? { root: loopId, name: '', parent: '', ancestors: '[]' };
        if (before.root !== place.rootLoopId || before.name !== name)
            moved.push(loopId);
        if (before.root !== place.rootLoopId || before.name !== name || before.parent !== place.parentLoopId || before.ancestors !== JSON.stringify(ancestors)) {
            changed.push({ loop_id: loopId, root_loop_id: place.rootLoopId, loop_name: name, parent_loop_id: place.parentLoopId, ancestors, version: version.toString() });
        }
    }
    for (let i = 0; i < changed.length; i += 50_000) {
        await ch.insert({ table: 'loop_roots', values: changed.slice(i, i + 50_000), format: 'JSONEachRow' });
    }
    return moved;
}
/** The hours in which these loops made model calls. */
async function hoursOfLoops(ch, loops) {
    const hours = [];
    for (const chunk of inListChunks(loops))
        hours.push(...hoursOf(await rows(ch, 'rollup_loop_hours', { loop_ids: chunk })));
    return hours;
}
/**
 * Recomputes `hours` under `version`, `stepHours` at a time: each step writes
 * its hours' rows, then commits them. Runtime rows are read per chunk of the
 * step's loops (the primary key finds them) or, for a step with many loops
 * (a rebuild, a first sweep), in one read of the whole table.
 */
async function recompute(deps, hours, claim, stepHours, progress) {
    const { ch, signal } = deps;
    const { version } = claim;
    const sorted = [...new Set(hours)].sort((a, b) => a - b);
    for (let i = 0; i < sorted.length; i += stepHours) {
        const step = sorted.slice(i, i + stepHours);
        // A stop is taken here, between steps: what is committed stays committed.
        if (deps.signal?.aborted)
            throw new RollupStopped(`rollup recompute of version ${version} stopped after ${i} of ${sorted.length} hours: the worker is stopping`);
        const loops = (await rows(ch, 'rollup_hour_loops', { hours: step })).map((r) => r.loop_id);
        if (loops.length > deps.scanLoops) {
            await execEveryLoop(ch, 'rollup_insert_runtime', { hours: step, version }, signal);
            await execEveryLoop(ch, 'rollup_insert_events', { hours: step, version }, signal);
        }
        else {
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
async function recomputeLedgers(deps, loops, version) {
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
/**
 * One sweep: the hours touched by rows ingested since the last finished sweep
 * (less `lateMs`, for inserts seen late and clocks that lag), recomputed.
 * The first sweep of a database covers everything stored.
 */
export async function sweep(deps, lateMs) {
    // One sweep at a time across every worker and CLI: a BullMQ job handed
    // on while its first worker still runs it finds the lease taken.
    const lease = await Lease.acquire(deps.redis, sweepLeaseKey(deps.prefix), SWEEP_LEASE_MS);
    if (lease === undefined)
        return { version: 0n, hours: 0, treeChanges: 0, skipped: true };
    try {
        return await sweepLeased(deps, lateMs, lease);
    }
    finally {
        await lease.release();
    }
}
async function sweepLeased(deps, lateMs, lease) {
    const { ch } = deps;
    const marks = await watermarks(ch, deps.state);
    const claim = await claimVersion(deps, marks.topVersion, lease);
    const { version } = claim;
    const since = marks.sweptThrough === 0 ? 0 : Math.max(0, marks.sweptThrough - Math.ceil(lateMs / 1000));
    const hours = new Set(hoursOf(await rows(ch, 'rollup_hours_ingested', { since })));
    const [tree] = await rows(ch, 'rollup_tree_changes', { since });
    const changed = Number(tree?.n ?? 0) > 0 ? await refreshRoots(deps, version) : [];
    // The fold can take seconds on a big tree: a stop or a lost lease is taken here too.
    await claim.check();
    const forks = (await rows(ch, 'rollup_fork_loops', { since })).map((r) => r.loop_id);
    // Moved by a sweep that died before recomputing their hours (loop_roots already says so, so the fold sees no change).
    const unswept = (await rows(ch, 'rollup_roots_unswept', { since_version: marks.sweptVersion })).map((r) => r.loop_id);
    for (const h of await hoursOfLoops(ch, [...new Set([...changed, ...forks, ...unswept])]))
        hours.add(h);
    await recompute(deps, [...hours], claim, HOURS_PER_STEP);
    await recomputeLedgers(deps, (await rows(ch, 'rollup_ledger_loops', { since })).map((r) => r.loop_id), version);
    await refreshLoopSummaries(deps, claim, lateMs, marks.storedThrough);
    await refreshChainFlags(deps, claim, lateMs, marks.storedThrough);
    await claim.check();
    await exec(ch, 'rollup_sweep_done', { version, seen_through: marks.storedThrough, hours: hours.size });
    return { version, hours: hours.size, treeChanges: changed.length };
}
/**
 * Every hour in [from, until) (Unix seconds) recomputed from the raw tables,
 * after the loop tree is refolded whole; a loop whose root or name was wrong
 * has its hours recomputed too, inside the range or not. A rebuild of every
 * hour (`everything`) is a sweep of all stored rows and is recorded as one,
 * so the next sweep starts from it; a partial range is not.
 */
export async function rebuild(deps, range, progress) {
    const { from, until } = range;
    const { ch } = deps;
    const marks = await watermarks(ch, deps.state);
    // No lease: a rebuild may run for long beside the sweeps, under its own version.
    const claim = await claimVersion(deps, marks.topVersion, undefined);
    const { version } = claim;
    const changed = await refreshRoots(deps, version);
    const hours = new Set(hoursOf(await rows(ch, 'rollup_hours_between', { from, until })));
    for (const h of await hoursOfLoops(ch, changed))
        hours.add(h);
    // A week per step: one read of the table per week when loops are many.
    await recompute(deps, [...hours], claim, 7 * HOURS_PER_STEP, progress);
    // Ledgers and loop summaries are per loop, not per hour: every loop's, whatever the range.
    await recomputeLedgers(deps, 'all', version);
    // Chain flags too (0021), so a dropped partition or a row stored late is
    // seen; each recorded as its mark, with the margin readers take
    // (AGENTLEDGER_ROLLUP_LATE_MS).
    await refreshLoopSummaries(deps, claim, range.lateMs, marks.storedThrough, 'all');
    await refreshChainFlags(deps, claim, range.lateMs, marks.storedThrough, 'all');
    await claim.check();
    if (range.everything)
        await exec(ch, 'rollup_sweep_done', { version, seen_through: marks.storedThrough, hours: hours.size });
    return { version, hours: hours.size, treeChanges: changed.length };
}
/**
 * Drops every rollup row and commit below its hour's highest committed
 * version, in every rollup table: never read again. One mutation per table
 * per 2000 hours, so run it now and then (the worker: every AGENTLEDGER_ROLLUP_COMPACT_MS), not per sweep:
 * 18.16 runs mutations one after another. Returns the hours compacted.
 */
export async function compact(ch, admin) {
    const obsolete = await rows(ch, 'rollup_obsolete');
    for (let i = 0; i < obsolete.length; i += 2000) {
        const chunk = obsolete.slice(i, i + 2000);
        const params = { hours: chunk.map((r) => Number(r.h)), tops: chunk.map((r) => BigInt(r.top)) };
        for (const table of [...ROLLUP_TABLES, 'rollup_commits'])
            await mutate(admin, 'rollup_compact_rows', { ...params, rollup_table: table });
    }
    return obsolete.length;
}
/** How long the per-sweep records (rollup_sweeps, rollup_claims, alert_sweeps) are kept: a day of history for operators. */
export const SWEEP_RECORDS_KEPT_MS = 24 * 3600 * 1000;
/**
 * Drops the per-sweep records older than SWEEP_RECORDS_KEPT_MS before `now`
 * (ms) from rollup_sweeps, rollup_claims and alert_sweeps, each of which
 * gains a row per sweep (the alerts' with the rollups', as the one place
 * the worker holds the migrator's rights), keeping the rows recovery reads:
 * the highest sweep version and swept stamp, the highest claim, the newest
 * alert sweep. 18.16 has no TTL: mutations, one per table and only when it
 * has rows to drop, run with the compaction. Returns the rows dropped.
 */
export async function pruneSweepRecords(ch, admin, now) {
    const before = Math.floor((now - SWEEP_RECORDS_KEPT_MS) / 1000);
    const [t] = await rows(ch, 'sweep_records_tops', { before });
    const n = (k) => Number(t?.[k] ?? 0);
    const big = (k) => BigInt(t?.[k] ?? 0);
    const dropped = { sweeps: n('old_sweeps'), claims: n('old_claims'), alertSweeps: n('old_alert_sweeps') };
    if (dropped.sweeps > 0)
        await mutate(admin, 'rollup_sweeps_prune', { before, top_version: big('sweep_version'), top_through: n('sweep_through') });
    if (dropped.claims > 0)
        await mutate(admin, 'rollup_claims_prune', { before, top_version: big('claim_version') });
    if (dropped.alertSweeps > 0)
        await mutate(admin, 'alert_sweeps_prune', { before, top_through: n('alert_through') });
    return dropped;
}
//# sourceMappingURL=rollups.js.map