import { DATETIME_MAX_SECONDS } from '../decode/time.js';
import { createRedis, probeRedis } from '../jobs/redis.js';
import { pruneChainFlags } from '../rollups/chain.js';
import { compact, compactor } from '../rollups/compact.js';
import type { RollupDeps } from '../rollups/deps.js';
import { rebuild, sweep } from '../rollups/rollups.js';
import { createClickHouse } from '../clickhouse/client.js';
import { clusterTarget } from '../clickhouse/cluster.js';
import { stateSqlFor } from '../clickhouse/replicas.js';
import { migratorSettings } from '../config/index.js';
import type { Command } from './command.js';
import { parseOptions, UsageError } from './command.js';

/** A UTC day `YYYY-MM-DD` as Unix seconds of its start. */
function dayStart(option: string, text: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : NaN;
  if (!Number.isFinite(ms)) throw new UsageError(`--${option} ${JSON.stringify(text)}: expected a UTC day, YYYY-MM-DD`);
  return ms / 1000;
}

export const rollupsCommand: Command = {
  name: 'rollups',
  summary: 'rebuild the hour rollups from the raw tables, run one sweep, or compact them',
  help: `Usage: agentledger rollups rebuild [--from DAY] [--to DAY]
       agentledger rollups sweep
       agentledger rollups compact

The hour rollups (tables spend_rollup_hour, spend_rollup_model_hour,
spend_rollup_root_hour and event_rollup_hour, and the views over them;
docs/spend.md "Rollups") are kept by \`agentledger worker\`. These commands do the
same work by hand:

  rebuild   recompute every hour from DAY --from (default: the first stored)
            through DAY --to (default: the last), UTC days, inclusive, from
            the deduplicated raw rows. The loop tree is refolded first; a loop
            whose root or name was wrong has all its hours recomputed. Safe
            while ingest and workers run: each hour is replaced whole, under
            a newer version, when its rows are written. Every loop's ledger
            and summary (what \`loops\` reads) is recomputed whatever the
            range. Without --from and --to it counts as a sweep of every
            stored row: the next sweep starts from it.
  sweep     one sweep, as the worker runs it: the hours touched by rows
            stored since the last sweep. One sweep runs at a time (a lease
            in Redis): while a worker's runs, this one does nothing.
  compact   drop the rollup rows and commits below their hour's highest
            committed version, and the kept chain flags below their loop's
            (never read again), as the worker does every
            AGENTLEDGER_ROLLUP_COMPACT_MS. ClickHouse mutations: needs the
            migrator's rights (AGENTLEDGER_CLICKHOUSE_MIGRATOR_*).

Needs ClickHouse and Redis (the version counter).`,
  async run(args, { config, log, out }) {
    const { values, positionals } = parseOptions(args, { from: { type: 'string' }, to: { type: 'string' } }, true);
    const [action, ...extra] = positionals;
    if ((action !== 'rebuild' && action !== 'sweep' && action !== 'compact') || extra.length > 0) {
      throw new UsageError('expected `rollups rebuild [--from DAY] [--to DAY]`, `rollups sweep` or `rollups compact`');
    }
    if (action !== 'rebuild' && (values.from !== undefined || values.to !== undefined)) throw new UsageError('--from and --to are for rebuild');
    const from = values.from === undefined ? 0 : dayStart('from', values.from);
    // Without --to: past the last second a DateTime holds (times beyond are stored clamped to it).
    const until = values.to === undefined ? DATETIME_MAX_SECONDS + 1 : dayStart('to', values.to) + 86_400;
    const everything = values.from === undefined && values.to === undefined;
    if (until <= from) throw new UsageError('--to is before --from');
    await probeRedis(config.redis.url);
    // Its reads prefer a replica that is not far behind (client.ts).
    const ch = createClickHouse({ ...config.clickhouse, freshReplicas: true });
    const adminClient = createClickHouse(migratorSettings(config.clickhouse));
    const redis = createRedis(config.redis.url);
    redis.on('error', () => undefined); // the command's own calls fail and say why
    try {
      // On a cluster its reads of the other workers' claims go to every replica, as the worker's do.
      const deps: RollupDeps = { ch, redis, prefix: config.redis.queuePrefix, log, scanLoops: config.rollups.scanLoops, state: await stateSqlFor(ch, config.clickhouse) };
      const started = Date.now();
      if (action === 'compact') {
        const admin = await compactor(adminClient, clusterTarget(config.clickhouse), log);
        if (!admin) return 1;
        const hours = await compact(ch, admin);
        const loops = await pruneChainFlags(ch, admin);
        out(`compact: obsolete versions of ${hours} hour(s) and the old chain flags of ${loops} loop(s) dropped (mutations run in the background) in ${Date.now() - started} ms`);
        return 0;
      }
      const r =
        action === 'sweep'
          ? await sweep(deps, config.rollups.lateMs)
          : await rebuild(deps, { from, until, everything, lateMs: config.rollups.lateMs }, (done, total) => process.stderr.write(`rollups: ${done}/${total} hours\n`));
      if (r.skipped) {
        out('sweep: another sweep is running (its lease is held): nothing done');
        return 0;
      }
      out(`${action}: ${r.hours} hour(s) recomputed under version ${r.version} (${r.treeChanges} loop(s) moved in the tree) in ${Date.now() - started} ms`);
      return 0;
    } finally {
      redis.disconnect();
      await adminClient.close();
      await ch.close();
    }
  },
};
