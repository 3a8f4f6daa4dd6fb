/** `agentledger worker`: the rollup sweeps and compaction, and how it stops. */
import { positiveInt, service, setting } from './setting.js';
export const worker = service({
    title: 'Rollups and the worker',
    vars: {
        AGENTLEDGER_ROLLUP_SWEEP_MS: setting(positiveInt(86_400_000).default(30_000), 'How often `agentledger worker` sweeps newly stored rows into the hour rollups, in ms (docs/spend.md "Rollups"). At most 86400000.'),
        AGENTLEDGER_ROLLUP_LATE_MS: setting(positiveInt(86_400_000).default(900_000), `How far back before the last sweep's newest ingest stamp a sweep looks again,
       in ms: covers inserts that become visible late and consumers whose clocks lag.
       Default 15 minutes, the clock agreement ingest's fence assumes. At most 86400000;
       on a cluster at least 120000, twice the replica delay the worker's reads prefer to stay under (docs/topology.md).`),
        AGENTLEDGER_ROLLUP_COMPACT_MS: setting(positiveInt(7 * 86_400_000).default(3_600_000), `How often \`agentledger worker\` drops the rollup versions and kept chain
       flags later commits made obsolete (ClickHouse mutations, with the
       migrator's rights), in ms. At most 604800000 (7 days).`),
        AGENTLEDGER_ROLLUP_SCAN_LOOPS: setting(positiveInt(100_000_000).default(4000), `Loops in a recompute step above which the step reads the whole envelopes table
       once instead of once per chunk of loops (a rebuild, a first sweep).`),
        AGENTLEDGER_WORKER_GRACE_MS: setting(positiveInt(600_000).default(10_000), `How long a stopping \`agentledger worker\` (SIGTERM, SIGINT) waits for its jobs
       in hand, in ms: each stops at its next step (a rollup step, a chunk of alert
       loops) and is handed back to the queue for the next worker; one that has not
       stopped by then is left to lapse (another worker takes it over within about
       10 s). At most 600000.`),
    },
    config: (e) => ({
        rollups: { sweepMs: e.AGENTLEDGER_ROLLUP_SWEEP_MS, lateMs: e.AGENTLEDGER_ROLLUP_LATE_MS, compactMs: e.AGENTLEDGER_ROLLUP_COMPACT_MS, scanLoops: e.AGENTLEDGER_ROLLUP_SCAN_LOOPS },
        /** How long a stopping worker waits for its jobs in hand, in ms. */
        workerGraceMs: e.AGENTLEDGER_WORKER_GRACE_MS,
    }),
});
//# sourceMappingURL=worker.js.map