/**
 * Every read a dashboard makes, runnable under chosen ClickHouse settings and
 * measured (issue 40 item 7): each Grafana panel's query
 * (infra/grafana/dashboards/agentledger.json, macros expanded as the plugin
 * does) and each page endpoint (src/serve/endpoints.ts, called as `serve`
 * calls it, with the parameters the page sends). The reads go through a
 * client whose every query carries the settings given (a lowered
 * max_memory_usage; log_queries=1) and an application name of its own, so
 * that their peak memory can be read back from system.query_log.
 * Used by test/integration/dashboard-memory.test.ts and bench/rollups.ts.
 */
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import type { ClickHouseSettings } from '../../src/clickhouse/client.js';
import { clickhouseClientOptions } from '../../src/clickhouse/client.js';
import { pageEndpoints } from '../../src/serve/endpoints.js';
import { panelQueries, readDashboard } from './grafana-dashboard.js';
import { expandMacros, type MacroContext } from './grafana-macros.js';

export interface DashboardRead {
  /** `panel <id> "<title>" <refId>` or `page /api/<endpoint>?<query>`. */
  readonly label: string;
  run(ch: ClickHouseClient): Promise<unknown>;
}

/** Every panel query, for this range (panels without a query, rows, left out). */
export function panelReads(range: MacroContext): DashboardRead[] {
  return panelQueries(readDashboard())
    .filter((q) => q.sql.trim() !== '')
    .map((q) => ({
      label: q.label,
      run: async (ch) => (await ch.query({ query: expandMacros(q.sql, range), format: 'JSONEachRow' })).json(),
    }));
}

/**
 * Every page endpoint with the parameters the page sends (docs/dashboards.md
 * "The page"): its defaults, a model filter where it takes one, the tree of
 * `root`. `nowMs` is the endpoints' clock (a loaded month lies in the past).
 */
export function pageReads(nowMs: number, root: string, model: string): DashboardRead[] {
  const requests: readonly [string, string][] = [
    ['overview', ''],
    ['overview', `model=${encodeURIComponent(model)}`],
    ['series', 'step=hour&by=model'],
    ['series', 'step=day&by=name'],
    ['roots', ''],
    ['roots', `model=${encodeURIComponent(model)}`],
    ['names', ''],
    ['tree', `root=${encodeURIComponent(root)}`],
    ['violations', ''],
    ['reconciliation', ''],
  ];
  return requests.map(([endpoint, query]) => ({
    label: `page /api/${endpoint}${query === '' ? '' : `?${query}`}`,
    run: async (ch) => {
      const handler = pageEndpoints(ch, () => nowMs)[endpoint];
      if (handler === undefined) throw new Error(`no page endpoint ${endpoint}`);
      return handler(new URLSearchParams(query));
    },
  }));
}

/** A client of these settings whose queries carry `settings` and identify as `application` in system.query_log. */
export function readerClient(settings: ClickHouseSettings, application: string, settingsOfReads: Record<string, string>): ClickHouseClient {
  return createClient({ ...clickhouseClientOptions(settings, settings.database, undefined, 600_000), application, clickhouse_settings: settingsOfReads });
}

export interface ReadCost {
  /** The peak memory of the read's largest query, bytes (system.query_log memory_usage). */
  readonly peakBytes: number;
  /** Its queries' summed duration, ms (the page's endpoints make several). */
  readonly ms: number;
  readonly queries: number;
}

/**
 * What the queries of `application` cost, from system.query_log (flushed
 * first; type 2 is QueryFinish, a UInt8 on 18.16, an Enum8 since): logged
 * only when they ran with log_queries=1. `admin` must be a
 * user that may flush the logs.
 */
export async function readCost(admin: ClickHouseClient, application: string): Promise<ReadCost> {
  // A query that has just answered may reach the log after the flush: flushed again, a few times.
  for (let attempt = 1; ; attempt++) {
    await admin.command({ query: 'SYSTEM FLUSH LOGS' });
    const rs = await admin.query({
      query: `SELECT toString(max(memory_usage)) AS peak, toString(sum(query_duration_ms)) AS ms, toString(count()) AS n
              FROM system.query_log
              WHERE type = 2 AND event_date >= yesterday() AND position(http_user_agent, '${application.replace(/[^A-Za-z0-9_.-]/g, '')}') > 0`,
      format: 'JSONEachRow',
    });
    const [row] = await rs.json<{ peak: string; ms: string; n: string }>();
    const cost = { peakBytes: Number(row?.peak ?? 0), ms: Number(row?.ms ?? 0), queries: Number(row?.n ?? 0) };
    if (cost.queries > 0 || attempt >= 5) return cost;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
