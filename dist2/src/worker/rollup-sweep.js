import { SWEEP_SCHEDULER, sweepPayload } from '../jobs/queues.js';
import { pruneChainFlags } from '../rollups/chain.js';
import { compact, pruneSweepRecords, sweep } from '../rollups/rollups.js';
export function rollupSweepProcessor(ctx, deps) {
    const { log, signal } = ctx;
    const sweepDeps = { ch: deps.ch, redis: deps.redis, prefix: deps.prefix, log, scanLoops: deps.scanLoops, signal, state: deps.state };
    let compacted = 0;
    return async (job, token) => {
        sweepPayload.parse(job.data);
        const started = Date.now();
        let r;
        try {
            r = await ctx.measured(SWEEP_SCHEDULER, () => sweep(sweepDeps, deps.lateMs));
        }
        catch (err) {
            if (signal.aborted)
                return ctx.handBack(job, token, SWEEP_SCHEDULER);
            throw err;
        }
        if (r.skipped) {
            log.info('rollup sweep skipped: another sweep holds the lease', { ms: Date.now() - started });
            return { skipped: true };
        }
        log.info('rollup sweep done', { version: r.version.toString(), hours: r.hours, treeChanges: r.treeChanges, ms: Date.now() - started });
        if (deps.admin && Date.now() - compacted >= deps.compactMs && !signal.aborted) {
            compacted = Date.now();
            log.info('obsolete rollup versions dropped', { hours: await compact(deps.ch, deps.admin) });
            log.info('old sweep records dropped', await pruneSweepRecords(deps.ch, deps.admin, Date.now()));
            log.info('obsolete chain flags dropped', { loops: await pruneChainFlags(deps.ch, deps.admin) });
        }
        return { version: r.version.toString(), hours: r.hours };
    };
}
//# sourceMappingURL=rollup-sweep.js.map