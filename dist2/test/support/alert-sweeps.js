/**
 * What the alert sweep tests share: loops that finished Stuck, ingested
 * through the real consumer, and the sweep's dependencies for a test context.
 */
import assert from 'node:assert/strict';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { migrate } from '../../src/sink/clickhouse/migrate.js';
import { chain } from './envelope-chain.js';
import { produceEnvelopes } from './envelope-topic.js';
import { runCli } from './processes.js';
const at = (ms) => new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z');
/** Migrates the context's database and ingests `loops`, each started 20 s ago and finished Stuck 10 s ago. */
export async function ingestStuckLoops(ctx, loops, log) {
    await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
    const t0 = Date.now();
    await produceEnvelopes(ctx, loops.flatMap((loop) => chain(loop, [
        [at(t0 - 20_000), 'LoopStarted', JSON.stringify({ name: loop })],
        [at(t0 - 10_000), 'LoopFinished', JSON.stringify({ outcome_kind: 'Stuck' })],
    ])));
    const ingest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '2000'], ctx.env);
    assert.equal(await ingest.exited, 0, ingest.stderr());
}
/** A sweep's dependencies in the context: its rules, an hour between reminders. */
export function sweepDeps(ctx, ch, redis, deliveries, log) {
    return { ch, redis, prefix: ctx.config.redis.queuePrefix, deliveries, rules: ctx.config.alerts.rules, renotifyMs: 3_600_000, lateMs: ctx.config.rollups.lateMs, log };
}
//# sourceMappingURL=alert-sweeps.js.map